"""Issue 12, session 10: the precedence requirement met by an authoritative chunk that states the
answer, departures that differ inside one itinerary chunk, and trip logistics asked of no trip
(fresh examples; no golden e-mail is repeated)."""

from __future__ import annotations

from kb_retrieval.models import Category, ReasonCode
from kb_retrieval.query.plan import build_query_plan
from kb_retrieval.retrieval.config import RetrievalConfig
from kb_retrieval.retrieval.departure_agreement import departures_differ_within
from kb_retrieval.retrieval.precedence import precedence_met, states_answer
from kb_retrieval.retrieval.verdict import decide
from tests.test_ranking_rules import cand

CONFIG = RetrievalConfig()
FAQ_TEXT = (
    "When do we pay the rest? The remaining amount falls due some weeks before the start, as "
    "shown on your invoice and in our booking conditions."
)
TERMS_BALANCE = (
    "5. Paying the balance. The balance of the tour price is due 45 days before the start date. "
    "We send a reminder a week earlier."
)
TERMS_COMPLAINTS = (
    "18. Complaints. Tell your guide at once if something is wrong. Written complaints reach us "
    "within 28 days of your return."
)
RIVER_ITINERARY = (
    "Green River Canoe Week 2027. Two departures with the same route. "
    "For the June departure (7 June 2027), the shuttle leaves Moab station at 09:00 on day one. "
    "For the August departure (16 August 2027), the shuttle leaves Moab station at 07:30 on day "
    "one, before the heat."
)


def _chunk(chunk: str, category: Category, confidence: float, relevance: float, text: str):
    """A candidate whose own confidence and relevance (the low-relevance line) differ."""
    c = cand(chunk, category, confidence, text)
    c.relevance = relevance
    return c


def _codes(verdict) -> set[str]:
    return {r.value for r in verdict.reason_codes}


def test_a_terms_chunk_under_the_confidence_line_that_states_the_rule_meets_precedence():
    plan = build_query_plan("When is the final payment due for our canoe week on the Green River?")
    faq = _chunk("faq_0", Category.FAQ, 0.86, 0.35, FAQ_TEXT)
    terms = _chunk("terms_0", Category.TERMS_POLICY, 0.60, 0.30, TERMS_BALANCE)
    verdict = decide(plan, [faq, terms], CONFIG)
    assert plan.policy_like and not plan.sensitivity
    assert ReasonCode.MISSING_REQUIRED_PRECEDENCE not in verdict.reason_codes
    assert verdict.outcome.value == "OK_TO_DRAFT"


def test_a_terms_chunk_on_another_matter_or_under_the_low_relevance_line_does_not():
    plan = build_query_plan("When is the final payment due for our canoe week on the Green River?")
    faq = _chunk("faq_0", Category.FAQ, 0.86, 0.35, FAQ_TEXT)
    other = _chunk("terms_1", Category.TERMS_POLICY, 0.60, 0.30, TERMS_COMPLAINTS)
    verdict = decide(plan, [faq, other], CONFIG)
    assert "MISSING_REQUIRED_PRECEDENCE" in _codes(verdict)
    assert verdict.outcome.value == "NEEDS_REVIEW"
    low = _chunk("terms_0", Category.TERMS_POLICY, 0.60, CONFIG.score_floor / 2, TERMS_BALANCE)
    verdict = decide(plan, [faq, low], CONFIG)
    assert "MISSING_REQUIRED_PRECEDENCE" in _codes(verdict)


def test_a_sensitive_question_or_a_conflict_needs_the_authoritative_chunk_itself_confident():
    refund = build_query_plan("If we cancel 50 days ahead, how much of a refund do we get?")
    assert refund.sensitivity
    terms = _chunk(
        "terms_0",
        Category.TERMS_POLICY,
        0.60,
        0.30,
        "3. Cancelling. Cancellations 45 days or more before the start are refunded less 20%.",
    )
    faq = _chunk("faq_0", Category.FAQ, 0.86, 0.35, "Can we cancel? Yes, see our conditions.")
    assert states_answer(refund, terms.text)
    assert not precedence_met(refund, [terms], {faq.chunk_id}, conflicted=False)
    assert "MISSING_REQUIRED_PRECEDENCE" in _codes(decide(refund, [faq, terms], CONFIG))

    payment = build_query_plan("When is the final payment due for our canoe week?")
    balance = _chunk("terms_2", Category.TERMS_POLICY, 0.60, 0.30, TERMS_BALANCE)
    assert precedence_met(payment, [balance], {"faq_0"}, conflicted=False)
    assert not precedence_met(payment, [balance], {"faq_0"}, conflicted=True)
    # a usable authoritative chunk meets it whatever the topic or the conflicts
    assert precedence_met(refund, [terms], {terms.chunk_id}, conflicted=True)


def test_the_intent_word_alone_is_not_an_answer_sentence():
    # "balance" here is a gym's board; the terms' "balance" is money: the only shared word is
    # the intent's own vocabulary, so the sentence does not answer the question. (Session 12:
    # charging a car is no longer the payment intent at all.)
    plan = build_query_plan("Is there a balance board in the gym of the harbour hotel?")
    assert "payment" in plan.intents
    text = "The balance of 70% of the price falls due 60 days before departure."
    assert not states_answer(plan, text)
    asked = build_query_plan("When is the balance due before departure?")
    assert states_answer(asked, text)


def test_departures_that_differ_inside_one_itinerary_chunk_make_an_undated_question_ask():
    undated = build_query_plan("What time does the shuttle leave Moab station for the canoe week?")
    itinerary = _chunk("green_0", Category.TRIP_ITINERARY, 0.93, 0.80, RIVER_ITINERARY)
    assert departures_differ_within(undated, itinerary.text)
    verdict = decide(undated, [itinerary], CONFIG)
    assert verdict.outcome.value == "ASK_CLARIFYING_QUESTION"
    assert _codes(verdict) == {"AMBIGUOUS_CONTEXT"}
    dated = build_query_plan(
        "What time does the shuttle leave Moab station on 16 August for the canoe week?"
    )
    assert decide(dated, [itinerary], CONFIG).outcome.value == "OK_TO_DRAFT"


def test_departures_stating_the_same_value_or_no_asked_value_do_not_differ():
    undated = build_query_plan("What time does the shuttle leave Moab station for the canoe week?")
    same = RIVER_ITINERARY.replace("07:30", "09:00")
    assert not departures_differ_within(undated, same)
    price = build_query_plan("Is there a bike rental in Moab during the canoe week?")
    assert not departures_differ_within(price, RIVER_ITINERARY)


def test_logistics_of_no_named_trip_ask_only_when_an_itinerary_is_above_the_line():
    plan = build_query_plan("Can you pick us up at the airport, and what would that cost?")
    assert "pickup" in plan.intents and not plan.trip_names
    faq = _chunk(
        "faq_0",
        Category.FAQ,
        0.85,
        0.50,
        "Airport transfers. A private car from the airport costs EUR 90 each way; book a week "
        "ahead.",
    )
    canoe = _chunk("canoe_0", Category.TRIP_ITINERARY, 0.40, CONFIG.score_floor / 2, "Day 1 canoe")
    hike = _chunk("hike_0", Category.TRIP_ITINERARY, 0.40, CONFIG.score_floor / 2, "Day 1 hike")
    assert decide(plan, [faq, canoe, hike], CONFIG).outcome.value == "OK_TO_DRAFT"
    canoe_plausible = _chunk("canoe_0", Category.TRIP_ITINERARY, 0.40, 0.30, "Day 1 canoe")
    verdict = decide(plan, [faq, canoe_plausible, hike], CONFIG)
    assert verdict.outcome.value == "ASK_CLARIFYING_QUESTION"


def test_the_dated_days_of_one_programme_are_not_departures():
    undated = build_query_plan("What time does the shuttle leave Moab station for the canoe week?")
    programme = (
        "Green River Canoe Week, 7 to 13 June 2027. "
        "On 7 June the shuttle leaves Moab station at 09:00 for the put-in. "
        "On 13 June the shuttle leaves the take-out for Moab station at 15:00."
    )
    assert not departures_differ_within(undated, programme)


def test_the_value_own_words_are_not_words_of_the_question():
    # "day" of "45 days" is the value's unit, not the "day trip" the guest asks about
    plan = build_query_plan("Do the gift cards for a day trip expire, and when do we pay?")
    assert "payment" in plan.intents
    assert not states_answer(plan, "We collect the remaining balance 45 days ahead of the start.")
    assert states_answer(plan, "Gift cards can pay for any day trip within 12 months.")
