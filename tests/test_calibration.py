"""Reliability table, ECE, outcome confusion, breakdowns by category and reason code, reports."""

from __future__ import annotations

import math
from typing import Any

import pytest

from kb_eval.calibration import (
    OUTCOME_ORDER,
    case_confidence_pairs,
    chunk_confidence_pairs,
    expected_calibration_error,
    outcome_confusion,
    outcome_pairs,
    recall_by_category,
    recall_by_reason_code,
    reliability_table,
    top_chunk_pairs,
)
from kb_eval.golden import GoldenCase
from kb_eval.metric_table import format_report
from kb_eval.metrics import METRIC_NAMES, CaseResult, EvidenceRef

PAIRS = [(0.05, True), (0.15, False), (0.15, True), (1.0, True), (0.3, False)]


def test_reliability_table_bins_by_hand() -> None:
    table = reliability_table(PAIRS, n_bins=10)
    assert list(table.columns) == ["bin_lower", "bin_upper", "count", "mean_confidence", "accuracy"]
    assert table["count"].tolist() == [1, 2, 0, 1, 0, 0, 0, 0, 0, 1]
    assert table["bin_lower"].tolist() == [i / 10 for i in range(10)]
    table = reliability_table([*PAIRS, (0.15, True)], n_bins=10)
    counts = table["count"].tolist()
    assert counts == [1, 3, 0, 1, 0, 0, 0, 0, 0, 1]
    assert table.loc[1, "mean_confidence"] == pytest.approx(0.15)
    assert table.loc[1, "accuracy"] == pytest.approx(2 / 3)
    assert table.loc[9, "bin_upper"] == 1.0 and table.loc[9, "accuracy"] == 1.0
    assert math.isnan(table.loc[2, "accuracy"])


def test_bin_edges_are_lower_inclusive() -> None:
    table = reliability_table([(0.7, True), (0.6999, False), (0.0, True)], n_bins=10)
    assert table["count"].tolist() == [1, 0, 0, 0, 0, 0, 1, 1, 0, 0]
    single = reliability_table([(0.0, True), (1.0, False)], n_bins=1)
    assert single["count"].tolist() == [2]


def test_expected_calibration_error_by_hand() -> None:
    # bins: 0.05 -> acc 1 (gap .95), 0.15 x2 -> acc .5 (gap .35), 0.3 -> acc 0 (gap .3), 1.0 ok.
    expected = (0.95 + 2 * 0.35 + 0.3 + 0.0) / 5
    assert expected_calibration_error(PAIRS) == pytest.approx(expected, abs=1e-12)
    assert expected_calibration_error([]) == 0.0
    assert expected_calibration_error([(0.8, True)] * 4 + [(0.8, False)]) == pytest.approx(0.0)


def test_confidence_outside_unit_interval_is_rejected() -> None:
    with pytest.raises(ValueError, match="outside"):
        reliability_table([(1.2, True)])
    with pytest.raises(ValueError, match="outside"):
        expected_calibration_error([(-0.1, False)])


def test_outcome_confusion_fixed_order() -> None:
    pairs = [
        ("NEEDS_REVIEW", "OK_TO_DRAFT"),
        ("NEEDS_REVIEW", "NEEDS_REVIEW"),
        ("UNKNOWN", "UNKNOWN"),
        ("UNKNOWN", "UNKNOWN"),
        ("OK_TO_DRAFT", "ASK_CLARIFYING_QUESTION"),
    ]
    frame = outcome_confusion(pairs)
    assert list(frame.index) == list(OUTCOME_ORDER) == list(frame.columns)
    assert frame.loc["NEEDS_REVIEW", "OK_TO_DRAFT"] == 1
    assert frame.loc["UNKNOWN", "UNKNOWN"] == 2
    assert frame.loc["OK_TO_DRAFT", "ASK_CLARIFYING_QUESTION"] == 1
    assert int(frame.to_numpy().sum()) == 5 and frame.to_numpy().trace() == 3
    assert int(outcome_confusion([]).to_numpy().sum()) == 0
    with pytest.raises(ValueError, match="unknown outcome 'MAYBE'"):
        outcome_confusion([("MAYBE", "UNKNOWN")])


def _case(case_id: str, relevant: list[tuple[str, str]], expected: str) -> GoldenCase:
    return GoldenCase.model_validate(
        {
            "case_id": case_id,
            "tenant_id": "alpine-treks",
            "email": "q",
            "relevant": [{"doc_version_id": v, "quote": q} for v, q in relevant],
            "expected_outcome": expected,
        }
    )


def _ref(version: str, text: str, category: str, score: float) -> EvidenceRef:
    return EvidenceRef(version, f"{version}-{text}", text, category, score, relevance=score / 2)


def _scenario() -> tuple[list[GoldenCase], list[CaseResult]]:
    cases = [
        _case("a", [("pol", "seven days"), ("faq", "bring boots")], "NEEDS_REVIEW"),
        _case("b", [("pol", "deposit")], "OK_TO_DRAFT"),
        _case("c", [("lost", "gone")], "UNKNOWN"),
        _case("d", [], "UNKNOWN"),
    ]
    results = [
        CaseResult(
            "a",
            "NEEDS_REVIEW",
            ["CONFLICT_DETECTED", "SENSITIVE_TOPIC"],
            {},
            [_ref("pol", "seven days", "structured_policy", 0.9), _ref("x", "noise", "faq", 0.4)],
            [_ref("faq", "bring boots", "faq", 0.3)],
            0.9,
        ),
        CaseResult(
            "b",
            "OK_TO_DRAFT",
            [],
            {},
            [_ref("pol", "the deposit", "structured_policy", 0.8)],
            [],
            0.8,
        ),
        CaseResult("c", "OK_TO_DRAFT", ["LOW_CONFIDENCE"], {}, [], [], None),
        CaseResult("d", "UNKNOWN", ["NO_EVIDENCE"], {}, [_ref("x", "n", "faq", 0.2)], [], 0.2),
    ]
    return cases, results


def test_outcome_and_confidence_pairs() -> None:
    cases, results = _scenario()
    assert outcome_pairs(cases, results) == [
        ("NEEDS_REVIEW", "NEEDS_REVIEW"),
        ("OK_TO_DRAFT", "OK_TO_DRAFT"),
        ("UNKNOWN", "OK_TO_DRAFT"),
        ("UNKNOWN", "UNKNOWN"),
    ]
    assert chunk_confidence_pairs(cases, results) == [(0.9, True), (0.4, False), (0.8, True)]
    by_probability = chunk_confidence_pairs(cases, results, score="relevance")
    assert by_probability == [(0.45, True), (0.2, False), (0.4, True)]
    assert case_confidence_pairs(cases, results) == [(0.9, True), (0.8, True), (0.2, True)]
    # One pair per labelled case with a pack: its most confident chunk.
    assert top_chunk_pairs(cases, results) == [(0.9, True), (0.8, True)]


def test_top_chunk_pairs_take_the_most_confident_chunk_not_the_first() -> None:
    cases = [_case("e", [("pol", "ten days")], "OK_TO_DRAFT")]
    results = [
        CaseResult(
            "e",
            "OK_TO_DRAFT",
            [],
            {},
            [_ref("faq", "noise", "faq", 0.3), _ref("pol", "within ten days", "terms_policy", 0.7)],
            [],
            0.7,
        )
    ]
    assert top_chunk_pairs(cases, results) == [(0.7, True)]


def test_recall_by_category_uses_mapping_then_returned_chunks() -> None:
    cases, results = _scenario()
    frame = recall_by_category(cases, results)
    rows = {row["category"]: row for row in frame.to_dict("records")}
    assert list(frame["category"]) == sorted(rows)
    assert rows["structured_policy"]["relevant_items"] == 2
    assert rows["structured_policy"]["recall_at_10"] == 1.0
    assert rows["faq"]["relevant_items"] == 1 and rows["faq"]["covered_at_10"] == 0
    assert rows["(unknown)"]["relevant_items"] == 1
    mapped = recall_by_category(cases, results, {"lost": "terms_policy", "faq": "packing_list"})
    assert set(mapped["category"]) == {"packing_list", "structured_policy", "terms_policy"}


def test_recall_by_reason_code() -> None:
    cases, results = _scenario()
    frame = recall_by_reason_code(cases, results)
    records = frame.to_dict("records")
    assert records == [
        {"reason_code": "(none)", "cases": 1, "recall_at_10": 1.0},
        {"reason_code": "CONFLICT_DETECTED", "cases": 1, "recall_at_10": 0.5},
        {"reason_code": "LOW_CONFIDENCE", "cases": 1, "recall_at_10": 0.0},
        {"reason_code": "SENSITIVE_TOPIC", "cases": 1, "recall_at_10": 0.5},
    ]


def _metrics(**changes: Any) -> dict[str, Any]:
    values: dict[str, Any] = dict.fromkeys(METRIC_NAMES, 0.5)
    values["must_not_cite_violations"] = 0
    values["unsafe_pass_rate"] = 0.0
    return values | changes


def test_report_orders_formats_and_checks_targets() -> None:
    metrics = _metrics(recall_at_10=0.85, zeta=1, alpha=None)
    text = format_report(dict(reversed(metrics.items())), title="Golden set: demo")
    lines = text.splitlines()
    assert lines[0] == "Golden set: demo" and lines[1] == "=" * len("Golden set: demo")
    names = [line.split()[0] for line in lines[4:]]
    assert names == [*METRIC_NAMES, "alpha", "zeta"]
    recall_line = next(line for line in lines if line.startswith("recall_at_10"))
    assert recall_line.split() == ["recall_at_10", "0.8500", ">=", "0.85", "ok"]
    assert next(line for line in lines if line.startswith("alpha")).split() == ["alpha", "n/a"]
    assert "must_not_cite_violations" in text and " 0  == 0" in text
    assert text == format_report(metrics, title="Golden set: demo")


def test_report_flags_misses_and_shows_support() -> None:
    metrics = _metrics(recall_at_10=0.8499, unsafe_pass_rate=0.25, must_not_cite_violations=2)
    support = {"recall_at_10": 12, "unsafe_pass_rate": 4}
    lines = format_report(metrics, title="t", support=support).splitlines()
    row = {line.split()[0]: line.split() for line in lines[4:]}
    assert row["recall_at_10"] == ["recall_at_10", "0.8499", "12", ">=", "0.85", "MISS"]
    assert row["unsafe_pass_rate"] == ["unsafe_pass_rate", "0.2500", "4", "==", "0", "MISS"]
    assert row["must_not_cite_violations"][-1] == "MISS"
    assert row["ndcg_at_10"] == ["ndcg_at_10", "0.5000"]
    assert "(no metrics)" in format_report({}, title="empty")
