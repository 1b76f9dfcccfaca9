"""A tuned setting chosen per fold: leave one operator out with nothing chosen on the held-out one.

`kb eval GOLDEN... --cv tenant --nested FIELD=V1,V2,...` runs the protocol once per value of one
`RetrievalConfig` field (each run refits every fold as usual). For each held-out operator the
value is chosen on the *other* operators' held-out cases: among the values whose unsafe passes
there are no more than the first value's (the reference, usually "off"), the one with the most
correct outcomes; a tie goes to the value listed first. The held-out operator's figures are
those of the run with its fold's value, and the pooled figures pool them. So a weight picked by
looking at outcomes is measured the way the issue asks of every tuned number.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kb_eval.cross_validation import (
    CaseSet,
    HeldOut,
    clone_retriever,
    cv_report,
    protocol_config,
    run_folds,
)
from kb_retrieval.retrieval.config import RetrievalConfig
from kb_retrieval.retrieval.retriever import Retriever


def parse_nested(spec: str) -> tuple[str, tuple[float, ...]]:
    """`FIELD=V1,V2,...` for a numeric field of `RetrievalConfig`, two values at least."""
    field, sep, raw = spec.partition("=")
    field = field.strip()
    if not sep or not raw.strip():
        raise ValueError(
            f"--nested {spec!r}: expected FIELD=V1,V2,... (e.g. typed_answer_logit=0,1)"
        )
    info = RetrievalConfig.model_fields.get(field)
    if info is None or info.annotation not in (float, int):
        raise ValueError(f"--nested {spec!r}: {field!r} is not a numeric RetrievalConfig field")
    try:
        values = tuple(float(v) for v in raw.split(","))
    except ValueError as error:
        raise ValueError(f"--nested {spec!r}: the values must be numbers") from error
    if len(values) < 2 or len(set(values)) != len(values):
        raise ValueError(f"--nested {spec!r}: give at least two different values")
    return field, values


def _tally(folds: Mapping[str, HeldOut], tenants: Sequence[str]) -> tuple[int, int]:
    """(correct outcomes, unsafe passes) over the held-out cases of `tenants`."""
    details = [d for t in tenants for d in folds[t].details]
    return sum(d["outcome_correct"] for d in details), sum(d["unsafe_pass"] for d in details)


def choose_per_fold(runs: Mapping[float, Mapping[str, HeldOut]]) -> dict[str, float]:
    """For each operator, the value chosen on the other operators (rule of the module doc);
    `runs` lists the values in the caller's order, the first one the reference."""
    values = list(runs)
    tenants = sorted(runs[values[0]])
    chosen = {}
    for tenant in tenants:
        others = [t for t in tenants if t != tenant]
        limit = _tally(runs[values[0]], others)[1]
        allowed = [v for v in values if _tally(runs[v], others)[1] <= limit]
        chosen[tenant] = max(allowed, key=lambda v: (_tally(runs[v], others)[0], -values.index(v)))
    return chosen


def nested_cross_validation(
    retriever: Retriever,
    sets: Sequence[CaseSet],
    field: str,
    values: Sequence[float],
    *,
    refit: bool = True,
) -> dict[str, Any]:
    """The `kb eval --cv tenant` report with `field` chosen per fold among `values`, plus
    `nested`: the field, the values, the value each fold chose, and each value's pooled figures
    when used for every operator."""
    runs: dict[float, dict[str, HeldOut]] = {}
    rows = 0
    for value in values:
        config = retriever.config.model_copy(update={field: value})
        runs[value], rows = run_folds(clone_retriever(retriever, config), sets, refit=refit)
    chosen = choose_per_fold(runs)
    folds = {tenant: runs[value][tenant] for tenant, value in chosen.items()}
    by_value = {}
    for value, value_folds in runs.items():
        correct, unsafe = _tally(value_folds, sorted(value_folds))
        cases = sum(len(held.details) for held in value_folds.values())
        by_value[str(value)] = {
            "outcome_accuracy": correct / cases if cases else 0.0,
            "unsafe_passes": unsafe,
        }
    report = cv_report(
        sets,
        folds,
        config_version=protocol_config(retriever).config_version,
        training_rows=rows,
        refit=refit,
    )
    report["nested"] = {
        "field": field,
        "values": list(values),
        "reference": values[0],
        "chosen": chosen,
        "by_value": by_value,
    }
    return report
