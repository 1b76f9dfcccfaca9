"""Negation scope of policy words and bounds, units behind a modifier, ages in years (session 8
of the judge; fresh examples, not claim pairs of any data set)."""

from __future__ import annotations

import pytest

from kb_eval.judge.bounds import LOWER, UPPER, bounded
from kb_eval.judge.clauses import terms_of
from kb_eval.judge.modality import classes
from kb_eval.judge.quantities import extract_quantities, normalise_text
from kb_eval.judge.subject import subject_features, subject_terms


def _on(text: str) -> set[str]:
    return {name for name, on in classes(text).items() if on}


def _values(text: str) -> list[tuple[str, float, float | None, float | None]]:
    found = extract_quantities(normalise_text(text))[0]
    return [(q.kind, q.value, q.low, q.high) for q, _ in found]


@pytest.mark.parametrize(
    ("text", "present", "absent"),
    [
        ("The marina rules don't allow swimming off the pontoon.", {"forbid"}, set()),
        ("Dogs are allowed in the garden rooms.", {"permit"}, {"forbid"}),
        ("After the first of March you will not get your deposit back.", {"forfeit"}, {"refund"}),
        ("Late cancellations never receive a refund.", {"forfeit"}, {"refund"}),
        ("Ski hire is not included in the package.", {"charged"}, {"included"}),
        ("You will not be charged for the shuttle.", {"included"}, {"charged"}),
        ("Guests don't need to bring their own helmets.", {"advise"}, {"require"}),
        ("You won't lose the deposit if you move your dates.", {"refund"}, {"forfeit"}),
        ("Helmets are provided at no extra cost.", {"included"}, {"charged"}),
        ("The guided walk is 40 euros per person.", {"charged"}, {"included"}),
    ],
)
def test_a_negated_policy_word_is_in_the_other_class(
    text: str, present: set[str], absent: set[str]
) -> None:
    found = _on(text)
    assert present <= found
    assert not absent & found


def test_negation_scope_ends_at_a_clause_boundary() -> None:
    assert "permit" in _on("Not every cabin has a view, but you can ask for one.")
    assert "forbid" not in _on("There is no lift, so you can use the stairs.")


@pytest.mark.parametrize(
    ("text", "side"),
    [
        ("No wine is poured for diners under 16.", UPPER),
        ("Smoking is banned for passengers under 16 on deck.", UPPER),
        ("You must not swim within 2 hours of the meal.", LOWER),
        ("We never seat more than 10 guests at a table.", UPPER),
    ],
)
def test_a_bound_is_turned_only_by_a_verb_negation_near_it(text: str, side: str) -> None:
    assert [s for _, s in bounded(text)] == [side]


def test_a_range_with_a_modifier_before_its_unit() -> None:
    assert _values("The trail climbs 600 to 900 vertical metres.") == [
        ("length_m", 600.0, 600.0, 900.0),
        ("length_m", 900.0, 600.0, 900.0),
    ]
    assert _values("Stay two extra nights in the harbour.") == [("night", 2.0, None, None)]
    assert _values("Count on between 600 and 900 metres of climbing.")[0][2:] == (600.0, 900.0)


def test_years_after_a_person_are_an_age() -> None:
    assert _values("Kids from 9 years can join the workshop.") == [("count", 9.0, None, None)]
    assert _values("Riders aged nine and older are welcome.") == [("count", 9.0, None, None)]
    assert _values("Gift vouchers stay valid for 3 years.") == [
        ("duration_month", 36.0, None, None)
    ]


def test_the_subject_is_the_words_before_the_first_verb() -> None:
    assert subject_terms("Bike hire is charged by the hour.") == terms_of("bike hire")
    assert subject_terms("If it snows, the cable car does not run.") == terms_of("cable car")
    assert subject_terms("You can borrow a kayak.") == terms_of("you can borrow a kayak")


def test_an_opposed_class_counts_on_the_same_subject_only() -> None:
    clause = "Bike hire costs EUR 12 a day."
    same = subject_features("Bike hire is free for hotel guests.", clause, 1.0)
    other = subject_features("Kayaks are free for hotel guests.", clause, 1.0)
    assert same == [1.0, 1.0]
    assert other == [0.0, 0.0]
    assert subject_features("Bike hire is free for hotel guests.", clause, 0.0) == [1.0, 0.0]
