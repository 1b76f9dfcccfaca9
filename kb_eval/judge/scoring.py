"""Scoring a judge's labels against labelled pairs: accuracy, per label and split, confusion."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

LABELS = ("supported", "contradicted", "unrelated")
Pair = dict[str, object]


def operator_split(pairs: Sequence[dict[str, object]]) -> dict[str, str]:
    """Development or held-out half per pair: a pair's own "split" field when it has one; else
    its operators (tenant_id) sorted by SHA-256 of the name, the first half "dev" and the rest
    "holdout" (deterministic, not chosen by looking at the pairs)."""
    tenants = sorted(
        {str(p["tenant_id"]) for p in pairs if "tenant_id" in p},
        key=lambda name: hashlib.sha256(name.encode("utf-8")).hexdigest(),
    )
    dev = set(tenants[: len(tenants) // 2])
    split: dict[str, str] = {}
    for pair in pairs:
        if "split" in pair:
            split[str(pair["pair_id"])] = str(pair["split"])
        elif "tenant_id" in pair:
            split[str(pair["pair_id"])] = "dev" if str(pair["tenant_id"]) in dev else "holdout"
        else:
            split[str(pair["pair_id"])] = "all"
    return split


def expected_label(label: str) -> str:
    """The judge label a pair label calls for (number_changed is a kind of contradicted)."""
    return "contradicted" if label == "number_changed" else label


def report(pairs: Sequence[Pair], predicted: Sequence[str], reasons: Sequence[str]) -> Pair:
    """Accuracy overall, per label and per split, the confusion (pair label -> judged label) and
    how many unsupported pairs were judged supported."""
    split_of = operator_split(pairs)
    confusion: dict[str, dict[str, int]] = {}
    totals: dict[str, list[int]] = {}
    splits: dict[str, list[int]] = {}
    errors = []
    for pair, got, reason in zip(pairs, predicted, reasons, strict=True):
        label = str(pair["label"])
        ok = got == expected_label(label)
        confusion.setdefault(label, dict.fromkeys(LABELS, 0))[got] += 1
        for key, table in ((label, totals), (split_of[str(pair["pair_id"])], splits)):
            table.setdefault(key, [0, 0])
            table[key][0] += int(ok)
            table[key][1] += 1
        if not ok:
            errors.append(
                {"pair_id": str(pair["pair_id"]), "label": label, "got": got, "reason": reason}
            )
    count = len(predicted)
    correct = sum(c for c, _ in totals.values())
    unsupported = [row for label, row in confusion.items() if label != "supported"]
    n_unsupported = sum(sum(row.values()) for row in unsupported)
    judged_supported = sum(row["supported"] for row in unsupported)
    return {
        "n": count,
        "confusion": {k: confusion[k] for k in sorted(confusion)},
        "unsupported_judged_supported": judged_supported,
        "unsupported_judged_supported_rate": judged_supported / n_unsupported
        if n_unsupported
        else 0.0,
        "overall": correct / count if count else 0.0,
        "per_label": {k: c / n for k, (c, n) in sorted(totals.items())},
        "per_split": {k: c / n for k, (c, n) in sorted(splits.items())},
        "errors": errors,
    }
