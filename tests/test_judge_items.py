"""Session 9 of the claim judge: items a claim adds, conditions it drops, FAQ answers, "the
rest" for "the balance", "keep" read as forfeited only when money is kept.

Every example is written fresh for these tests (none is taken from a labelled pair file)."""

from __future__ import annotations

import numpy as np
import pytest

from kb_eval.judge.claim_judge import judge_claim
from kb_eval.judge.clauses import terms_of
from kb_eval.judge.encoder import TextEncoder
from kb_eval.judge.features import FEATURE_NAMES, feature_sentences, pair_features
from kb_eval.judge.items import ITEM_FEATURES, condition_dropped, conjuncts, item_features
from kb_eval.judge.modality import classes
from kb_retrieval.embedding import FakeHashEmbedder

LIST = "The package covers: breakfast and dinner, a guided town walk and museum tickets."


@pytest.fixture()
def encoder() -> TextEncoder:
    return TextEncoder(FakeHashEmbedder())


def _items(claim: str, evidence: list[str], encoder: TextEncoder) -> dict[str, float]:
    values = item_features(claim, evidence, feature_sentences(evidence)[0], encoder)
    return dict(zip(ITEM_FEATURES, values, strict=True))


def test_conjuncts_split_at_list_separators_but_not_inside_numbers() -> None:
    assert conjuncts("Breakfast, dinner and a spa visit are covered.") == [
        "breakfast",
        "dinner",
        "a spa visit are covered.",
    ]
    assert conjuncts("The ferry leaves at 10:30 and costs EUR 1,500 for the group.") == [
        "the ferry leaves at 10:30",
        "costs eur 1,500 for the group.",
    ]


def test_an_item_added_to_a_stated_list_is_novel(encoder: TextEncoder) -> None:
    added = _items("The package covers breakfast, dinner and a spa visit.", [LIST], encoder)
    assert added["conjunct_novel"] == 1.0
    assert added["conjunct_uncovered"] == 1.0
    stated = _items("The package covers dinner and museum tickets.", [LIST], encoder)
    assert stated["conjunct_novel"] == 0.0
    assert stated["conjunct_uncovered"] == 0.0


def test_a_fact_joined_to_a_stated_one_is_novel(encoder: TextEncoder) -> None:
    evidence = ["Each rider may bring one saddle bag of up to 8 kg."]
    claim = "Each rider may bring one saddle bag of up to 8 kg, and dogs ride along for free."
    assert _items(claim, evidence, encoder)["conjunct_novel"] == 1.0
    assert _items(evidence[0], evidence, encoder)["conjunct_novel"] == 0.0


def test_conjunct_novel_vetoes_support(encoder: TextEncoder) -> None:
    from kb_eval.judge.learned import VETOES

    assert FEATURE_NAMES.index("conjunct_novel") in VETOES
    row = pair_features("The package covers breakfast, dinner and a spa visit.", [LIST], encoder)
    assert row[FEATURE_NAMES.index("conjunct_novel")] == 1.0


def test_a_dropped_condition_is_a_bounded_number_the_claim_leaves_out() -> None:
    sentence = (
        "If you change your booking within 10 days of paying, and at least 45 days before "
        "the course, the change is free."
    )
    assert condition_dropped(
        "If you change within 10 days of paying, the change is free.", sentence
    )
    assert not condition_dropped(
        "Changes within 10 days of paying and 45 days or more before the course are free.",
        sentence,
    )
    # a changed number is not a dropped condition (the claim's number is not the sentence's)
    assert not condition_dropped("If you change within 20 days of paying, it is free.", sentence)
    assert not condition_dropped("Changes are free.", "Changes are free of charge.")


def test_a_faq_question_is_joined_to_its_answer() -> None:
    evidence = [
        "Do I need my own wetsuit? Not at all. We lend one to every guest. Is lunch served?"
    ]
    assert feature_sentences(evidence) == [
        "Do I need my own wetsuit? Not at all.",
        "We lend one to every guest.",
        "Is lunch served?",
    ]


def test_rule_judge_reads_none_at_all_as_a_negative_answer() -> None:
    evidence = ["Is a fishing licence needed? None at all. The skipper holds the permit."]
    assert judge_claim("You do not need a fishing licence.", evidence).label == "supported"
    assert judge_claim("You need a fishing licence.", evidence).label == "contradicted"


def test_a_sentence_starting_with_no_keeps_its_negation() -> None:
    evidence = ["No dogs are allowed in the cabins."]
    assert judge_claim("Dogs are allowed in the cabins.", evidence).label == "contradicted"


def test_the_rest_is_the_balance() -> None:
    assert terms_of("the rest is paid on arrival") == terms_of("the balance is paid on arrival")
    assert terms_of("the remainder is due in May") == terms_of("the balance is due in May")
    assert terms_of("open from the middle of June") == terms_of("open from mid-June")


def test_keep_is_forfeited_only_when_money_is_kept() -> None:
    assert classes("We keep the deposit if you cancel.")["forfeit"]
    assert classes("The first payment is kept by the school.")["forfeit"]
    assert not classes("Please keep your cabin door closed at sea.")["forfeit"]
    assert not classes("Riders keep their bikes in the shed overnight.")["forfeit"]


def test_an_opposed_class_on_the_whole_subject_is_a_contradiction(encoder: TextEncoder) -> None:
    from kb_eval.judge.learned import support_probability_gated

    evidence = ["Kayak hire costs EUR 12 an hour at the boathouse."]
    same_subject = pair_features("Kayak hire is free of charge.", evidence, encoder)
    assert same_subject[FEATURE_NAMES.index("opposed_on_subject")] == 1.0
    rows = np.stack(
        [same_subject, pair_features("Kayak hire costs EUR 12 an hour.", evidence, encoder)]
    )
    gated = support_probability_gated(np.full((2, 3), 1 / 3), rows)
    assert gated[0].tolist() == [0.0, 1 / 3, 0.0]
    assert gated[1].tolist() == [1 / 3, 1 / 3, 1 / 3]
