"""A chunk left out of the pack that states the asked value about the asked thing is read for
conflicts (verdict.conflict_chunks, session 15): fresh wording, no golden e-mail."""

from __future__ import annotations

from kb_retrieval.models import Category, Outcome
from kb_retrieval.query.plan import build_query_plan
from kb_retrieval.retrieval.config import RetrievalConfig
from kb_retrieval.retrieval.typed_answer import TYPED_ANSWER
from kb_retrieval.retrieval.verdict import TYPED_OUTSIDE_MAX, conflict_chunks, decide
from tests.test_ranking_rules import cand

CONFIG = RetrievalConfig()
QUESTION = "If the two of us cancel the rafting weekend, until when is the refund in full?"
POLICY = "Refunds. Cancellations within 10 calendar days of departure are non-refundable."
TERMS = "8. If you cancel. No refund is made for cancellations within 10 days of departure."
WEBSITE = "Plan with confidence: free cancellation up to 48 hours before your rafting trip!"


def _pack_and_outside(states_answer: bool):
    policy = cand("policy_0", Category.STRUCTURED_POLICY, 0.93, POLICY)
    policy.relevance = 0.7
    terms = cand("terms_0", Category.TERMS_POLICY, 0.88, TERMS)
    terms.relevance = 0.6
    # The website line shares few words with the e-mail: under every floor and line.
    website = cand("site_0", Category.MARKETING, 0.21, WEBSITE)
    website.relevance = CONFIG.relevance_floor / 2
    website.features[TYPED_ANSWER] = float(states_answer)
    return [policy, terms], [website]


def test_an_outside_chunk_stating_the_asked_value_is_read_for_conflicts():
    pack, outside = _pack_and_outside(states_answer=True)
    assert [c.chunk_id for c in conflict_chunks(pack, outside, CONFIG)] == [
        "policy_0",
        "terms_0",
        "site_0",
    ]
    plan = build_query_plan(QUESTION)
    verdict = decide(plan, pack, CONFIG, outside=outside)
    assert verdict.flags["conflicting_evidence"]
    assert verdict.outcome is Outcome.NEEDS_REVIEW


def test_an_outside_chunk_that_states_no_typed_answer_is_not():
    pack, outside = _pack_and_outside(states_answer=False)
    assert [c.chunk_id for c in conflict_chunks(pack, outside, CONFIG)] == ["policy_0", "terms_0"]
    verdict = decide(build_query_plan(QUESTION), pack, CONFIG, outside=outside)
    assert not verdict.flags["conflicting_evidence"]


def test_a_window_stated_as_n_or_more_days_is_compared_with_one_stated_as_up_to():
    from kb_retrieval.retrieval.conflicts import NUMERIC_WINDOW, detect_conflicts
    from kb_retrieval.retrieval.verdict import _inputs

    policy = cand(
        "policy_0",
        Category.STRUCTURED_POLICY,
        0.9,
        "Refunds. Paddling holidays cancelled 28 or more days before the start are refunded "
        "in full.",
    )
    site = cand(
        "site_0", Category.MARKETING, 0.2, "Cancel up to 3 days before the start: full refund."
    )
    [conflict] = detect_conflicts(_inputs([policy, site]), exception_request=False)
    assert (conflict.kind, conflict.values) == (NUMERIC_WINDOW, ("3 days", "28 days"))


def test_only_the_best_ranked_left_out_typed_answers_are_read():
    pack, _ = _pack_and_outside(states_answer=True)
    outside = []
    for i in range(TYPED_OUTSIDE_MAX + 2):
        chunk = cand(f"page{i}_0", Category.MARKETING, 0.2, WEBSITE)
        chunk.features[TYPED_ANSWER] = 1.0
        outside.append(chunk)
    usable = cand("faq_0", Category.FAQ, 0.8, "Refunds follow the booking conditions.")
    read = [c.chunk_id for c in conflict_chunks(pack, [*outside, usable], CONFIG)]
    expected = [f"page{i}_0" for i in range(TYPED_OUTSIDE_MAX)]
    assert read == ["policy_0", "terms_0", *expected, "faq_0"]
