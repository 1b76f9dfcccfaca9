"""Sentence-bounded and intent features (`kb_eval/specific_terms.py`) on fresh examples."""

from __future__ import annotations

import pytest

from kb_eval.specific_terms import (
    SPECIFIC_FEATURES,
    add_specific_features,
    sentence_values,
    states_intent,
)
from kb_retrieval.models import Category
from kb_retrieval.query.plan import build_query_plan
from kb_retrieval.retrieval.candidates import Candidate
from kb_retrieval.text.analyzer import analyze
from tests.pool_candidates import built_candidate

EMAIL = "How heavy may my duffel be on the boat transfer to the glacier lodge? Thanks, Oskar"
# An overview naming every word of the question in separate lines, with a weight about bikes.
OVERVIEW = (
    "Frequently asked questions.\n"
    "Duffel bags are collected at the hotel.\n"
    "The boat leaves from the east pier.\n"
    "Transfers are included in the price.\n"
    "The glacier lodge opens in June.\n"
    "Bikes up to 20 kg ride on the roof rack."
)
ANSWER = "On the boat transfer each duffel may weigh up to 15 kg. Breakfast is served at the lodge."
OTHER = "Our glacier lodge has twelve rooms and a sauna."


def _candidate(i: int, version: str, text: str, category: Category, vector: float) -> Candidate:
    cand = built_candidate(
        i, f"c{i}", version, f"d{version}", category, text, title=f"Doc {version}"
    )
    cand.features = {"vector_best": vector}
    return cand


@pytest.fixture
def pool() -> list[Candidate]:
    return [
        _candidate(0, "faq", OVERVIEW, Category.FAQ, 0.61),
        _candidate(1, "faq", ANSWER, Category.FAQ, 0.55),
        _candidate(2, "lodge", OTHER, Category.MARKETING, 0.40),
    ]


def _features(pool: list[Candidate]) -> list[dict[str, float]]:
    plan = build_query_plan(EMAIL)
    direct = analyze(plan.variants[0].text)
    # The guest's most specific words are "duffel" and "boat" (highest idf).
    idf = {t: {"duffel": 4.0, "boat": 3.0}.get(t, 1.0) for t in direct}
    add_specific_features(pool, plan, direct, idf)
    return [c.features for c in pool]


def test_the_answering_sentence_outscores_an_overview_that_names_every_word(pool):
    overview, answer, other = _features(pool)
    for f in (overview, answer, other):
        assert set(SPECIFIC_FEATURES) <= set(f)
    assert answer["sentence_coverage"] > overview["sentence_coverage"] > 0
    assert other["sentence_coverage"] < answer["sentence_coverage"]
    assert answer["key_terms_sentence"] == 1.0
    assert overview["key_terms_sentence"] < 1.0


def test_the_answer_type_counts_only_in_the_best_sentence(pool):
    overview, answer, _ = _features(pool)
    assert answer["type_in_sentence"] == 1.0
    assert overview["type_in_sentence"] == 0.0, "the overview's kg is about bikes, another line"


def test_document_margin_is_measured_against_other_documents(pool):
    overview, answer, other = _features(pool)
    assert overview["document_margin"] == pytest.approx(0.61 - 0.40)
    assert answer["document_margin"] == pytest.approx(0.55 - 0.40)
    assert other["document_margin"] == pytest.approx(0.40 - 0.61)


def test_a_single_document_pool_has_no_rival():
    cand = _candidate(0, "only", ANSWER, Category.FAQ, 0.5)
    (features,) = _features([cand])
    assert features["document_margin"] == pytest.approx(0.5)


def test_intent_is_authoritative_in_the_category_that_states_it():
    assert states_intent(Category.TERMS_POLICY, ["refund"])
    assert not states_intent(Category.FAQ, ["refund"])
    assert states_intent(Category.TRIP_ITINERARY, ["pickup"])
    assert not states_intent(Category.MARKETING, ["pickup", "refund"])


def test_a_chunk_using_the_intents_words_is_marked():
    plan = build_query_plan("Can we get our money back if we cancel three weeks ahead?")
    assert plan.intents, "the plan reads a cancellation intent"
    terms = analyze(plan.variants[0].text)
    idf = dict.fromkeys(terms, 1.0)
    terms_chunk = _candidate(
        0, "t", "Cancellation: a refund of 50% applies up to 21 days.", Category.TERMS_POLICY, 0.5
    )
    blog = _candidate(
        1, "b", "The sunset over the fjord was unforgettable.", Category.MARKETING, 0.3
    )
    add_specific_features([terms_chunk, blog], plan, terms, idf)
    assert terms_chunk.features["intent_mentioned"] == 1.0
    assert terms_chunk.features["intent_authoritative"] == 1.0
    assert blog.features["intent_mentioned"] == blog.features["intent_authoritative"] == 0.0


def test_no_query_terms_give_zero_sentence_values():
    assert sentence_values(ANSWER, {}, [], frozenset()) == (0.0, 0.0, 0.0)
