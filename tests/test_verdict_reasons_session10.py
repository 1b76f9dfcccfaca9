"""Session 10: the verdict reports its real reasons, stale-only evidence and conflicts, also when
no chunk is usable (fresh examples; no golden e-mail is repeated)."""

from __future__ import annotations

from kb_retrieval.models import Category
from kb_retrieval.query.plan import build_query_plan
from kb_retrieval.retrieval.case_answerability import CaseAnswerabilityModel
from kb_retrieval.retrieval.config import RetrievalConfig
from kb_retrieval.retrieval.conflicts import BENEFIT_DENIAL, ConflictInput
from kb_retrieval.retrieval.denial_conflicts import asks_money_back, denial_conflicts
from kb_retrieval.retrieval.verdict import decide, grounding_chunks
from tests.test_ranking_rules import cand

CONFIG = RetrievalConfig()
# The case model says "likely answered" (sigmoid(4 * 0.5) = 0.88): a sensitive or policy-like
# e-mail without a usable chunk goes to a person.
LIKELY = CONFIG.model_copy(
    update={
        "answerability": CONFIG.answerability.model_copy(
            update={"case": CaseAnswerabilityModel(bias=0.0, weights={"vector_best": 4.0})}
        )
    }
)
HEART = "Guests fitted with a heart device should bring a letter from their cardiologist."
DIVING = "Diving: we follow the dive centre's medical questionnaire; a doctor signs it if needed."


def _weak(chunk_id: str, category: Category, text: str, *, stale: bool = False):
    """A plausible chunk (above the low-relevance line) under the unknown threshold."""
    chunk = cand(chunk_id, category, CONFIG.unknown_threshold - 0.15, text, stale=stale)
    chunk.features = {"vector_best": 0.5}
    return chunk


def _codes(verdict) -> list[str]:
    return [r.value for r in verdict.reason_codes]


def test_a_review_without_a_usable_chunk_says_the_medical_guidance_is_stale():
    question = build_query_plan("I have a cardiac pacemaker. May I join the canyon hike?")
    assert "medical" in question.sensitivity
    pack = [
        _weak("terms_4", Category.TERMS_POLICY, "Terms 4. Travel insurance is compulsory."),
        _weak("safety_1", Category.SAFETY_MEDICAL, HEART, stale=True),
    ]
    verdict = decide(question, pack, LIKELY)
    assert verdict.outcome.value == "NEEDS_REVIEW"
    assert verdict.flags["stale_only_evidence"]
    assert _codes(verdict) == ["LOW_CONFIDENCE", "STALE_ONLY_EVIDENCE", "SENSITIVE_TOPIC"]
    fresh = [pack[0], _weak("safety_1", Category.SAFETY_MEDICAL, HEART)]
    reviewed = decide(question, fresh, LIKELY)
    assert not reviewed.flags["stale_only_evidence"]
    assert "STALE_ONLY_EVIDENCE" not in _codes(reviewed)


def test_a_stale_chunk_under_the_low_relevance_line_is_not_the_grounding():
    question = build_query_plan("I have a cardiac pacemaker. May I join the canyon hike?")
    buried = _weak("safety_1", Category.SAFETY_MEDICAL, HEART, stale=True)
    buried.relevance = CONFIG.score_floor / 2
    pack = [
        _weak("terms_4", Category.TERMS_POLICY, "Terms 4. Travel insurance is compulsory."),
        buried,
    ]
    verdict = decide(question, pack, LIKELY)
    assert verdict.outcome.value == "NEEDS_REVIEW"
    assert not verdict.flags["stale_only_evidence"]


def test_a_review_without_a_usable_chunk_reports_the_conflict_its_flag_shows():
    question = build_query_plan(
        "Your leaflet promised that cancelling 3 days ahead costs nothing. True for our rafting trip?"
    )
    assert question.sensitivity or question.policy_like
    policy = _weak(
        "policy_0",
        Category.STRUCTURED_POLICY,
        "Cancellation: 21 days or more before the start, full refund; less than 21 days, none.",
    )
    leaflet = _weak(
        "leaflet_0",
        Category.MARKETING,
        "Relaxed booking: changed plans? Cancellation is free until 3 days before the start.",
    )
    verdict = decide(question, [policy, leaflet], LIKELY)
    assert verdict.outcome.value == "NEEDS_REVIEW"
    assert verdict.flags["conflicting_evidence"]
    assert "CONFLICT_DETECTED" in _codes(verdict)


def test_an_abstention_keeps_its_single_reason():
    question = build_query_plan("Is there a hair dryer in the mountain hut rooms?")
    pack = [
        _weak("packing_0", Category.PACKING_LIST, "Bring a small towel and ear plugs.", stale=True)
    ]
    verdict = decide(question, pack, LIKELY)
    assert verdict.outcome.value == "UNKNOWN"
    assert _codes(verdict) == ["NO_EVIDENCE"]


def test_a_fresh_chunk_on_another_matter_does_not_make_a_stale_medical_guide_current():
    question = build_query_plan(
        "Is scuba diving allowed for me with mild asthma on the island week?"
    )
    assert "medical" in question.sensitivity or "medical" in question.intents
    unrelated = cand("faq_2", Category.FAQ, 0.8, "Towels are provided on the boat.")
    guide = _weak("safety_3", Category.SAFETY_MEDICAL, DIVING, stale=True)
    grounding = grounding_chunks(question, [unrelated], [unrelated, guide])
    assert grounding == [guide]
    verdict = decide(question, [unrelated, guide], CONFIG)
    assert verdict.flags["stale_only_evidence"]
    assert verdict.outcome.value == "NEEDS_REVIEW"
    assert {"STALE_ONLY_EVIDENCE", "SENSITIVE_TOPIC"} <= set(_codes(verdict))


def test_a_packing_answer_rests_on_the_packing_list():
    question = build_query_plan("Packing question: are trail shoes enough, or do I need boots?")
    assert "packing" in question.intents and not question.sensitivity
    faq = cand("faq_5", Category.FAQ, 0.8, "We can cater for vegetarian diets with notice.")
    packing = cand("packing_0", Category.PACKING_LIST, 0.85, "Footwear: boots", stale=True)
    verdict = decide(question, [packing, faq], CONFIG)
    assert verdict.flags["stale_only_evidence"]
    assert verdict.outcome.value == "OK_TO_DRAFT"
    assert _codes(verdict) == ["STALE_ONLY_EVIDENCE"]
    current = cand("packing_0", Category.PACKING_LIST, 0.85, "Footwear: boots")
    assert not decide(question, [current, faq], CONFIG).flags["stale_only_evidence"]


def _inputs(*chunks: tuple[str, Category, str]) -> list[ConflictInput]:
    return [
        ConflictInput(
            chunk_id, chunk_id.rsplit("_", 1)[0], f"{chunk_id}_v1", category, text, None, i
        )
        for i, (chunk_id, category, text) in enumerate(chunks)
    ]


RAFTING_TERMS = (
    "terms_7",
    Category.TERMS_POLICY,
    "7.4 Instructors may shorten or cancel a rafting session because of high water. Such changes "
    "do not entitle you to a refund or compensation.",
)
RAFTING_POLICY = (
    "policy_0",
    Category.STRUCTURED_POLICY,
    "Lost sessions: if the instructors cancel a rafting session because the water is too high, "
    "each guest receives a credit of EUR 40 towards another session.",
)


def test_a_refusal_without_a_number_conflicts_with_a_credit_on_the_same_matter():
    found = denial_conflicts(_inputs(RAFTING_TERMS, RAFTING_POLICY))
    assert [(c.kind, c.chunk_ids) for c in found] == [(BENEFIT_DENIAL, ("terms_7", "policy_0"))]
    assert found[0].values == ("receives a credit", "do not entitle you to a refund")
    assert denial_conflicts(_inputs(RAFTING_POLICY, RAFTING_TERMS)) == found


def test_a_non_refundable_item_conflicts_with_a_source_refunding_it():
    terms = ("terms_3", Category.TERMS_POLICY, "3.2 The booking deposit is non-refundable.")
    flyer = (
        "flyer_0",
        Category.MARKETING,
        "Changed your mind? Within 7 days of booking your deposit is refunded in full.",
    )
    assert [c.chunk_ids for c in denial_conflicts(_inputs(terms, flyer))] == [
        ("terms_3", "flyer_0")
    ]
    operator = (
        "flyer_0",
        Category.MARKETING,
        "If we cancel the tour for lack of numbers, your deposit is refunded in full.",
    )
    assert denial_conflicts(_inputs(terms, operator)) == []
    faq = ("faq_0", Category.FAQ, flyer[2])
    assert denial_conflicts(_inputs(terms, faq)) == []
    same_document = ("terms_4", Category.TERMS_POLICY, flyer[2])
    assert denial_conflicts(_inputs(terms, same_document)) == []


def test_schedule_lines_and_other_matters_are_not_denial_conflicts():
    schedule = (
        "terms_3",
        Category.TERMS_POLICY,
        "Cancellations less than 10 days before the start are non-refundable.",
    )
    early = (
        "policy_0",
        Category.STRUCTURED_POLICY,
        "Cancellations 30 days or more before the start are refunded in full.",
    )
    assert denial_conflicts(_inputs(schedule, early)) == []
    kit = ("terms_9", Category.TERMS_POLICY, "Lost or damaged wetsuits give no refund or credit.")
    assert denial_conflicts(_inputs(kit, RAFTING_POLICY)) == []
    card = ("terms_2", Category.TERMS_POLICY, "There is no credit card surcharge.")
    assert denial_conflicts(_inputs(card, RAFTING_POLICY)) == []


def _cand(spec: tuple[str, Category, str], conf: float):
    return cand(spec[0], spec[1], conf, spec[2])


def test_the_verdict_reports_a_denial_conflict_only_for_a_question_about_money_back():
    pack = [_cand(RAFTING_TERMS, 0.8), _cand(RAFTING_POLICY, 0.78)]
    money = build_query_plan("If the rafting is called off for high water, do we get a refund?")
    assert asks_money_back(money.intents, money.sensitivity)
    verdict = decide(money, pack, CONFIG)
    assert verdict.flags["conflicting_evidence"]
    assert verdict.outcome.value == "NEEDS_REVIEW"
    assert "CONFLICT_DETECTED" in _codes(verdict)
    gear = build_query_plan("What should we wear for the rafting session?")
    assert not asks_money_back(gear.intents, gear.sensitivity)
    assert not decide(gear, pack, CONFIG).flags["conflicting_evidence"]


def test_a_plausible_pack_chunk_past_the_window_is_read_for_conflicts():
    question = build_query_plan("How late can we cancel the boat trip and still get money back?")
    policy = cand(
        "policy_0",
        Category.STRUCTURED_POLICY,
        0.8,
        "Cancellations made less than 21 days before departure are not refunded.",
    )
    filler = [
        cand(f"terms_{i}", Category.TERMS_POLICY, 0.79, f"Clause {i} on cabins.") for i in range(6)
    ]
    brochure = cand(
        "brochure_0",
        Category.MARKETING,
        CONFIG.unknown_threshold - 0.1,
        "Flexible booking: cancel up to 2 days before departure for a full refund.",
    )
    pack = [policy, *filler, brochure]
    verdict = decide(question, pack, CONFIG)
    assert verdict.flags["conflicting_evidence"]
    assert any("brochure_0" in c.chunk_ids for c in verdict.conflicts)
    brochure.relevance = CONFIG.score_floor / 2
    assert not decide(question, pack, CONFIG).flags["conflicting_evidence"]
