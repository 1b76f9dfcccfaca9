"""Bounds, stated quantities, clause coverage, spoken times and the support vetoes of the judge
(fresh examples, not claim pairs of any data set)."""

from __future__ import annotations

import numpy as np
import pytest

from kb_eval.judge.bounds import LOWER, UPPER, bound_features, bounded
from kb_eval.judge.coverage import coverage_features
from kb_eval.judge.encoder import TextEncoder
from kb_eval.judge.features import FEATURE_NAMES
from kb_eval.judge.learned import LABELS, support_probability_gated
from kb_eval.judge.modality import classes
from kb_eval.judge.quantities import extract_quantities, normalise_text
from kb_retrieval.embedding import FakeHashEmbedder


def _values(text: str) -> list[tuple[str, float]]:
    return [(q.kind, q.value) for q, _ in extract_quantities(normalise_text(text))[0]]


@pytest.mark.parametrize(
    ("text", "side"),
    [
        ("Refunds are given for cancellations within 21 days of booking.", UPPER),
        ("Rooms sleep no more than 3 people.", UPPER),
        ("Cancel 45 days or more before the start for a full refund.", LOWER),
        ("Bookings made at least 45 days ahead pay a deposit.", LOWER),
        ("Changes are possible up to 14 days before the start.", LOWER),
        ("The ferry waits up to 20 minutes.", UPPER),
        ("You must not dive within 12 hours of the flight.", LOWER),
        ("Riders aged 10 and older can join.", LOWER),
        ("The outstanding amount must be paid 45 days before the start.", ""),
    ],
)
def test_bound_of_a_value(text: str, side: str) -> None:
    assert [s for _, s in bounded(text)] == [side]


def test_a_bound_turned_round_and_an_unstated_value() -> None:
    evidence = ["Date changes are free up to 30 days before the start; later changes cost EUR 80."]
    opposed, added, unstated, _ = bound_features(
        "Within 30 days of the start you can change dates for free.", evidence
    )
    assert (opposed, added, unstated) == (1.0, 0.0, 0.0)
    assert bound_features("Changes cost EUR 95.", evidence)[2] == 1.0
    same_side = bound_features("Up to 30 days before the start, date changes are free.", evidence)
    assert same_side == [0.0, 0.0, 0.0, 0.0]


def test_a_point_value_inside_a_stated_bound_is_stated() -> None:
    evidence = ["Guests who book within 40 days of the start pay in full at once."]
    assert (
        bound_features("If you book 25 days before the start you pay in full.", evidence)[2] == 0.0
    )
    assert (
        bound_features("If you book 55 days before the start you pay in full.", evidence)[2] == 1.0
    )


@pytest.mark.parametrize(
    ("spoken", "written"),
    [
        ("The bus leaves at half past eight in the morning.", "The bus leaves at 08:30."),
        ("Dinner is at seven in the evening.", "Dinner is at 19:00."),
        ("The boat departs at nine and returns by half past four.", "departs 09:00, returns 04:30"),
        ("Entry is four euros fifty.", "Entry is EUR 4.50."),
        ("Wait half an hour after eating.", "Wait 30 minutes after eating."),
        ("The supplement is three quarters of the price.", "The supplement is 75% of the price."),
    ],
)
def test_spoken_numbers_normalise_like_written_ones(spoken: str, written: str) -> None:
    assert _values(spoken) == _values(written)


def test_a_number_with_a_thousands_comma_after_at_is_not_a_time() -> None:
    assert _values("The pass is at 3,100 metres.") == [("length_m", 3100.0)]


def test_refund_and_forfeit_and_prices_are_classes() -> None:
    assert classes("Unused passes are refunded in full.")["refund"]
    refused = classes("The booking fee is non-refundable.")
    assert refused["forfeit"] and not refused["refund"]
    assert classes("Bike hire is NOK 300 a day.")["charged"]
    free = classes("Bike hire is free of charge.")
    assert free["included"] and not free["charged"]


def test_the_worst_claim_clause_decides_coverage() -> None:
    encoder = TextEncoder(FakeHashEmbedder())
    evidence = ["Every guest may bring one rucksack of up to 12 kg."]
    whole = coverage_features("Every guest may bring one rucksack.", evidence, evidence[0], encoder)
    joined = coverage_features(
        "Every guest may bring one rucksack, and kayaks travel on the roof rack.",
        evidence,
        evidence[0],
        encoder,
    )
    assert whole[0] == 1.0
    assert joined[0] < 0.5
    full = coverage_features(evidence[0], evidence, evidence[0], encoder)
    assert full[3] == 0.0 < whole[3]


def test_a_veto_makes_supported_impossible() -> None:
    probabilities = np.asarray([[0.99, 0.005, 0.005], [0.99, 0.005, 0.005]])
    features = np.zeros((2, len(FEATURE_NAMES)))
    features[1, FEATURE_NAMES.index("bound_clause_opposed")] = 1.0
    gated = support_probability_gated(probabilities, features)
    assert gated[0, 0] == 0.99 and gated[1, 0] == 0.0
    assert LABELS[int(gated[1].argmax())] != "supported"


def test_the_clause_with_the_same_condition_decides_the_outcome() -> None:
    evidence = [
        "Cancellations 21 days or more before the start are refunded in full. Cancellations "
        "fewer than 21 days before the start are non-refundable."
    ]
    wrong = bound_features("Cancellations within 21 days of the start are refunded.", evidence)
    right = bound_features(
        "Cancellations within 21 days of the start are non-refundable.", evidence
    )
    assert wrong[3] == 1.0
    assert right[3] == 0.0
    assert (
        bound_features("Cancellations 30 days before the start are refunded.", evidence)[3] == 0.0
    )
