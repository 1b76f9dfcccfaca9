"""Issue 12, session 11: verdict rules that fired on the wrong cases (fresh examples; no golden
e-mail is repeated)."""

from __future__ import annotations

from kb_retrieval.models import Category, ReasonCode
from kb_retrieval.query.plan import build_query_plan
from kb_retrieval.retrieval.config import RetrievalConfig
from kb_retrieval.retrieval.verdict import decide
from tests.test_ranking_rules import cand

CONFIG = RetrievalConfig()
POLICY_DEPOSIT = (
    "Deposit and balance. A deposit of 20% of the hike price is due when you book. What remains "
    "is payable 60 days ahead of the first hiking day."
)
FAQ_DEPOSIT = (
    "How do I secure my booking? Pay the deposit shown on your invoice; the rest follows some "
    "weeks before you travel."
)


def _chunk(chunk: str, category: Category, confidence: float, relevance: float, text: str):
    """A candidate whose own confidence and relevance (the low-relevance line) differ."""
    c = cand(chunk, category, confidence, text)
    c.relevance = relevance
    return c


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
