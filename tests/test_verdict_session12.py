"""Issue 12, session 12: the verdict rules on the remaining rule-decided misses (fresh examples;
no golden e-mail is repeated)."""

from __future__ import annotations

from dataclasses import replace

from kb_retrieval.models import Category, ReasonCode
from kb_retrieval.query.plan import build_query_plan
from kb_retrieval.retrieval.audience import not_for_guests
from kb_retrieval.retrieval.config import RetrievalConfig
from kb_retrieval.retrieval.conflict_facts import facts_of
from kb_retrieval.retrieval.verdict import decide, low_confidence_reviews
from tests.test_verdict_session10 import _chunk

CONFIG = RetrievalConfig()
TERMS_BALANCE = (
    "5. Paying for your place. The remaining balance must reach us 50 days before the date "
    "your river week starts."
)
NEWSLETTER = "Spring letter: our guides spent March mapping new campsites along the gorge."
DAMAGE_DEPOSIT = "Renters of our canoes leave a refundable damage bond of EUR 80 at the boathouse."


def _between_lines() -> float:
    """A confidence that is usable (>= 0.65) but low (< 0.72)."""
    value = (CONFIG.unknown_threshold + CONFIG.low_confidence_threshold) / 2
    assert CONFIG.unknown_threshold <= value < CONFIG.low_confidence_threshold
    return value


def _codes(verdict) -> set[str]:
    return {r.value for r in verdict.reason_codes}


def test_a_policy_question_answered_by_its_terms_at_low_confidence_is_drafted_with_a_warning():
    plan = build_query_plan("When does the rest of the payment for our canoe week fall due?")
    assert plan.policy_like and not plan.sensitivity and not low_confidence_reviews(plan)
    terms = _chunk("terms_5", Category.TERMS_POLICY, _between_lines(), 0.6, TERMS_BALANCE)
    verdict = decide(plan, [terms], CONFIG)
    assert verdict.outcome.value == "OK_TO_DRAFT"
    assert _codes(verdict) == {"LOW_CONFIDENCE"} and verdict.flags["low_confidence"]


def test_a_policy_question_without_its_authoritative_source_still_goes_to_a_person():
    plan = build_query_plan("When does the rest of the payment for our canoe week fall due?")
    faq = _chunk("faq_2", Category.FAQ, _between_lines(), 0.6, "Pay the rest 50 days ahead.")
    verdict = decide(plan, [faq], CONFIG)
    assert ReasonCode.MISSING_REQUIRED_PRECEDENCE in verdict.reason_codes
    assert verdict.outcome.value == "NEEDS_REVIEW"


def test_a_sensitive_question_at_low_confidence_still_goes_to_a_person():
    plan = build_query_plan("If I pull out of the canoe week, do I get my money back?")
    assert plan.sensitivity and low_confidence_reviews(plan)
    terms = _chunk("terms_7", Category.TERMS_POLICY, _between_lines(), 0.6, TERMS_BALANCE)
    assert decide(plan, [terms], CONFIG).outcome.value == "NEEDS_REVIEW"


def test_a_chunk_under_the_low_relevance_line_does_not_lift_the_low_confidence_flag():
    plan = build_query_plan("Can we hire a canoe trailer at the boathouse for the weekend?")
    usable = _chunk("faq_4", Category.FAQ, _between_lines(), 0.6, DAMAGE_DEPOSIT)
    letter = _chunk("news_1", Category.MARKETING, 0.9, CONFIG.score_floor / 2, NEWSLETTER)
    verdict = decide(plan, [letter, usable], CONFIG)
    assert verdict.flags["low_confidence"]
    assert ReasonCode.LOW_CONFIDENCE in verdict.reason_codes
    alone = decide(plan, [letter], CONFIG)
    assert alone.flags["low_confidence"] and alone.outcome.value == "UNKNOWN"


CANOE_JUNE = (
    "Green Gorge Canoe Week - departure 6 June. Seven days on the river from Pine Landing. "
    "The week costs EUR 1,380 per person in a shared tent. Launch is at 10:00 on day one."
)
CANOE_AUGUST = (
    "Green Gorge Canoe Week - departure 15 August. Seven days on the river from Pine Landing. "
    "The week costs EUR 1,290 per person in a shared tent. Launch is at 08:30 on day one."
)


def _departure(chunk: str, title: str, confidence: float, text: str):
    c = _chunk(chunk, Category.TRIP_ITINERARY, confidence, 0.6, text)
    c.version = replace(c.version, title=title, doc_id=chunk.rsplit("_", 1)[0])
    return c


def _two_departures():
    return [
        _departure("june_0", "Green Gorge Canoe Week - 6 June", 0.8, CANOE_JUNE),
        _departure("august_0", "Green Gorge Canoe Week - 15 August", 0.5, CANOE_AUGUST),
    ]


def test_two_departures_stating_no_age_do_not_make_an_age_question_ask_which_departure():
    plan = build_query_plan("My nephew turns 10 this winter - could he come on the canoe week?")
    assert "age" in plan.intents and not plan.dates
    verdict = decide(plan, _two_departures(), CONFIG)
    assert ReasonCode.AMBIGUOUS_CONTEXT not in verdict.reason_codes


def test_two_departures_stating_different_launch_times_still_ask_which_departure():
    plan = build_query_plan("What time is the launch on day one of the canoe week?")
    verdict = decide(plan, _two_departures(), CONFIG)
    assert ReasonCode.AMBIGUOUS_CONTEXT in verdict.reason_codes
    assert verdict.outcome.value == "ASK_CLARIFYING_QUESTION"


def test_an_age_stated_by_one_departure_keeps_the_age_question_open():
    june = CANOE_JUNE + " On the canoe week, children aged 12 and over may come with a parent."
    pack = _two_departures()
    pack[0] = _departure("june_0", "Green Gorge Canoe Week - 6 June", 0.8, june)
    plan = build_query_plan("My nephew turns 10 this winter - could he come on the canoe week?")
    assert ReasonCode.AMBIGUOUS_CONTEXT in decide(plan, pack, CONFIG).reason_codes


def test_a_charge_for_a_service_is_a_price_and_charging_a_car_is_no_payment():
    fee = build_query_plan("Do you add a charge for opening our own bottle at the farm dinner?")
    assert "price" in fee.intents and "payment" not in fee.intents and not fee.policy_like
    van = build_query_plan("Can we plug in and charge the camper van at the campsite overnight?")
    assert "payment" not in van.intents and not van.policy_like
    card = build_query_plan("Please charge the outstanding amount to my Amex card.")
    assert "payment" in card.intents and card.policy_like
    billed = build_query_plan("Why were we charged twice for the room upgrade?")
    assert "payment" in billed.intents and billed.policy_like


SUPPLIER_RATES = (
    "Boatyard contacts and rates for the office. The slipway fee is EUR 40 per launch and "
    "shore power is free at pontoon B. These are our supplier terms; they do not apply to guests."
)
STAFF_ONLY = "Crew handbook (internal, do not forward to guests). Each raft carries six guests."


def test_text_that_says_it_does_not_apply_to_guests_grounds_no_draft():
    assert not_for_guests(SUPPLIER_RATES)
    assert not_for_guests("Prices for the office. Do not quote these rates in guest emails.")
    assert not not_for_guests(STAFF_ONLY)
    plan = build_query_plan("Is there somewhere to plug in an electric van at the pontoon?")
    rates = _chunk("yard_0", Category.OPERATIONS_INTERNAL, 0.85, 0.6, SUPPLIER_RATES)
    verdict = decide(plan, [rates], CONFIG)
    assert verdict.outcome.value == "UNKNOWN"
    assert _codes(verdict) == {"NO_EVIDENCE"} and verdict.flags["low_confidence"]


def test_a_fact_from_a_document_only_marked_internal_can_still_be_drafted():
    plan = build_query_plan("How many guests ride in each raft on the canyon day?")
    crew = _chunk("crew_0", Category.OPERATIONS_INTERNAL, 0.85, 0.6, STAFF_ONLY)
    assert decide(plan, [crew], CONFIG).outcome.value == "OK_TO_DRAFT"


def test_the_visa_card_brand_is_no_permit_question():
    card = build_query_plan("Is it fine to settle the remaining amount with my Visa debit card?")
    assert "permit" not in card.intents
    paid = build_query_plan("We would like to pay the rest with my Visa.")
    assert "permit" not in paid.intents and "payment" in paid.intents
    entry = build_query_plan("Does my partner need a visa to enter Iceland for the glacier week?")
    assert "permit" in entry.intents and entry.policy_like


def test_a_grace_period_after_a_reminder_is_not_the_payment_window():
    grace = "If the balance is late we send a written reminder, allowing 7 days for payment."
    assert not facts_of(grace)
    due = "Your balance must reach us 56 days ahead of the trip; we send a written reminder."
    assert any(key[2] == "payment_due" for key in facts_of(due))
