"""Issue 12, session 7: verdict errors that are not confidence thresholds (fresh examples; no
golden e-mail is repeated)."""

from __future__ import annotations

import dataclasses

from kb_retrieval.models import Category
from kb_retrieval.query.plan import build_query_plan
from kb_retrieval.retrieval.config import RetrievalConfig
from kb_retrieval.retrieval.conflict_facts import states_window
from kb_retrieval.retrieval.conflicts import detect_conflicts
from kb_retrieval.retrieval.departure_agreement import answer_values, departures_agree
from kb_retrieval.retrieval.verdict import decide
from kb_retrieval.text.quantities import extract_quantities
from tests.test_ranking_rules import cand
from tests.test_verdict_scope import _inputs

CONFIG = RetrievalConfig()
POLICY = "Payment schedule. The remaining balance must be paid 45 days before the tour starts."
TERMS_REMINDER = (
    "6. Reminders. Our office e-mails a payment reminder 12 days ahead of the balance "
    "deadline. Balance questions: call the 24 hours assistance line."
)
TERMS_OTHER_DEADLINE = (
    "6. Paying. The remaining balance must be paid 30 days before the tour starts."
)


def _durations(text: str) -> dict[str, bool]:
    return {q.label: states_window(q) for q in extract_quantities(text) if q.kind == "duration"}


def test_an_offset_from_a_deadline_or_a_services_hours_is_not_a_window():
    windows = _durations(TERMS_REMINDER)
    assert windows == {"12 days": False, "24 hours": False}
    assert _durations("Cancel up to 10 days before departure for a full refund.") == {
        "10 days": True
    }


def test_a_reminder_before_the_due_date_does_not_contradict_the_policys_deadline():
    policy = cand("policy_0", Category.STRUCTURED_POLICY, 0.8, POLICY)
    reminder = cand("terms_0", Category.TERMS_POLICY, 0.8, TERMS_REMINDER)
    assert detect_conflicts(_inputs(policy, reminder), exception_request=False) == []
    # a terms deadline that really differs is still a conflict
    other = cand("terms_0", Category.TERMS_POLICY, 0.8, TERMS_OTHER_DEADLINE)
    found = detect_conflicts(_inputs(policy, other), exception_request=False)
    assert [(c.kind, c.topic) for c in found] == [("policy_terms_disagreement", "payment_due")]


def test_whether_a_permit_licence_or_visa_is_needed_is_policy_like():
    for question in (
        "Can my son fly his drone over the bay, or is a permit required?",
        "Does the skipper need to see a licence before I steer the tender?",
        "Is a visa needed for guests travelling on a Canadian passport?",
    ):
        plan = build_query_plan(question)
        assert "permit" in plan.intents and plan.policy_like, question
    assert "permit" not in build_query_plan("Is swimming permitted off the jetty?").intents


def test_asking_when_a_trip_ends_is_departure_logistics():
    for question in (
        "When does the course finish on the final day? Our train is at five.",
        "What time will we get back to the harbour after the last sail?",
        "Could you tell me the return time on the final afternoon?",
    ):
        assert "pickup" in build_query_plan(question).intents, question
    assert "pickup" not in build_query_plan("Can we return the rented wetsuits early?").intents


def test_being_late_with_a_payment_asks_for_an_exception():
    late = build_query_plan(
        "We are running two weeks late with our final payment for the October retreat; "
        "can the places stay reserved until the end of the month?"
    )
    assert late.exception_request
    assert "exceptions" in late.sensitivity
    fee = build_query_plan("What happens if a payment arrives late? Is there a late payment fee?")
    assert not fee.exception_request


def _departure(chunk: str, title: str, text: str, conf: float = 0.9):
    c = cand(chunk, Category.TRIP_ITINERARY, conf, text, doc=chunk.rsplit("_", 1)[0])
    c.version = dataclasses.replace(c.version, title=title)
    c.relevance = 0.6
    return c


MAY_START = (
    "Day 1. We meet at the Harbour Inn at 16:00. Day 2. Breakfast at 07:30 and we set off at 08:30."
)
SEP_START = (
    "Day 1. We meet at the Harbour Inn at 14:30. Day 2. Breakfast at 06:30 and we set off at 07:15."
)
LAST_DAY = "Day 6. The minibus reaches the railway station at 13:10, in time for the 14:00 train."


def test_departures_that_state_the_same_answer_need_no_clarifying_question():
    pack = [
        _departure("cliffs_may_0", "Cliff Path Week - Departure 2 May", f"{MAY_START}\n{LAST_DAY}"),
        _departure("cliffs_sep_0", "Cliff Path Week - Departure 5 Sep", f"{SEP_START}\n{LAST_DAY}"),
    ]
    end = build_query_plan(
        "On the Cliff Path Week, what time does the minibus reach the railway station on the "
        "last day?",
        known_entities=["Cliff Path"],
    )
    assert answer_values(end, pack[0].text) == {"13:10", "14:00"}
    assert departures_agree(end, pack, {"cliffs_may", "cliffs_sep"}, pack)
    assert decide(end, pack, CONFIG).outcome.value == "OK_TO_DRAFT"
    start = build_query_plan(
        "On the Cliff Path Week, what time do we set off after breakfast on day 2?",
        known_entities=["Cliff Path"],
    )
    assert not departures_agree(start, pack, {"cliffs_may", "cliffs_sep"}, pack)
    verdict = decide(start, pack, CONFIG)
    assert verdict.outcome.value == "ASK_CLARIFYING_QUESTION"
    assert [r.value for r in verdict.reason_codes] == ["AMBIGUOUS_CONTEXT"]


def test_a_value_stated_elsewhere_in_the_other_departure_does_not_make_them_agree():
    may = _departure("ridge_may_0", "Ridge Walk - Departure 2 May", "Day 1. We meet at 17:00.")
    sep = _departure(
        "ridge_sep_0",
        "Ridge Walk - Departure 5 Sep",
        "Day 1. We meet at 15:30. The sauna opens at 17:00 every evening.",
    )
    meet = build_query_plan(
        "What time do we meet on day 1 of the Ridge Walk?", known_entities=["Ridge Walk"]
    )
    assert not departures_agree(meet, [may, sep], {"ridge_may", "ridge_sep"}, [may, sep])
    # one departure alone, or no value in the answer: nothing shows they agree
    assert not departures_agree(meet, [may], {"ridge_may"}, [may])
