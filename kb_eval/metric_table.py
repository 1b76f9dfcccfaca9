"""Plain-text metric tables for `kb eval` and `kb eval-beir`."""

from __future__ import annotations

import math
from collections.abc import Mapping

from kb_eval.gates import GATES, is_number
from kb_eval.metrics import METRIC_NAMES

DISPLAY_ORDER = (
    *METRIC_NAMES,
    "policy_citation_coverage",
    "unsupported_claim_rate",
    "invented_policy_incidents",
    "recall_at_100",
)


def _ordered_names(metrics: Mapping[str, object]) -> list[str]:
    known = [name for name in DISPLAY_ORDER if name in metrics]
    return known + sorted(name for name in metrics if name not in DISPLAY_ORDER)


def format_value(value: object) -> str:
    """Four decimals for floats, integers as they are, n/a for missing or NaN."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return f"{value:.4f}"
    return str(value)


def _target(name: str, value: object) -> tuple[str, str]:
    gate = GATES.get(name)
    if gate is None:
        return "", ""
    if not is_number(value):
        return gate.label, "n/a"
    return gate.label, "ok" if gate.passes(value) else "MISS"


def format_report(
    metrics: Mapping[str, object], *, title: str, support: Mapping[str, int] | None = None
) -> str:
    """A readable table of metrics (contract names first) with targets where the spec sets them."""
    header = ["metric", "value"] + (["n"] if support is not None else []) + ["target", "status"]
    rows = []
    for name in _ordered_names(metrics):
        value = metrics[name]
        target, status = _target(name, value)
        count = [str(support[name]) if name in support else ""] if support is not None else []
        rows.append([name, format_value(value), *count, target, status])
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    numeric = {"value", "n"}

    def line(cells: list[str]) -> str:
        padded = [
            cell.rjust(width) if header[i] in numeric else cell.ljust(width)
            for i, (cell, width) in enumerate(zip(cells, widths, strict=True))
        ]
        return "  ".join(padded).rstrip()

    rule = "  ".join("-" * width for width in widths)
    body = [line(header), rule, *(line(row) for row in rows)]
    if not rows:
        body.append("(no metrics)")
    return "\n".join([title, "=" * len(title), *body]) + "\n"
