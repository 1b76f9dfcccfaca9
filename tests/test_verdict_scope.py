"""Issue 12, session 6: which conflicts bear on the e-mail, values the guest states, asking which
departure before abstaining, commitments (fresh examples; no golden e-mail is repeated)."""

from __future__ import annotations

import dataclasses

from kb_retrieval.models import Category
from kb_retrieval.query.plan import build_query_plan
from kb_retrieval.retrieval.config import RetrievalConfig
from kb_retrieval.retrieval.conflict_scope import bears_on, claim_conflicts, question_topics
from kb_retrieval.retrieval.conflicts import CLAIM_CONTRADICTED, ConflictInput, detect_conflicts
from kb_retrieval.retrieval.verdict import decide
from tests.test_ranking_rules import cand

CONFIG = RetrievalConfig()
POLICY_TEXT = (
    "Booking deposit: 40% of the tour price is due at booking. Cancellations made 50 days or "
    "more before the start date are refunded less the deposit."
)
TERMS_TEXT = (
    "4.2 Deposit. A deposit of 15% of the tour price confirms your booking. "
    "4.3 Safety. Every rider must wear the helmet we provide; we supply helmets in all sizes."
)


def _inputs(*chunks) -> list[ConflictInput]:
    return [
        ConflictInput(c.chunk_id, c.version.doc_id, c.version.doc_version_id,
                      c.version.category, c.text, None, i)
        for i, c in enumerate(chunks)
    ]  # fmt: skip


def _titled(chunk, title: str):
    chunk.version = dataclasses.replace(chunk.version, title=title)
    return chunk


def test_question_topics_come_from_intents_and_the_topics_own_keywords():
    assert "deposit" in question_topics("how big is the deposit for the bike tour?", ())
    helmet = build_query_plan("Do I have to bring my own helmet for the bike tour?")
    assert "deposit" not in question_topics(helmet.guest_text, helmet.intents)
    refund = build_query_plan("If we cancel in March, how much of a refund is there?")
    assert {"cancellation", "deposit"} <= question_topics(refund.guest_text, refund.intents)


def test_a_disagreement_on_a_topic_not_asked_about_does_not_bear_on_the_question():
    policy = cand("policy_0", Category.STRUCTURED_POLICY, 0.5, POLICY_TEXT)
    terms = cand("terms_0", Category.TERMS_POLICY, 0.9, TERMS_TEXT)
    conflicts = detect_conflicts(_inputs(policy, terms), exception_request=False)
    deposit = [c for c in conflicts if c.topic == "deposit"]
    assert deposit, conflicts
    both = frozenset({"policy_0", "terms_0"})
    assert bears_on(deposit[0], frozenset({"deposit"}), both)
    assert not bears_on(deposit[0], frozenset({"pickup"}), both)
    # one side under the low-relevance line: the model finds it unrelated to this e-mail
    assert not bears_on(deposit[0], frozenset({"deposit"}), frozenset({"terms_0"}))

    helmet = build_query_plan("Is a helmet provided on the bike tour, and is it compulsory?")
    verdict = decide(helmet, [terms, policy], CONFIG)
    assert not verdict.conflicts and verdict.outcome.value == "OK_TO_DRAFT"
    deposit_question = build_query_plan("What deposit do you need to confirm our bike tour?")
    verdict = decide(deposit_question, [terms, policy], CONFIG)
    assert verdict.flags["conflicting_evidence"]
    assert "CONFLICT_DETECTED" in [r.value for r in verdict.reason_codes]


def test_a_value_the_guest_states_that_the_policy_contradicts_is_a_conflict():
    policy = cand("policy_0", Category.STRUCTURED_POLICY, 0.8, POLICY_TEXT)
    claim = (
        "the leaflet told us withdrawing as late as 20 days before the start gets it all back, "
        "so please cancel our tour"
    )
    found = claim_conflicts(claim, _inputs(policy))
    assert [c.kind for c in found] == [CLAIM_CONTRADICTED]
    assert found[0].chunk_ids == ("policy_0",) and "20 days" in found[0].values
    # a value of the guest's own situation is not a claim about the terms
    situation = "we start in about 5 weeks and have to cancel, booked 10 days ago"
    assert claim_conflicts(situation, _inputs(policy)) == []
    assert claim_conflicts("we were told cancelling 3 weeks before is fine", _inputs(policy))
    # the policy states the guest's value: nothing to contradict
    agreeing = "we read that cancelling 50 days before the start gets it back less the deposit"
    assert claim_conflicts(agreeing, _inputs(policy)) == []
    # a time of day the guest names is their own plan, not a claim about the terms
    pickup = cand("terms_1", Category.TERMS_POLICY, 0.8, "The bus leaves the depot at 07:30.")
    assert claim_conflicts("the bus leaves the depot at 09:00 right?", _inputs(pickup)) == []
    # lower tiers never answer for the policy
    faq = cand("faq_0", Category.FAQ, 0.8, "Cancel 60 days before the start for a refund.")
    assert claim_conflicts(claim, _inputs(faq)) == []


def test_the_guests_contradicted_claim_sends_a_refund_question_to_review():
    question = build_query_plan(
        "Hi, the leaflet told us withdrawing as late as 20 days ahead of the start brings a full "
        "refund. We set off in five weeks - please confirm."
    )
    policy = cand("policy_0", Category.STRUCTURED_POLICY, 0.8, POLICY_TEXT)
    verdict = decide(question, [policy], CONFIG)
    assert verdict.outcome.value == "NEEDS_REVIEW"
    assert [c.kind for c in verdict.conflicts] == [CLAIM_CONTRADICTED]
    assert "CONFLICT_DETECTED" in [r.value for r in verdict.reason_codes]


def _itinerary(chunk: str, title: str, conf: float, relevance: float):
    c = _titled(cand(chunk, Category.TRIP_ITINERARY, conf, f"{title}. Day one pickup."), title)
    c.relevance = relevance
    return c


def test_no_usable_chunk_but_the_answer_depends_on_the_trip_asks_which():
    question = build_query_plan("What time is the pickup from the hotel on day one?")
    floor = CONFIG.score_floor
    pack = [
        _itinerary("lakes_0", "Lakes Loop 5 Days", 0.5, floor + 0.1),
        _itinerary("coast_0", "Coast Ride 6 Days", 0.45, floor + 0.05),
    ]
    verdict = decide(question, pack, CONFIG)
    assert verdict.outcome.value == "ASK_CLARIFYING_QUESTION"
    assert [r.value for r in verdict.reason_codes] == ["AMBIGUOUS_CONTEXT"]
    # only one trip above the low-relevance line: nothing to ask about, abstain
    pack[1].relevance = floor / 2
    assert decide(question, pack, CONFIG).outcome.value == "UNKNOWN"
    # a date pins the departure
    dated = build_query_plan("What time is the pickup from the hotel on day one, 3 May?")
    pack[1].relevance = floor + 0.05
    assert decide(dated, pack, CONFIG).outcome.value == "UNKNOWN"


def test_a_trip_context_naming_only_the_product_does_not_pin_the_departure():
    context = {"product_name": "Lakes Loop"}
    question = build_query_plan(
        "At what hour is the opening-morning rendezvous?", trip_context=context
    )
    assert question.context_undated
    pack = [
        _itinerary("lakes_may_0", "Lakes Loop - Departure 4 May", 0.9, 0.6),
        _itinerary("lakes_sep_0", "Lakes Loop - Departure 7 September", 0.88, 0.55),
    ]
    verdict = decide(question, pack, CONFIG, has_trip_context=True)
    assert verdict.outcome.value == "ASK_CLARIFYING_QUESTION"
    dated = {"product_name": "Lakes Loop", "trip_date": "2027-05-04"}
    pinned = build_query_plan("At what hour is the opening-morning rendezvous?", trip_context=dated)
    assert not pinned.context_undated
    assert decide(pinned, pack, CONFIG, has_trip_context=True).outcome.value == "OK_TO_DRAFT"


def test_closing_pleasantries_alone_do_not_pass_the_quality_gate():
    for text in ("Many thanks, see you soon!", "Thank you so much, looking forward to it"):
        assert not build_query_plan(text).quality_ok, text
    assert build_query_plan("Looking forward to it - are electric bikes available?").quality_ok


def test_a_discount_is_grounded_only_by_authoritative_text_that_states_one():
    question = build_query_plan("A friend said students ride for free in June. Is that right?")
    assert "discount" in question.intents and question.policy_like
    unrelated = cand(
        "terms_5", Category.TERMS_POLICY, 0.8, "We may revise these conditions at any time."
    )
    verdict = decide(question, [unrelated], CONFIG)
    assert verdict.outcome.value == "NEEDS_REVIEW"
    assert "MISSING_REQUIRED_PRECEDENCE" in [r.value for r in verdict.reason_codes]
    stating = cand(
        "terms_6", Category.TERMS_POLICY, 0.8, "Students receive a 10% discount on every tour."
    )
    assert decide(question, [stating, unrelated], CONFIG).outcome.value == "OK_TO_DRAFT"


def test_a_document_version_that_states_the_policys_value_somewhere_does_not_contradict_it():
    policy = cand(
        "policy_0", Category.STRUCTURED_POLICY, 0.8, "A deposit of 25% is due at booking."
    )
    agreeing = cand("terms_0", Category.TERMS_POLICY, 0.8, "2.1 Deposit. You pay a deposit of 25%.")
    table_row = cand(
        "terms_1", Category.TERMS_POLICY, 0.8, "Days before start / charge: loss of deposit 50%"
    )
    assert {c.kind for c in detect_conflicts(_inputs(policy, table_row), exception_request=False)}
    together = detect_conflicts(_inputs(policy, agreeing, table_row), exception_request=False)
    assert [c for c in together if c.topic == "deposit"] == []


def test_a_usable_chunk_past_the_packs_first_six_is_read_for_conflicts():
    question = build_query_plan("Can we cancel the bike tour and get a full refund?")
    policy = cand(
        "policy_0",
        Category.STRUCTURED_POLICY,
        0.9,
        "Cancellations 45 days or more before the start are refunded in full.",
    )
    filler = [cand(f"terms_{i}", Category.TERMS_POLICY, 0.5, f"Clause {i}.") for i in range(6)]
    flyer = cand(
        "flyer_0",
        Category.MARKETING,
        0.8,
        "Withdraw as late as 10 days ahead of the start and get the full amount back.",
    )
    verdict = decide(question, [policy, *filler, flyer], CONFIG)
    assert any("flyer_0" in c.chunk_ids for c in verdict.conflicts)
    assert verdict.outcome.value == "NEEDS_REVIEW"
