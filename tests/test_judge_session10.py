"""Session 10 of the claim judge: negative polarity "any", "not every", Title Case headings and
FAQ questions in the policy classes, the higher / lower pair, schedule rows, a lifted condition,
a rate on another basis and a claim value bounded by the claim itself.

Every example is written fresh for these tests (none is taken from a labelled pair file)."""

from __future__ import annotations

import numpy as np
import pytest

from kb_eval.judge.bounds import BOUND_FEATURES, bound_features
from kb_eval.judge.claim_judge import judge_claim
from kb_eval.judge.encoder import TextEncoder
from kb_eval.judge.features import FEATURE_NAMES, pair_features
from kb_eval.judge.items import (
    ITEM_FEATURES,
    condition_lifted,
    item_features,
    rate_basis_differs,
)
from kb_eval.judge.learned import VETOES, support_probability_gated
from kb_eval.judge.modality import classes
from kb_retrieval.embedding import FakeHashEmbedder


def _on(text: str) -> set[str]:
    return {name for name, on in classes(text).items() if on}


def test_any_under_a_negation_is_not_universal() -> None:
    assert "universal" in _on("Any guest may borrow a bicycle.")
    assert "universal" not in _on("You will not receive any compensation.")
    assert "universal" not in _on("Dogs aren't allowed anywhere on the boat.")


def test_not_every_is_limited() -> None:
    assert _on("Every room has a balcony.") >= {"universal"}
    found = _on("Not every room has a balcony.")
    assert "limited" in found and "universal" not in found


def test_a_title_case_heading_states_no_policy() -> None:
    assert _on("Refund Policy: Tickets are non-refundable.") == {"forfeit"}
    assert "charged" in _on("Not included: ferry tickets and lunch.")


def test_a_faq_question_is_read_from_the_operator_side() -> None:
    assert "operator" in _on("What do you supply? Wetsuits and fins for every dive.")
    assert "guest" in _on("You have to bring your own wetsuit.")


def test_higher_and_lower_are_opposed() -> None:
    assert "higher" in _on("Weekend rates are higher than weekday rates.")
    assert "lower" in _on("Weekend rates are cheaper than weekday rates.")


def test_a_value_inside_a_schedule_row_is_stated() -> None:
    evidence = [
        "Cancellation charges: 70 days or more before the trip, the deposit is kept; 69 to 35 "
        "days before, 40% of the price; 34 days or less before the trip, the full price."
    ]
    # 50 days shares its topic words with "70 days or more before the trip", but the row that
    # states 40% holds 50 in its range.
    assert (
        judge_claim(
            "If you cancel 50 days before the trip, 40% of the price is charged.", evidence
        ).label
        == "supported"
    )
    assert (
        judge_claim(
            "If you cancel 50 days before the trip, 60% of the price is charged.", evidence
        ).label
        == "contradicted"
    )
    assert (
        judge_claim(
            "If you cancel 30 days before the trip, 40% of the price is charged.", evidence
        ).label
        == "contradicted"
    )


def test_a_lone_value_inside_a_range_of_another_thing_is_not_stated() -> None:
    evidence = ["Kayaks cost EUR 20 to 30 a day. Bicycles cost EUR 12 a day."]
    verdict = judge_claim("Bicycles cost EUR 25 a day.", evidence)
    assert verdict.label == "contradicted"


def test_a_condition_the_claim_lifts() -> None:
    evidence = ["Lessons cancelled more than 48 hours ahead are refunded."]
    assert condition_lifted("Lessons are refunded however late you cancel.", evidence)
    assert condition_lifted("Lessons are refunded regardless of when you cancel.", evidence)
    assert not condition_lifted("Lessons cancelled 3 days ahead are refunded.", evidence)
    assert not condition_lifted(
        "Lessons are refunded no matter the weather.",
        ["Lessons are refunded no matter the weather, if cancelled a day ahead."],
    )


def test_a_rate_on_another_basis() -> None:
    sentence = "Bike hire is EUR 18 per person per day."
    assert rate_basis_differs("Bike hire is EUR 18 per group.", [sentence], sentence)
    assert not rate_basis_differs("Bike hire is EUR 18 per guest per day.", [sentence], sentence)
    assert not rate_basis_differs("Bike hire is EUR 18 a day.", [sentence], sentence)


def test_a_claim_value_with_its_own_bound_needs_an_equal_value() -> None:
    evidence = ["Riders must not gallop within 2 hours of a meal."]
    unstated = BOUND_FEATURES.index("quantity_unstated")
    assert bound_features("Riders must not gallop within 3 hours of a meal.", evidence)[unstated]
    assert not bound_features("Riders must not gallop within 2 hours of a meal.", evidence)[
        unstated
    ]
    # An unbounded point value inside a stated bound is still stated.
    assert not bound_features(
        "Cancel 10 days before and the fee is kept.",
        ["Within 20 days of the date the fee is kept."],
    )[unstated]


@pytest.mark.parametrize("name", ["condition_lifted", "rate_basis_differs"])
def test_new_vetoes_block_support(name: str) -> None:
    index = FEATURE_NAMES.index(name)
    assert index in VETOES
    features = np.zeros((1, len(FEATURE_NAMES)))
    features[0, index] = 1.0
    gated = support_probability_gated(np.array([[0.9, 0.05, 0.05]]), features)
    assert gated[0, 0] == 0.0


def test_pair_features_mark_a_lifted_condition_and_another_rate_basis() -> None:
    encoder = TextEncoder(FakeHashEmbedder())
    lifted = pair_features(
        "The deposit comes back whatever the reason for cancelling.",
        ["The deposit comes back if you cancel for medical reasons."],
        encoder,
    )
    assert lifted[FEATURE_NAMES.index("condition_lifted")] == 1.0
    rate = pair_features(
        "Transfers cost USD 40 per car.",
        ["Airport transfers cost USD 40 per person each way."],
        encoder,
    )
    assert rate[FEATURE_NAMES.index("rate_basis_differs")] == 1.0


def test_an_antonym_elsewhere_does_not_oppose_a_word_the_best_unit_states() -> None:
    evidence = [
        "Guests who ask to share a room are paired with another guest of the same sex where "
        "possible; otherwise the single room supplement is 40% of the room price."
    ]
    verdict = judge_claim("A single room normally costs an extra 40% of the room price.", evidence)
    assert verdict.label != "contradicted"


def test_a_dropped_condition_is_read_in_the_aligned_clause() -> None:
    claim = "Final payment for the tour falls due four weeks ahead of it."
    encoder = TextEncoder(FakeHashEmbedder())
    sentence = (
        "A deposit falls due within 5 days of booking, and final payment for the tour falls due 28 "
        "days ahead of it."
    )
    dropped = ITEM_FEATURES.index("condition_dropped")
    assert item_features(claim, [sentence], sentence, encoder)[dropped] == 1.0
    clause = "and final payment for the tour falls due 28 days ahead of it."
    assert item_features(claim, [sentence], sentence, encoder, clause)[dropped] == 0.0
