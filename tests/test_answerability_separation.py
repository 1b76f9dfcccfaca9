"""The separation figures of the leave-one-operator-out report (`kb_eval/separation.py`)."""

from __future__ import annotations

import pytest

from kb_eval.cross_validation import format_cv_table
from kb_eval.separation import (
    answerable_auc,
    case_probability_pairs,
    separation,
    top_confidence_pairs,
)


def _detail(expected: str, top: float | None, case: float | None, relevant: int = 1) -> dict:
    return {
        "expected_outcome": expected,
        "confidence_top": top,
        "case_probability": case,
        "n_relevant": relevant,
    }


def test_auc_counts_pairs_of_answerable_over_unanswerable():
    details = [
        _detail("OK_TO_DRAFT", 0.9, 0.8),
        _detail("OK_TO_DRAFT", 0.5, 0.7),
        _detail("UNKNOWN", 0.6, 0.2, relevant=0),
        _detail("UNKNOWN", 0.1, 0.3, relevant=0),
        _detail("NEEDS_REVIEW", 0.0, 0.99),  # neither class: ignored
    ]
    # top confidence: (0.9 > 0.6, 0.9 > 0.1, 0.5 < 0.6, 0.5 > 0.1) = 3 of 4 pairs
    assert answerable_auc(details, "confidence_top") == pytest.approx(0.75)
    assert answerable_auc(details, "case_probability") == pytest.approx(1.0)


def test_a_case_without_evidence_counts_zero_and_one_class_gives_none():
    details = [_detail("OK_TO_DRAFT", None, 0.4), _detail("UNKNOWN", 0.2, None, relevant=0)]
    assert answerable_auc(details, "confidence_top") == pytest.approx(0.0)
    assert answerable_auc(details, "case_probability") == pytest.approx(1.0)
    assert answerable_auc(details[:1], "confidence_top") is None


def test_separation_reports_both_scores_with_their_counts():
    details = [_detail("OK_TO_DRAFT", 0.7, 0.9), _detail("UNKNOWN", 0.8, 0.1, relevant=0)]
    figures = separation(details)
    assert figures["auc_confidence_top"] == pytest.approx(0.0)
    assert figures["auc_case_probability"] == pytest.approx(1.0)
    assert (figures["auc_answerable"], figures["auc_unanswerable"]) == (1, 1)


def test_case_probability_pairs_are_labelled_by_relevant_items():
    details = [
        _detail("NEEDS_REVIEW", 0.5, 0.6, relevant=2),
        _detail("UNKNOWN", 0.5, 0.3, relevant=0),
        _detail("UNKNOWN", 0.5, None, relevant=0),
    ]
    assert case_probability_pairs(details) == [(0.6, True), (0.3, False)]


def test_the_table_prints_n_a_for_an_operator_without_unanswerable_cases():
    row = {key: 0 for key in (["cases", "unsafe_passes", "must_not_cite_violations"])}
    floats = [
        "outcome_accuracy",
        "recall_at_10",
        "answerable_unknown_rate",
        "best_chunk_quote_rate",
        "ece_chunks",
        "ece_top_chunk",
        "ece_top_chunk_floor",
        "ece_cases",
        "ece_chunk_probability",
        "ece_case_probability",
        "auc_case_probability",
    ]
    row.update(dict.fromkeys(floats, 0.5))
    row["auc_confidence_top"] = None
    table = format_cv_table({"per_operator": {"op-a": row}, "pooled": row})
    assert "| op-a |" in table and "n/a" in table and "0.500" in table


def test_top_confidence_pairs_count_a_case_without_evidence_as_zero():
    details = [
        _detail("OK_TO_DRAFT", 0.7, 0.9, relevant=1),
        _detail("UNKNOWN", None, 0.2, relevant=0),
    ]
    assert top_confidence_pairs(details) == [(0.7, True), (0.0, False)]
