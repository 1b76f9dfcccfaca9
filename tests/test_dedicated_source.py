"""The dedicated-source signal (dedicated_source.py, `dedicated_source_logit`): fresh wording."""

from __future__ import annotations

from datetime import date

import pytest

from kb_retrieval.models import Category
from kb_retrieval.query.plan import build_query_plan
from kb_retrieval.retrieval.candidates import Candidate
from kb_retrieval.retrieval.config import RetrievalConfig
from kb_retrieval.retrieval.dedicated_source import (
    DEDICATED_SOURCES,
    dedicated_categories,
)
from kb_retrieval.retrieval.pool_features import set_pool_features
from kb_retrieval.retrieval.scoring import score_pool, shift_log_odds
from kb_retrieval.text.analyzer import analyze
from tests.pool_candidates import plain_candidate

# Fresh wording: a canyoning outfit that no golden set or fixture describes.
RELEASE_QUESTION = (
    "Is there a release form for the canyoning day, and can my partner sign it by post?"
)
FORM = (
    "Participation Agreement. Every canyoner reads and signs this agreement at the gorge car "
    "park before the first abseil; guides keep the signed copies."
)
ROUTE = "The gorge route has seven abseils and two natural slides; the car park is at the top."


def test_the_map_reads_only_vocabulary_intents_and_names_real_categories():
    from kb_retrieval.query.vocabulary import INTENT_PATTERNS

    assert set(DEDICATED_SOURCES) <= set(INTENT_PATTERNS)
    assert dedicated_categories(["waiver", "price"]) == {Category.WAIVER_RELEASE}
    assert dedicated_categories(["price", "deposit"]) == frozenset()
    assert Category.PACKING_LIST in dedicated_categories(["packing"])
    assert Category.MARKETING not in dedicated_categories(["packing"])


def test_a_release_question_has_the_waiver_intent():
    assert "waiver" in build_query_plan(RELEASE_QUESTION).intents


def _scored(logit: float, question: str = RELEASE_QUESTION) -> tuple[Candidate, Candidate]:
    """The signed form (waiver_release) and a route description (itinerary), scored."""
    plan = build_query_plan(question)
    pool = [
        plain_candidate("form", Category.WAIVER_RELEASE, FORM),
        plain_candidate("route", Category.TRIP_ITINERARY, ROUTE),
    ]
    variant_terms = [analyze(v.text) for v in plan.variants]
    idf = dict.fromkeys({t for terms in variant_terms for t in terms}, 1.0)
    config = RetrievalConfig(dedicated_source_logit=logit)
    set_pool_features(pool, plan, variant_terms, idf, 12.0, config)
    score_pool(
        pool,
        variant_terms[0],
        idf,
        date(2026, 11, 1),
        config,
        policy_like=plan.policy_like,
        intents=plan.intents,
    )
    return pool[0], pool[1]


def test_the_dedicated_source_gains_the_configured_log_odds_and_nothing_else_moves():
    plain_form, plain_route = _scored(0.0)
    form, route = _scored(2.0)
    assert form.confidence == pytest.approx(shift_log_odds(plain_form.confidence, 2.0))
    assert route.confidence == plain_route.confidence
    # Ordering and floors read relevance and rank score, which the signal leaves alone.
    assert form.relevance == plain_form.relevance
    assert form.rank_score == plain_form.rank_score


def test_off_leaves_the_confidence_bit_for_bit():
    plain_form, _ = _scored(0.0)
    again, _ = _scored(0.0)
    assert plain_form.confidence == again.confidence


def test_a_question_without_a_dedicated_intent_gains_nothing():
    question = "How many abseils are on the gorge route and how high is the tallest one?"
    assert not dedicated_categories(build_query_plan(question).intents)
    plain_form, _ = _scored(0.0, question)
    form, _ = _scored(2.0, question)
    assert form.confidence == plain_form.confidence


def test_the_default_configuration_applies_the_signal_and_hashes_it():
    assert RetrievalConfig().dedicated_source_logit == 2.0
    off = RetrievalConfig(dedicated_source_logit=0.0)
    assert off.config_version != RetrievalConfig().config_version
