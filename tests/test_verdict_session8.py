"""Issue 12, session 8: the verdict on operators it has never seen (fresh examples; no golden
e-mail is repeated)."""

from __future__ import annotations

from kb_retrieval.models import Category
from kb_retrieval.query.plan import build_query_plan
from kb_retrieval.retrieval.config import RetrievalConfig
from kb_retrieval.retrieval.verdict import decide, low_confidence_reviews
from tests.test_ranking_rules import cand

CONFIG = RetrievalConfig()
BIKE_FAQ = "Can I hire an e-bike? Yes, e-bikes can be hired at the shop next to the hotel."


def _between_lines() -> float:
    """A confidence that is usable (>= 0.65) but low (< 0.72)."""
    value = (CONFIG.unknown_threshold + CONFIG.low_confidence_threshold) / 2
    assert CONFIG.unknown_threshold <= value < CONFIG.low_confidence_threshold
    return value


def test_low_confidence_on_a_plain_question_is_a_warning_on_a_draft():
    question = build_query_plan("Is it possible to hire an e-bike near the hotel?")
    assert not (question.policy_like or question.sensitivity or question.exception_request)
    assert not low_confidence_reviews(question)
    pack = [cand("faq_3", Category.FAQ, _between_lines(), BIKE_FAQ)]
    verdict = decide(question, pack, CONFIG)
    assert verdict.outcome.value == "OK_TO_DRAFT"
    assert [r.value for r in verdict.reason_codes] == ["LOW_CONFIDENCE"]
    assert verdict.flags["low_confidence"]


def test_low_confidence_on_a_sensitive_question_goes_to_a_person():
    """Session 12: a policy-like question that is not sensitive is drafted with the warning
    (tests/test_verdict_session12.py)."""
    medical = build_query_plan("I take heart medication, is that a problem on the e-bike day?")
    assert medical.sensitivity and low_confidence_reviews(medical)
    faq = [cand("faq_3", Category.SAFETY_MEDICAL, _between_lines(), BIKE_FAQ)]
    assert decide(medical, faq, CONFIG).outcome.value == "NEEDS_REVIEW"


def test_a_confident_plain_answer_carries_no_low_confidence_warning():
    question = build_query_plan("Is it possible to hire an e-bike near the hotel?")
    pack = [cand("faq_3", Category.FAQ, CONFIG.low_confidence_threshold, BIKE_FAQ)]
    verdict = decide(question, pack, CONFIG)
    assert verdict.outcome.value == "OK_TO_DRAFT" and verdict.reason_codes == ()
    below = [cand("faq_3", Category.FAQ, CONFIG.unknown_threshold - 0.01, BIKE_FAQ)]
    assert decide(question, below, CONFIG).outcome.value == "UNKNOWN"


def test_a_low_confidence_answer_that_depends_on_the_trip_asks_which_trip():
    question = build_query_plan("Where do we meet on the first morning?")
    assert not low_confidence_reviews(question)
    pack = [
        cand("lakes_0", Category.TRIP_ITINERARY, _between_lines(), "Day 1. Meet at the pier."),
        cand("hills_0", Category.TRIP_ITINERARY, 0.5, "Day 1. Meet at the station."),
    ]
    verdict = decide(question, pack, CONFIG)
    assert verdict.outcome.value == "ASK_CLARIFYING_QUESTION"
    assert [r.value for r in verdict.reason_codes] == ["LOW_CONFIDENCE", "AMBIGUOUS_CONTEXT"]
