"""Calibration and breakdown tables: reliability, ECE, outcome confusion, recall by group."""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from kb_eval.golden import GoldenCase
from kb_eval.metrics import PACK_SIZE, CaseResult, case_details, coverage_matrix, pair_results

OUTCOME_ORDER = ("OK_TO_DRAFT", "ASK_CLARIFYING_QUESTION", "NEEDS_REVIEW", "UNKNOWN")
NO_REASON = "(none)"
UNKNOWN_CATEGORY = "(unknown)"


def _bin_index(confidence: float, edges: Sequence[float]) -> int:
    return min(bisect_right(edges, confidence) - 1, len(edges) - 2)


def _checked(pairs: Iterable[tuple[float, bool]]) -> list[tuple[float, bool]]:
    checked = []
    for confidence, correct in pairs:
        value = float(confidence)
        if not 0.0 <= value <= 1.0:
            raise ValueError(f"confidence {confidence!r} is outside [0, 1]")
        checked.append((value, bool(correct)))
    return checked


def reliability_table(pairs: Iterable[tuple[float, bool]], n_bins: int = 10) -> pd.DataFrame:
    """Equal-width bins [lo, hi) over [0, 1] (the last includes 1.0), every bin listed.

    Columns: bin_lower, bin_upper, count, mean_confidence, accuracy (NaN for empty bins).
    """
    if n_bins < 1:
        raise ValueError("n_bins must be at least 1")
    edges = [i / n_bins for i in range(n_bins + 1)]
    members: list[list[tuple[float, bool]]] = [[] for _ in range(n_bins)]
    for confidence, correct in _checked(pairs):
        members[_bin_index(confidence, edges)].append((confidence, correct))
    rows = []
    for index, bucket in enumerate(members):
        count = len(bucket)
        rows.append(
            {
                "bin_lower": edges[index],
                "bin_upper": edges[index + 1],
                "count": count,
                "mean_confidence": math.fsum(c for c, _ in bucket) / count if count else math.nan,
                "accuracy": sum(1 for _, ok in bucket if ok) / count if count else math.nan,
            }
        )
    return pd.DataFrame(
        rows, columns=["bin_lower", "bin_upper", "count", "mean_confidence", "accuracy"]
    )


def expected_calibration_error(pairs: Iterable[tuple[float, bool]], n_bins: int = 10) -> float:
    """Sum over bins of count/N * |accuracy - mean confidence|; 0.0 for no pairs."""
    table = reliability_table(pairs, n_bins)
    total = int(table["count"].sum())
    if total == 0:
        return 0.0
    filled = table[table["count"] > 0]
    gaps = (filled["accuracy"] - filled["mean_confidence"]).abs() * filled["count"] / total
    return math.fsum(gaps.tolist())


def outcome_confusion(pairs: Iterable[tuple[str, str]]) -> pd.DataFrame:
    """4x4 counts, rows = expected outcome, columns = actual outcome, in OUTCOME_ORDER."""
    matrix = {expected: dict.fromkeys(OUTCOME_ORDER, 0) for expected in OUTCOME_ORDER}
    for expected, actual in pairs:
        expected_name, actual_name = str(expected), str(actual)
        for name in (expected_name, actual_name):
            if name not in OUTCOME_ORDER:
                raise ValueError(f"unknown outcome {name!r}")
        matrix[expected_name][actual_name] += 1
    frame = pd.DataFrame.from_dict(matrix, orient="index").loc[
        list(OUTCOME_ORDER), list(OUTCOME_ORDER)
    ]
    frame.index.name = "expected"
    frame.columns.name = "actual"
    return frame.astype("int64")


def outcome_pairs(
    cases: Sequence[GoldenCase], results: Sequence[CaseResult] | Mapping[str, CaseResult]
) -> list[tuple[str, str]]:
    """(expected, actual) outcome per case, in golden-set order."""
    return [(d["expected_outcome"], d["outcome"]) for d in case_details(cases, results)]


def chunk_confidence_pairs(
    cases: Sequence[GoldenCase],
    results: Sequence[CaseResult] | Mapping[str, CaseResult],
    score: str = "confidence_score",
) -> list[tuple[float, bool]]:
    """(score, covers a relevant item) for every pack chunk of cases with labels; `score` =
    "confidence_score" or "relevance" (the chunk model's calibrated probability)."""
    pairs: list[tuple[float, bool]] = []
    for case, result in pair_results(cases, results):
        pack = result.evidence[:PACK_SIZE] if case.relevant else []
        for ref, covered in zip(pack, coverage_matrix(case.relevant, pack), strict=True):
            pairs.append((float(getattr(ref, score)), bool(covered)))
    return pairs


def top_chunk_pairs(
    cases: Sequence[GoldenCase], results: Sequence[CaseResult] | Mapping[str, CaseResult]
) -> list[tuple[float, bool]]:
    """(confidence_score, covers a relevant item) of each labelled case's most confident pack
    chunk (the first of equals): the value the 0.65 / 0.72 thresholds are compared with."""
    pairs: list[tuple[float, bool]] = []
    for case, result in pair_results(cases, results):
        pack = result.evidence[:PACK_SIZE] if case.relevant else []
        if not pack:
            continue
        top = max(range(len(pack)), key=lambda i: (pack[i].confidence_score, -i))
        covered = coverage_matrix(case.relevant, [pack[top]])[0]
        pairs.append((float(pack[top].confidence_score), bool(covered)))
    return pairs


def case_confidence_pairs(
    cases: Sequence[GoldenCase], results: Sequence[CaseResult] | Mapping[str, CaseResult]
) -> list[tuple[float, bool]]:
    """(confidence_top, outcome correct) for every case whose result has a top confidence."""
    pairs = []
    for detail in case_details(cases, results):
        if detail["confidence_top"] is not None:
            pairs.append((float(detail["confidence_top"]), bool(detail["outcome_correct"])))
    return pairs


def recall_by_category(
    cases: Sequence[GoldenCase],
    results: Sequence[CaseResult] | Mapping[str, CaseResult],
    categories: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """Micro recall@10 of relevant items grouped by their version's category.

    The category comes from `categories` (doc_version_id -> category), else from any returned
    chunk (pack or candidates) of that version, else "(unknown)". Sorted by category.
    """
    totals: dict[str, list[int]] = {}
    for case, result in pair_results(cases, results):
        if not case.relevant:
            continue
        seen = {ref.doc_version_id: ref.category for ref in [*result.candidates, *result.evidence]}
        lookup = {**seen, **(categories or {})}
        pack = result.evidence[:PACK_SIZE]
        covered = set().union(*coverage_matrix(case.relevant, pack))
        for index, item in enumerate(case.relevant):
            bucket = totals.setdefault(lookup.get(item.doc_version_id, UNKNOWN_CATEGORY), [0, 0])
            bucket[0] += 1
            bucket[1] += int(index in covered)
    rows = [
        {"category": name, "relevant_items": n, "covered_at_10": hit, "recall_at_10": hit / n}
        for name, (n, hit) in sorted(totals.items())
    ]
    return pd.DataFrame(
        rows, columns=["category", "relevant_items", "covered_at_10", "recall_at_10"]
    )


def recall_by_reason_code(
    cases: Sequence[GoldenCase], results: Sequence[CaseResult] | Mapping[str, CaseResult]
) -> pd.DataFrame:
    """Mean per-case recall@10 of labelled cases grouped by each reason code they carry.

    A case counts once under every code it has, or under "(none)". Sorted by reason code.
    """
    groups: dict[str, list[float]] = {}
    for detail in case_details(cases, results):
        if detail["n_relevant"] == 0:
            continue
        for code in detail["reason_codes"] or [NO_REASON]:
            groups.setdefault(code, []).append(detail["recall_at_10"])
    rows = [
        {"reason_code": code, "cases": len(values), "recall_at_10": math.fsum(values) / len(values)}
        for code, values in sorted(groups.items())
    ]
    return pd.DataFrame(rows, columns=["reason_code", "cases", "recall_at_10"])


def ece_noise_floor(
    pairs: Iterable[tuple[float, bool]], n_bins: int = 10, draws: int = 200, seed: int = 0
) -> float:
    """The mean ECE of a perfectly calibrated predictor with these confidences: each label
    drawn as Bernoulli(confidence), `draws` times (seeded, so deterministic). An ECE near this
    value on few pairs is what sampling alone gives, not a calibration error."""
    confidences = np.array([c for c, _ in _checked(pairs)])
    if confidences.size == 0:
        return 0.0
    rng = np.random.default_rng(seed)
    values = [
        expected_calibration_error(
            zip(
                confidences.tolist(),
                (rng.random(confidences.size) < confidences).tolist(),
                strict=True,
            ),
            n_bins,
        )
        for _ in range(draws)
    ]
    return math.fsum(values) / draws
