"""Issue 12, session 11: verdict rules that fired on the wrong cases (fresh examples; no golden
e-mail is repeated)."""

from __future__ import annotations

from kb_retrieval.models import Category, ReasonCode
from kb_retrieval.query.plan import build_query_plan
from kb_retrieval.retrieval.config import RetrievalConfig
from kb_retrieval.retrieval.conflicts import ConflictInput, detect_conflicts
from kb_retrieval.retrieval.denial_conflicts import denial_conflicts
from kb_retrieval.retrieval.verdict import decide
from tests.test_verdict_session10 import _chunk

CONFIG = RetrievalConfig()
POLICY_DEPOSIT = (
    "Deposit and balance. A deposit of 20% of the hike price is due when you book. What remains "
    "is payable 60 days ahead of the first hiking day."
)
FAQ_DEPOSIT = (
    "How do I secure my booking? Pay the deposit shown on your invoice; the rest follows some "
    "weeks before you travel."
)


def test_the_amount_or_due_date_of_a_deposit_is_not_a_refund_matter():
    for email in (
        "What deposit do you take for the canyon hike, and by when must the remainder be paid?",
        "Deposit sent yesterday by bank transfer. Which hotel do we meet at on day one?",
    ):
        plan = build_query_plan(email)
        assert "deposit" in plan.intents and plan.policy_like
        assert "refund" not in plan.sensitivity


def test_getting_a_deposit_back_or_losing_it_stays_a_refund_matter():
    for email in (
        "If my knee surgery runs late and I have to drop out, is the deposit returned to me?",
        "Would we lose our deposit if the tour date moves?",
        "Do you keep the deposit when a guest withdraws in spring?",
        "Is the deposit for the canoe trip returnable?",
    ):
        assert "refund" in build_query_plan(email).sensitivity, email


def test_refund_words_still_make_a_deposit_email_sensitive():
    plan = build_query_plan("Is the deposit refundable if we change our minds in March?")
    assert "refund" in plan.sensitivity


def test_a_deposit_question_answered_by_the_policy_below_the_confidence_line_is_drafted():
    """Not sensitive, so the policy chunk that states the answer meets the precedence
    requirement (session 10's rule) and the confident FAQ grounds the draft."""
    plan = build_query_plan("How big is the deposit for the canyon hike, and when is the rest due?")
    faq = _chunk("faq_0", Category.FAQ, 0.80, 0.40, FAQ_DEPOSIT)
    policy = _chunk("policy_0", Category.STRUCTURED_POLICY, 0.40, 0.30, POLICY_DEPOSIT)
    verdict = decide(plan, [faq, policy], CONFIG)
    assert ReasonCode.MISSING_REQUIRED_PRECEDENCE not in verdict.reason_codes
    assert verdict.outcome.value == "OK_TO_DRAFT"


def test_a_refund_question_on_the_same_evidence_still_needs_the_policy_to_be_confident():
    plan = build_query_plan("Can we get the deposit for the canyon hike back if we withdraw?")
    faq = _chunk("faq_0", Category.FAQ, 0.80, 0.40, FAQ_DEPOSIT)
    policy = _chunk("policy_0", Category.STRUCTURED_POLICY, 0.40, 0.30, POLICY_DEPOSIT)
    verdict = decide(plan, [faq, policy], CONFIG)
    assert "refund" in plan.sensitivity
    assert ReasonCode.MISSING_REQUIRED_PRECEDENCE in verdict.reason_codes
    assert verdict.outcome.value == "NEEDS_REVIEW"


def _input(chunk: str, category: Category, text: str, rank: int) -> ConflictInput:
    return ConflictInput(chunk, chunk.rsplit("_", 1)[0], f"{chunk}_v", category, text, None, rank)


def _deposit_conflicts(policy: str, terms: str) -> list[str]:
    chunks = [
        _input("policy_0", Category.STRUCTURED_POLICY, policy, 0),
        _input("terms_0", Category.TERMS_POLICY, terms, 1),
    ]
    return [c.detail for c in detect_conflicts(chunks, exception_request=False)]


def test_amounts_of_one_agreed_deposit_rate_applied_to_different_prices_do_not_conflict():
    policy = (
        "A deposit of 25% of the tour price confirms a place; for the Glacier Traverse the "
        "minimum deposit is EUR 700 per person."
    )
    terms = (
        "A deposit of 25% of the tour price is payable on booking. Worked example: two walkers "
        "on a tour costing EUR 3,000 each paid a deposit of EUR 1,500 between them."
    )
    assert _deposit_conflicts(policy, terms) == []


def test_amounts_still_conflict_when_the_rates_differ_or_no_rate_is_stated():
    policy = "A deposit of 25% of the tour price confirms a place; the minimum deposit is EUR 700."
    other_rate = "A deposit of 40% of the tour price is payable; the minimum deposit is EUR 900."
    assert any("currency" in d for d in _deposit_conflicts(policy, other_rate))
    flat = "Each guest pays a flat deposit of EUR 300 when booking a kayak day."
    other_flat = "Each guest pays a flat deposit of EUR 450 when booking a kayak day."
    assert any("currency" in d for d in _deposit_conflicts(flat, other_flat))


def test_a_risk_named_as_what_insurance_covers_is_not_a_safety_matter():
    for email in (
        "Must we hold travel insurance for the desert week? Mine might not include evacuation.",
        "How much emergency evacuation cover should our insurance policy carry for the canoe trip?",
    ):
        plan = build_query_plan(email)
        assert "insurance" in plan.intents and plan.policy_like
        assert "safety" not in plan.sensitivity, email


def test_a_safety_question_beside_an_insurance_question_stays_sensitive():
    for email in (
        "Is the glacier crossing dangerous, and is travel insurance required?",
        "Do we need insurance? My son injured his wrist climbing last month.",
        "Who organises a helicopter rescue if someone falls on the ridge?",
    ):
        assert "safety" in build_query_plan(email).sensitivity, email


def test_a_reminder_before_the_balance_falls_due_is_not_the_balance_window():
    policy = "Balance. What remains is payable 75 days ahead of the first tour day."
    terms = (
        "Paying the balance. The balance is payable 75 days ahead of the tour. A reminder goes "
        "out about ten days before the balance falls due."
    )
    assert _deposit_conflicts(policy, terms) == []


def test_a_sentence_opening_on_it_takes_the_topic_the_sentence_before_names():
    """The policy's 5 days are the damage deposit's, so they contradict the terms' 21 days."""
    policy = (
        "Damage deposit. Every canoe carries a EUR 200 damage deposit, taken at the put-in. "
        "It is paid back within 5 days of the take-out."
    )
    terms = "The damage deposit is paid back within 21 days of the take-out, less any repairs."
    found = _deposit_conflicts(policy, terms)
    assert any("deposit duration" in d for d in found), found


def test_a_schedule_line_granting_money_back_meets_a_flat_refusal_of_the_same_extra():
    policy = (
        "Sea-cave tour add-on. Cave tours booked as an extra may be cancelled up to 10 days "
        "before the tour date with a refund less a EUR 20 fee; later they are non-refundable."
    )
    terms = (
        "Sea-cave tours booked through us are non-refundable once the boatman confirms them, "
        "which happens within two days of your request."
    )
    chunks = [
        _input("policy_0", Category.STRUCTURED_POLICY, policy, 0),
        _input("terms_0", Category.TERMS_POLICY, terms, 1),
    ]
    found = denial_conflicts(chunks)
    assert [c.chunk_ids for c in found] == [("terms_0", "policy_0")]
