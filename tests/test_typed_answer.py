"""The typed-answer signal (typed_answer.py, `typed_answer_logit`): fresh wording, no embedder."""

from __future__ import annotations

from datetime import date

import pytest

from kb_retrieval.models import Category
from kb_retrieval.query.answer_type import asked_kinds
from kb_retrieval.query.plan import build_query_plan
from kb_retrieval.retrieval.answerability import FEATURE_NAMES
from kb_retrieval.retrieval.candidates import Candidate
from kb_retrieval.retrieval.config import RetrievalConfig
from kb_retrieval.retrieval.pool_features import set_pool_features
from kb_retrieval.retrieval.scoring import score_pool, shift_log_odds
from kb_retrieval.retrieval.typed_answer import (
    TYPED_ANSWER,
    TYPED_ANSWER_SOURCES,
    focus_terms,
    states_typed_answer,
)
from kb_retrieval.text.analyzer import analyze
from tests.pool_candidates import plain_candidate

WHEN_BUS = "What time does the shuttle bus leave the glacier lodge on the third morning?"


def _focus(question: str) -> frozenset[str]:
    plan = build_query_plan(question)
    return focus_terms(plan.normalized_text, analyze(plan.variants[0].text))


def test_a_sentence_stating_the_asked_kind_about_the_asked_thing_is_a_typed_answer():
    text = "Breakfast is served from 06:30. The shuttle bus to the glacier departs at 07:15 sharp."
    assert states_typed_answer(asked_kinds(WHEN_BUS), _focus(WHEN_BUS), text)


def test_a_value_of_the_asked_kind_about_something_else_is_not():
    # A time, but of the sauna; the bus is named in another sentence without a time.
    text = "The sauna opens at 18:00 every evening. A bus links the lodge with the village."
    assert not states_typed_answer(asked_kinds(WHEN_BUS), _focus(WHEN_BUS), text)


def test_a_value_of_another_kind_about_the_asked_thing_is_not():
    text = "The shuttle bus ride to the glacier costs NOK 250 per person."
    assert not states_typed_answer(asked_kinds(WHEN_BUS), _focus(WHEN_BUS), text)


def test_a_question_that_asks_no_kind_of_value_never_has_a_typed_answer():
    question = "Is the shuttle bus to the glacier wheelchair accessible?"
    assert asked_kinds(question) == frozenset()
    text = "The shuttle bus to the glacier departs at 07:15."
    assert not states_typed_answer(asked_kinds(question), _focus(question), text)


def test_the_focus_drops_question_form_words_stated_values_and_generic_trip_nouns():
    question = "How much is the kayak hire fee per day on the trip for my 12-year-old?"
    focus = _focus(question)
    assert set(analyze("kayak hire")) <= focus
    for word in ("much", "fee", "day", "trip", "year", "old"):
        assert not set(analyze(word)) & focus, word
    ahead = _focus("How far in advance should we reserve the glacier guide?")
    assert set(analyze("glacier guide")) <= ahead
    assert not set(analyze("far advance")) & ahead


def test_sharing_only_a_question_form_word_is_not_a_typed_answer():
    question = "What time do the ferries to the outer islands run?"
    # "time" is how the question asks, not what it asks about.
    text = "Check-in time at the harbour office is 16:00."
    assert not states_typed_answer(asked_kinds(question), _focus(question), text)
    assert states_typed_answer(
        asked_kinds(question), _focus(question), "Ferries to the outer islands run at 09:00."
    )


def test_a_sentence_sharing_only_the_words_of_the_value_is_about_something_else():
    question = "How many days notice do you need for a vegetarian menu?"
    # "days notice" is the value and how it is asked: the sentence is about the boat.
    text = "The boat needs 3 days notice."
    assert not states_typed_answer(asked_kinds(question), _focus(question), text)
    text = "Vegetarian menus need 3 days notice."
    assert states_typed_answer(asked_kinds(question), _focus(question), text)


def test_shift_log_odds_moves_a_probability_by_that_many_log_odds():
    assert shift_log_odds(0.5, 0.0) == pytest.approx(0.5)
    assert shift_log_odds(0.5, 1.0) == pytest.approx(0.7310585786)
    assert shift_log_odds(0.6, 1.0) > 0.6 > shift_log_odds(0.6, -1.0)
    assert 0.0 < shift_log_odds(0.0, 2.0) < 1e-4
    assert shift_log_odds(1.0, 5.0) < 1.0


STATES = "The shuttle bus to the glacier leaves the lodge at 07:15."


def _scored(logit: float, category: Category) -> tuple[Candidate, Candidate]:
    """A chunk that states the answer and one that does not, both of `category`, scored."""
    plan = build_query_plan(WHEN_BUS)
    pool = [
        plain_candidate("answer", category, STATES),
        plain_candidate("other", category, "The glacier lodge has a drying room and a sauna."),
    ]
    variant_terms = [analyze(v.text) for v in plan.variants]
    idf = dict.fromkeys({t for terms in variant_terms for t in terms}, 1.0)
    config = RetrievalConfig(typed_answer_logit=logit)
    set_pool_features(pool, plan, variant_terms, idf, 12.0, config)
    score_pool(pool, variant_terms[0], idf, date(2026, 11, 1), config)
    return pool[0], pool[1]


def test_the_pool_marks_the_chunk_that_states_the_answer():
    answer, other = _scored(0.0, Category.FAQ)
    assert answer.features[TYPED_ANSWER] == 1.0
    assert other.features[TYPED_ANSWER] == 0.0
    # Not a feature of the learned model: its inputs are unchanged.
    assert TYPED_ANSWER not in FEATURE_NAMES


def test_the_confidence_of_a_typed_answer_moves_by_the_configured_log_odds():
    plain_answer, plain_other = _scored(0.0, Category.TRIP_ITINERARY)
    answer, other = _scored(1.0, Category.TRIP_ITINERARY)
    assert answer.confidence == pytest.approx(shift_log_odds(plain_answer.confidence, 1.0))
    assert other.confidence == pytest.approx(plain_other.confidence)
    # Ordering and floors read relevance, which the signal leaves alone.
    assert answer.relevance == pytest.approx(plain_answer.relevance)


@pytest.mark.parametrize("category", [Category.MARKETING, Category.OPERATIONS_INTERNAL])
def test_marketing_and_internal_documents_never_gain_confidence_from_a_stated_value(category):
    assert category not in TYPED_ANSWER_SOURCES
    plain, _ = _scored(0.0, category)
    boosted, _ = _scored(1.0, category)
    assert boosted.features[TYPED_ANSWER] == 1.0
    assert boosted.confidence == pytest.approx(plain.confidence)


def test_the_default_configuration_applies_the_signal_and_hashes_it():
    assert RetrievalConfig().typed_answer_logit == 1.5
    off = RetrievalConfig(typed_answer_logit=0.0)
    assert off.config_version != RetrievalConfig().config_version


def test_charging_a_device_asks_no_price_but_a_charge_does():
    assert "currency" not in asked_kinds("Could I charge my camera battery on the minibus?")
    assert "currency" not in asked_kinds("Can we charge them overnight in the hut?")
    assert "currency" in asked_kinds("Is there a charge for storing skis at the lodge?")
    assert "currency" in asked_kinds("Do you charge extra for a window seat?")
    assert "currency" in asked_kinds("We were charged twice for the transfer.")
