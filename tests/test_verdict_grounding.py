"""Verdict grounding rules of issue 12 (fresh examples; no golden e-mail is repeated)."""

from __future__ import annotations

from kb_retrieval.models import Category
from kb_retrieval.query.plan import build_query_plan
from kb_retrieval.retrieval.case_answerability import CaseAnswerabilityModel
from kb_retrieval.retrieval.config import RetrievalConfig
from kb_retrieval.retrieval.verdict import admit_conflicting, decide
from tests.test_ranking_rules import cand

CONFIG = RetrievalConfig()


def test_a_low_relevance_chunk_never_grounds_a_draft():
    question = build_query_plan("Can guests borrow a hair dryer at the lodge?")
    off_topic = cand("faq_3", Category.FAQ, 0.86)
    off_topic.relevance = CONFIG.score_floor / 2
    verdict = decide(question, [off_topic], CONFIG)
    assert verdict.outcome.value == "UNKNOWN"
    assert [r.value for r in verdict.reason_codes] == ["NO_EVIDENCE"]
    on_topic = cand("faq_4", Category.FAQ, 0.86)
    on_topic.relevance = CONFIG.score_floor
    assert decide(question, [off_topic, on_topic], CONFIG).outcome.value == "OK_TO_DRAFT"


def _policy_pack() -> list:
    terms = [
        cand(f"terms_{i}", Category.TERMS_POLICY, 0.9 - i / 100, f"Clause {i} about bikes.")
        for i in range(9)
    ]
    policy = cand(
        "policy_0",
        Category.STRUCTURED_POLICY,
        0.92,
        "Guests who cancel 45 days or less before the start date receive no refund.",
    )
    return [policy, *terms]


def test_a_brochure_promise_left_out_of_a_full_pack_is_still_read_and_cited():
    question = build_query_plan(
        "If we cancel in August for a late-September ride, what do we get back?"
    )
    pack = _policy_pack()
    flyer = cand(
        "flyer_0",
        Category.MARKETING,
        0.7,
        "Change of plans? Cancel up to 14 days before the ride and get a full refund.",
    )
    alone = decide(question, pack, CONFIG)
    assert not alone.conflicts
    verdict = decide(question, pack, CONFIG, outside=[flyer])
    assert verdict.flags["conflicting_evidence"] and verdict.outcome.value == "NEEDS_REVIEW"
    assert "flyer_0" in verdict.conflicts[0].chunk_ids
    admitted = admit_conflicting(pack, [flyer], verdict, CONFIG.pack_max)
    assert len(admitted) == CONFIG.pack_max and admitted[-1] is flyer
    assert admitted[:-1] == pack[:-1]


def test_an_unusable_outside_chunk_is_not_read_for_conflicts():
    question = build_query_plan(
        "If we cancel in August for a late-September ride, what do we get back?"
    )
    flyer = cand(
        "flyer_0",
        Category.MARKETING,
        CONFIG.unknown_threshold - 0.01,
        "Change of plans? Cancel up to 14 days before the ride and get a full refund.",
    )
    verdict = decide(question, _policy_pack(), CONFIG, outside=[flyer])
    assert not verdict.conflicts
    assert (
        admit_conflicting(_policy_pack(), [flyer], verdict, CONFIG.pack_max)[-1].chunk_id
        == "terms_8"
    )


def _likely(bias: float) -> RetrievalConfig:
    """A config whose case model gives sigmoid(bias + 4 * best vector) for any pool."""
    case = CaseAnswerabilityModel(bias=bias, weights={"vector_best": 4.0})
    model = CONFIG.answerability.model_copy(update={"case": case})
    return CONFIG.model_copy(update={"answerability": model})


def _weak(chunk_id: str, category: Category, text: str = "chunk text"):
    chunk = cand(chunk_id, category, CONFIG.unknown_threshold - 0.2, text)
    chunk.features = {"vector_best": 0.5}
    return chunk


def test_a_sensitive_question_the_case_model_finds_answered_goes_to_a_person():
    question = build_query_plan(
        "My daughter has type 1 diabetes; can she keep her insulin pump on during the climb?"
    )
    assert question.sensitivity
    pack = [_weak("safety_2", Category.SAFETY_MEDICAL)]
    likely = _likely(0.0)  # sigmoid(2.0) = 0.88
    verdict = decide(question, pack, likely)
    assert verdict.outcome.value == "NEEDS_REVIEW"
    assert "LOW_CONFIDENCE" in [r.value for r in verdict.reason_codes]
    assert "NO_EVIDENCE" not in [r.value for r in verdict.reason_codes]
    unlikely = _likely(-3.0)  # sigmoid(-1.0) = 0.27
    assert decide(question, pack, unlikely).outcome.value == "UNKNOWN"
    off = likely.model_copy(update={"answerability_review": False})
    assert decide(question, pack, off).outcome.value == "UNKNOWN"


def test_a_plain_question_without_usable_evidence_stays_unknown_whatever_the_case_model():
    question = build_query_plan("Can guests borrow a hair dryer at the lodge?")
    assert not question.policy_like and not question.sensitivity
    verdict = decide(question, [_weak("faq_3", Category.FAQ)], _likely(0.0))
    assert verdict.outcome.value == "UNKNOWN"
    assert [r.value for r in verdict.reason_codes] == ["NO_EVIDENCE"]


def test_the_case_model_reads_chunks_left_out_of_the_pack():
    question = build_query_plan("Is the deposit refundable if we change our minds next month?")
    assert question.policy_like
    pack = [_weak("faq_1", Category.FAQ)]
    pack[0].features = {"vector_best": -1.0}
    config = _likely(0.0)
    assert decide(question, pack, config).outcome.value == "UNKNOWN"
    outside = [_weak("terms_4", Category.TERMS_POLICY)]
    assert decide(question, pack, config, outside=outside).outcome.value == "NEEDS_REVIEW"
