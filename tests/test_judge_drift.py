"""Session 11 of the claim judge: a claim about another subject or case is not a contradiction
(drift.py and its gate), a lifted condition about a thing the evidence never mentions, the
rule judge's antonym as a veto, and clipped standardised features.

Every example is written fresh for these tests (none is taken from a labelled pair file)."""

from __future__ import annotations

import numpy as np
import pytest

from kb_eval.judge.drift import DRIFT_FEATURES, condition_words, drift_features
from kb_eval.judge.encoder import TextEncoder
from kb_eval.judge.features import FEATURE_NAMES, pair_features
from kb_eval.judge.items import condition_lifted, lifted_elsewhere
from kb_eval.judge.learned import (
    GATE_ONLY,
    VETOES,
    Z_LIMIT,
    fit,
    standardise,
    support_probability_gated,
)
from kb_retrieval.embedding import FakeHashEmbedder


@pytest.fixture(scope="module")
def encoder() -> TextEncoder:
    return TextEncoder(FakeHashEmbedder())


def _drift(claim: str, evidence: str, encoder: TextEncoder) -> dict[str, float]:
    return dict(zip(DRIFT_FEATURES, drift_features(claim, [evidence], encoder), strict=True))


def test_a_subject_the_evidence_never_names_drifts(encoder: TextEncoder) -> None:
    evidence = "Canoe rentals cost EUR 15 per half day at the boathouse."
    assert _drift("Bicycle rentals are free at the boathouse.", evidence, encoder)[
        "subject_unmatched"
    ]
    assert not _drift("Canoe rentals are free at the boathouse.", evidence, encoder)[
        "subject_unmatched"
    ]


def test_the_subject_is_the_head_before_a_relative_clause(encoder: TextEncoder) -> None:
    evidence = "Walkers pay EUR 30 for the guided ridge day."
    found = _drift("Walkers who dislike heights pay less for the ridge day.", evidence, encoder)
    assert not found["subject_unmatched"]


def test_hedges_in_the_subject_are_not_a_topic(encoder: TextEncoder) -> None:
    evidence = "Beginners can join the morning sailing lesson."
    assert not _drift("Even beginners can join the sailing lesson.", evidence, encoder)[
        "subject_unmatched"
    ]


def test_a_case_the_evidence_never_mentions_drifts(encoder: TextEncoder) -> None:
    evidence = "If you miss the ferry through your own fault, the ticket is not replaced."
    claim = "If the ferry is cancelled because of fog, you get a new ticket."
    assert condition_words(claim) == ["cancelled", "ferry", "fog"]
    assert _drift(claim, evidence, encoder)["condition_unmatched"]
    same_case = "If you miss the ferry through your own fault, you get a new ticket."
    assert not _drift(same_case, evidence, encoder)["condition_unmatched"]


def test_a_case_said_not_to_matter_is_a_case(encoder: TextEncoder) -> None:
    evidence = "Boat trips with fewer than five passengers may be called off."
    claim = "Boat trips with five passengers always sail whatever the tide."
    assert condition_words(claim) == ["tide"]
    assert _drift(claim, evidence, encoder)["condition_unmatched"]


def test_a_proviso_is_not_a_case() -> None:
    assert condition_words("Tents are fine as long as they are small.") == []
    assert condition_words("Tents are fine unless it snows.") == []


def _gated(values: dict[str, float]) -> np.ndarray:
    features = np.zeros((1, len(FEATURE_NAMES)))
    for name, value in values.items():
        features[0, FEATURE_NAMES.index(name)] = value
    return support_probability_gated(np.array([[0.2, 0.5, 0.3]]), features)[0]


def test_drift_rules_out_contradiction_unless_the_same_subject_is_opposed() -> None:
    assert _gated({"subject_unmatched": 0.5})[1] == 0.0
    assert _gated({"condition_unmatched": 1.0})[1] == 0.0
    # The rule judge's contradiction or an opposition on the claim's whole subject stands.
    assert _gated({"subject_unmatched": 0.5, "rule_contradicted": 1.0})[1] == 0.5
    assert _gated({"condition_unmatched": 1.0, "opposed_on_subject": 1.0})[1] == 0.5
    assert _gated({})[1] == 0.5


def test_gate_only_columns_get_no_weight() -> None:
    rng = np.random.default_rng(7)
    rows = 90
    features = rng.normal(size=(rows, len(FEATURE_NAMES)))
    labels = ["supported", "contradicted", "unrelated"] * (rows // 3)
    for index in GATE_ONLY:  # perfectly predictive of "unrelated", yet never fitted
        features[:, index] = [float(label == "unrelated") for label in labels]
    groups = [f"g{(i // 3) % 3}" for i in range(rows)]
    model = fit(features, labels, groups)
    assert np.all(model.weights[list(GATE_ONLY)] == 0.0)


def test_standardised_features_are_clipped() -> None:
    mean, scale = np.array([0.0, 0.01]), np.array([1.0, 0.05])
    z = standardise(np.array([[2.0, 1.0]]), mean, scale)
    assert z[0, 0] == 2.0
    assert z[0, 1] == Z_LIMIT  # (1 - 0.01) / 0.05 = 19.8 unclipped


def test_a_lifted_condition_about_another_thing() -> None:
    evidence = ["Excursions with fewer than 3 guests may be cancelled by the skipper."]
    weather = "Excursions with 3 guests always go ahead whatever the weather."
    assert condition_lifted(weather, evidence)
    assert lifted_elsewhere(weather, evidence)
    guests = "Excursions are never cancelled however few guests have booked."
    assert condition_lifted(guests, evidence) and not lifted_elsewhere(guests, evidence)
    # A lift without an object denies every condition the evidence sets.
    assert not lifted_elsewhere("Excursions run in all cases.", evidence)


def test_new_vetoes_and_the_split_lift_in_the_features() -> None:
    names = {FEATURE_NAMES[i] for i in VETOES}
    assert {"condition_lifted_elsewhere", "reason_antonym"} <= names
    row = pair_features(
        "Excursions with 3 guests always go ahead whatever the weather.",
        ["Excursions with fewer than 3 guests may be cancelled by the skipper."],
        TextEncoder(FakeHashEmbedder()),
    )
    assert row[FEATURE_NAMES.index("condition_lifted_elsewhere")] == 1.0
    assert row[FEATURE_NAMES.index("condition_lifted")] == 0.0
    assert row[FEATURE_NAMES.index("condition_unmatched")] > 0.0


def test_full_and_reduced_prices_are_the_higher_and_lower_pair() -> None:
    from kb_eval.judge.modality import classes

    full = classes("Late bookers pay the full fare for the boat.")
    reduced = classes("Late bookers pay a reduced fare for the boat.")
    assert full["higher"] and not full["lower"]
    assert reduced["lower"] and not reduced["higher"]
    assert classes("Students get a discounted pass.")["lower"]
