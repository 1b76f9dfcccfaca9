"""The near-answer line's protocol (bench/near_answer.py) on hand-made held-out details."""

from __future__ import annotations

from bench.near_answer import choose_line, gain, movable, moved_details, nested_lines, tally


def _detail(expected: str, cosine: float | None, outcome: str = "UNKNOWN") -> dict:
    return {
        "expected_outcome": expected,
        "outcome": outcome,
        "outcome_correct": expected == outcome,
        "unsafe_pass": False,
        "near_answer_cosine": cosine,
    }


def test_only_emails_ending_unknown_with_a_near_answer_can_move():
    details = [
        _detail("OK_TO_DRAFT", 0.8),
        _detail("OK_TO_DRAFT", None),
        _detail("NEEDS_REVIEW", 0.7, outcome="NEEDS_REVIEW"),
    ]
    assert movable(details) == [(0.8, "OK_TO_DRAFT")]


def test_the_line_is_the_midpoint_of_the_best_gap_and_the_higher_gap_wins_a_tie():
    cases = [
        (0.90, "OK_TO_DRAFT"),
        (0.80, "UNKNOWN"),
        (0.70, "OK_TO_DRAFT"),
        (0.66, "NEEDS_REVIEW"),
        (0.60, "UNKNOWN"),
        (0.50, "OK_TO_DRAFT"),
        (0.40, "UNKNOWN"),
    ]
    assert gain(cases, 0.63) == 2 and gain(cases, None) == 0
    assert gain(cases, 0.45) == 2
    assert choose_line(cases) == 0.63
    assert choose_line([(0.7, "UNKNOWN"), (0.6, "ASK_CLARIFYING_QUESTION")]) is None
    assert choose_line([(0.7, "OK_TO_DRAFT")]) == 0.7


def test_moving_counts_an_answerable_email_out_of_unknown_and_a_review_as_correct():
    details = [
        _detail("OK_TO_DRAFT", 0.8),
        _detail("NEEDS_REVIEW", 0.7),
        _detail("UNKNOWN", 0.5),
        _detail("UNKNOWN", 0.9),
    ]
    before = tally(details)
    after = tally(moved_details(details, 0.6))
    assert before == {"correct": 2, "unsafe": 0, "answerable_unknown": 1, "cases": 4}
    assert after == {"correct": 2, "unsafe": 0, "answerable_unknown": 0, "cases": 4}
    assert moved_details(details, None) == details


def test_each_fold_is_moved_by_the_line_chosen_on_the_others():
    by_tenant = {
        "a": [_detail("OK_TO_DRAFT", 0.8), _detail("UNKNOWN", 0.5)],
        "b": [_detail("OK_TO_DRAFT", 0.75), _detail("UNKNOWN", 0.6)],
        "c": [_detail("UNKNOWN", 0.7), _detail("OK_TO_DRAFT", 0.72)],
    }
    result = nested_lines(by_tenant)
    assert result["chosen"] == {"a": 0.71, "b": 0.71, "c": 0.675}
    assert result["held_out"] == {
        "correct": 2,
        "unsafe": 0,
        "answerable_unknown": 0,
        "cases": 6,
    }
