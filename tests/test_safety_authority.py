"""A safety question's draft rests on an authoritative source (spec 3.6), whether the caller flagged
it or safety words made it sensitive, with or without a policy intent (fresh examples; no golden
e-mail is repeated)."""

from __future__ import annotations

from kb_retrieval.models import Category, ReasonCode
from kb_retrieval.query.plan import build_query_plan
from kb_retrieval.retrieval.config import RetrievalConfig
from kb_retrieval.retrieval.verdict import decide, needs_authority, required_categories
from tests.test_verdict_session10 import _chunk

CONFIG = RetrievalConfig()
RIVER_DAY = (
    "Day 3 - The lower canyon. We paddle eight kilometres between the cliffs and stop for a "
    "long lunch on the shingle beach, where there is time to swim from the canoes."
)
SAFETY_RULES = (
    "Safety on the water. Buoyancy aids are worn at all times on the river, and nobody swims "
    "from a canoe: swimming is allowed only at the beach stops, with a guide watching."
)
QUESTION = "Could I jump in and swim off my canoe during the canyon day?"


def _flagged(text: str = QUESTION):
    """The plan of an e-mail the caller flags as a safety matter (spec 4.1)."""
    return build_query_plan(text, sensitivity=["safety"])


def test_a_flagged_question_without_a_policy_intent_still_needs_an_authority() -> None:
    plan = _flagged()
    assert plan.sensitivity == ("safety",) and not plan.policy_like
    assert needs_authority(plan)
    assert Category.SAFETY_MEDICAL in required_categories(plan)


def test_safety_words_make_a_question_need_an_authority_too() -> None:
    plan = build_query_plan("Is it safe to swim off the canoe in the lower canyon?")
    assert "safety" in plan.sensitivity
    assert needs_authority(plan)
    unflagged = build_query_plan(QUESTION)
    assert not unflagged.sensitivity and not needs_authority(unflagged)


def test_an_itinerary_alone_does_not_ground_a_safety_answer() -> None:
    plan = _flagged()
    day = _chunk("canyon_3", Category.TRIP_ITINERARY, 0.86, 0.6, RIVER_DAY)
    verdict = decide(plan, [day], CONFIG)
    assert ReasonCode.MISSING_REQUIRED_PRECEDENCE in verdict.reason_codes
    assert ReasonCode.SENSITIVE_TOPIC in verdict.reason_codes
    assert verdict.outcome.value == "NEEDS_REVIEW"


def test_the_safety_policy_grounds_it() -> None:
    plan = _flagged()
    day = _chunk("canyon_3", Category.TRIP_ITINERARY, 0.8, 0.5, RIVER_DAY)
    rules = _chunk("safety_1", Category.SAFETY_MEDICAL, 0.86, 0.6, SAFETY_RULES)
    verdict = decide(plan, [rules, day], CONFIG)
    assert ReasonCode.MISSING_REQUIRED_PRECEDENCE not in verdict.reason_codes
    assert verdict.outcome.value == "OK_TO_DRAFT"


def test_a_plain_question_needs_no_authority() -> None:
    plan = build_query_plan("Is lunch on the canyon day eaten on the beach?")
    assert not plan.sensitivity and not needs_authority(plan)
    day = _chunk("canyon_3", Category.TRIP_ITINERARY, 0.86, 0.6, RIVER_DAY)
    assert decide(plan, [day], CONFIG).outcome.value == "OK_TO_DRAFT"
