"""Pure unit tests of selection, verdict and rerank rules on hand-made candidates (no database)."""

from __future__ import annotations

from dataclasses import replace
from datetime import date

from hypothesis import given, settings
from hypothesis import strategies as st

from kb_retrieval.models import Category
from kb_retrieval.query.plan import build_query_plan
from kb_retrieval.retrieval.candidates import Candidate
from kb_retrieval.retrieval.config import RetrievalConfig
from kb_retrieval.retrieval.pack import evidence_item
from kb_retrieval.retrieval.rerank import maybe_rerank
from kb_retrieval.retrieval.scoring import confidence, is_stale
from kb_retrieval.retrieval.selection import select_pack
from kb_retrieval.retrieval.verdict import decide
from tests.pool_candidates import built_candidate

CONFIG = RetrievalConfig()
FRESH = date(2026, 10, 1)


def cand(
    chunk: str,
    category: Category,
    conf: float,
    text: str = "",
    doc: str | None = None,
    stale: bool = False,
    reviewed: date | None = FRESH,
) -> Candidate:
    doc = doc or chunk.rsplit("_", 1)[0]
    words = text or f"{chunk} words"
    c = built_candidate(
        hash(chunk) % 10_000,
        chunk,
        f"{doc}_v1",
        doc,
        category,
        words,
        hint="High",
        title=doc.title(),
        reviewed=reviewed,
        term_freqs={w: 1 for w in words.lower().split()},
        term_count=len(words.split()),
        token_count=20,
    )
    c.confidence = c.relevance = c.rank_score = conf
    c.vector = 0.6
    c.stale = stale
    return c


def plan(text: str, **kwargs):
    return build_query_plan(text, **kwargs)


def test_policy_question_never_lets_marketing_outrank_policy():
    pool = [
        cand("brochure_0", Category.MARKETING, 0.95),
        cand("policy_0", Category.STRUCTURED_POLICY, 0.70),
        cand("terms_0", Category.TERMS_POLICY, 0.80),
    ]
    pack, _ = select_pack(pool, CONFIG, tiered=True)
    assert [c.version.category for c in pack] == [
        Category.STRUCTURED_POLICY,
        Category.TERMS_POLICY,
        Category.MARKETING,
    ]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(list(Category)), st.floats(0.0, 1.0), st.integers(0, 4)),
        min_size=1,
        max_size=30,
    )
)
def test_tiers_are_never_inverted_and_pack_is_bounded(items):
    pool = [
        cand(f"d{doc}_{i}", category, conf, doc=f"d{doc}")
        for i, (category, conf, doc) in enumerate(items)
    ]
    pack, _ = select_pack(pool, CONFIG, tiered=True)
    tiers = [c.version.category.tier for c in pack]
    assert tiers == sorted(tiers)
    assert len(pack) <= CONFIG.pack_max
    eligible = [c for c in pool if c.relevance >= CONFIG.relevance_floor]
    assert len(pack) >= min(CONFIG.pack_min, len(eligible))
    assert len(pack) == min(CONFIG.pack_max, len(eligible))
    assert all(c.relevance >= CONFIG.relevance_floor for c in pack)
    above_line = [c for c in pool if c.relevance >= CONFIG.score_floor]
    if len(above_line) <= CONFIG.pack_max:
        # A chunk under the low-relevance line never takes the place of one above it.
        assert all(c in pack for c in above_line)


def test_at_most_two_chunks_per_document_when_others_are_close():
    pool = [cand(f"faq_{i}", Category.FAQ, 0.9 - i * 0.01, doc="faq") for i in range(5)]
    pool += [cand("itin_0", Category.TRIP_ITINERARY, 0.85, doc="itin")]
    pack, stats = select_pack(pool, CONFIG, tiered=False)
    assert [c.chunk_id for c in pack][:3] == ["faq_0", "faq_1", "itin_0"]
    assert stats["deferred"] >= 1


def test_near_duplicates_are_pushed_down():
    same = "cancellations within seven days are not refundable at all"
    pool = [
        cand("a_0", Category.FAQ, 0.90, same, doc="a"),
        cand("b_0", Category.FAQ, 0.89, same, doc="b"),
        cand("c_0", Category.FAQ, 0.85, "guides meet guests at the lodge", doc="c"),
    ]
    pack, _ = select_pack(pool, CONFIG, tiered=False)
    assert [c.chunk_id for c in pack] == ["a_0", "c_0", "b_0"]


def test_verdict_rules():
    refund = plan("Can I get a refund if I cancel 10 days before departure?")
    ok = [cand("policy_0", Category.STRUCTURED_POLICY, 0.9)]
    assert decide(refund, ok, CONFIG).outcome.value == "OK_TO_DRAFT"
    low = [cand("policy_0", Category.STRUCTURED_POLICY, 0.68)]
    verdict = decide(refund, low, CONFIG)
    assert verdict.outcome.value == "NEEDS_REVIEW"
    assert [r.value for r in verdict.reason_codes] == ["LOW_CONFIDENCE", "SENSITIVE_TOPIC"]
    none = [cand("policy_0", Category.STRUCTURED_POLICY, 0.5)]
    verdict = decide(refund, none, CONFIG)
    assert verdict.outcome.value == "UNKNOWN" and verdict.reason_codes[0].value == "NO_EVIDENCE"
    marketing = [cand("brochure_0", Category.MARKETING, 0.9)]
    verdict = decide(refund, marketing, CONFIG)
    assert {"MARKETING_ONLY_EVIDENCE", "MISSING_REQUIRED_PRECEDENCE", "SENSITIVE_TOPIC"} <= {
        r.value for r in verdict.reason_codes
    }
    stale = [cand("policy_0", Category.STRUCTURED_POLICY, 0.9, stale=True)]
    verdict = decide(refund, stale, CONFIG)
    assert verdict.outcome.value == "NEEDS_REVIEW" and verdict.flags["stale_only_evidence"]


def test_non_sensitive_stale_evidence_is_drafted_with_a_warning():
    packing = plan("What boots should I pack for the Patagonia trek?")
    verdict = decide(packing, [cand("pack_0", Category.PACKING_LIST, 0.9, stale=True)], CONFIG)
    assert verdict.outcome.value == "OK_TO_DRAFT"
    assert [r.value for r in verdict.reason_codes] == ["STALE_ONLY_EVIDENCE"]


def test_conflicting_policy_and_brochure_needs_review_for_refunds():
    refund = plan("Is a full refund still possible if we cancel 5 days before departure?")
    pool = [
        cand(
            "policy_0",
            Category.STRUCTURED_POLICY,
            0.9,
            "Cancellations within 7 calendar days of departure are non-refundable.",
        ),
        cand(
            "brochure_0",
            Category.MARKETING,
            0.8,
            "Flexible booking: free 24-hour cancellation on all tours!",
        ),
    ]
    verdict = decide(refund, pool, CONFIG)
    assert verdict.flags["conflicting_evidence"] and verdict.outcome.value == "NEEDS_REVIEW"


def test_exception_request_and_ambiguity():
    exception = plan(
        "We understand the rules on the down payment, but might you bend them for our family?"
    )
    verdict = decide(exception, [cand("policy_0", Category.STRUCTURED_POLICY, 0.9)], CONFIG)
    assert "EXCEPTION_REQUEST" in {r.value for r in verdict.reason_codes}
    assert verdict.outcome.value == "NEEDS_REVIEW"
    weak = decide(exception, [cand("policy_0", Category.STRUCTURED_POLICY, 0.4)], CONFIG)
    assert weak.outcome.value == "NEEDS_REVIEW", "a person decides, not 'I don't know'"
    assert [r.value for r in weak.reason_codes] == [
        "NO_EVIDENCE",
        "EXCEPTION_REQUEST",
        "SENSITIVE_TOPIC",
    ]
    vague_trip = plan("When does check-in open for the Patagonia trek?")
    two_trips = [
        cand("jun_0", Category.TRIP_ITINERARY, 0.85, doc="jun"),
        cand("nov_0", Category.TRIP_ITINERARY, 0.84, doc="nov"),
    ]
    verdict = decide(vague_trip, two_trips, CONFIG)
    assert verdict.outcome.value == "ASK_CLARIFYING_QUESTION"
    assert [r.value for r in verdict.reason_codes] == ["AMBIGUOUS_CONTEXT"]
    dated = plan("When does check-in open for the Patagonia trek leaving 14 June?")
    assert decide(dated, two_trips, CONFIG).outcome.value == "OK_TO_DRAFT"


def itinerary(chunk: str, title: str, conf: float) -> Candidate:
    c = cand(chunk, Category.TRIP_ITINERARY, conf, doc=chunk.rsplit("_", 1)[0])
    c.version = replace(c.version, title=title)
    return c


def test_one_departures_itinerary_does_not_answer_for_an_unpinned_departure():
    vague = plan("Will the mountain huts have heating overnight when we stay there?")
    june = itinerary("jun_1", "Patagonia Trek 7-Day Itinerary - 14 June 2026", 0.8)
    november = itinerary("nov_0", "Patagonia Trek 7-Day Itinerary - 8 November 2026", 0.4)
    everest = itinerary("ebc_0", "Everest Base Camp Trek - 2026", 0.4)
    faq = cand("faq_0", Category.FAQ, 0.5)
    verdict = decide(vague, [june, faq, november], CONFIG)
    assert verdict.outcome.value == "ASK_CLARIFYING_QUESTION"
    assert [r.value for r in verdict.reason_codes] == ["AMBIGUOUS_CONTEXT"]
    assert decide(vague, [june, faq, everest], CONFIG).outcome.value == "OK_TO_DRAFT", (
        "another trip's itinerary is not another departure"
    )
    assert decide(vague, [june, faq], CONFIG).outcome.value == "OK_TO_DRAFT"
    general = cand("faq_1", Category.FAQ, 0.8)
    assert decide(vague, [general, november, june], CONFIG).outcome.value == "OK_TO_DRAFT", (
        "a general answer ranked first is not departure-specific"
    )
    dated = plan("Are the refugios heated at night on the 14 June departure?")
    assert decide(dated, [june, faq, november], CONFIG).outcome.value == "OK_TO_DRAFT"
    pinned = decide(vague, [june, faq, november], CONFIG, has_trip_context=True)
    assert pinned.outcome.value == "OK_TO_DRAFT"


def test_gate_rejects_chit_chat_before_any_evidence():
    verdict = decide(plan("hey this is a test message"), [], CONFIG)
    assert verdict.outcome.value == "ASK_CLARIFYING_QUESTION"
    assert [r.value for r in verdict.reason_codes] == ["QUERY_TOO_VAGUE"]


def test_confidence_is_monotonic_and_absolute():
    for model in (CONFIG.relevance, CONFIG.confidence):
        assert confidence(0.2, 0.1, 1.0, model) <= confidence(0.6, 0.1, 1.0, model)
        assert confidence(0.6, 0.1, 1.0, model) < confidence(0.6, 0.9, 9.0, model)
        assert 0.0 < confidence(0.0, 0.0, 0.0, model) < 0.1
    assert confidence(0.2, 0.1, 1.0, CONFIG.relevance) < confidence(0.6, 0.1, 1.0, CONFIG.relevance)
    assert is_stale(None, date(2026, 11, 15), CONFIG)
    assert is_stale(date(2026, 5, 1), date(2026, 11, 15), CONFIG)
    assert not is_stale(date(2026, 6, 1), date(2026, 11, 15), CONFIG)


class FakeReranker:
    """Test double of the rerank adapter: scores by a fixed table, records calls."""

    def __init__(self, scores: dict[str, float]) -> None:
        self.table, self.calls = scores, 0

    def scores(self, query, texts):
        self.calls += 1
        return [self.table.get(t, 0.0) for t in texts]


def test_rerank_runs_only_for_borderline_tops():
    config = RetrievalConfig(rerank_enabled=True)
    query = plan("Which gloves should I bring for the glacier day?")
    weak = [cand("a_0", Category.FAQ, 0.50, "text a"), cand("b_0", Category.FAQ, 0.49, "text b")]
    reranker = FakeReranker({"text b": 1.0})
    pool, used = maybe_rerank(reranker, query, weak, config)
    assert used and reranker.calls == 1
    assert max(pool, key=lambda c: c.rank_score).chunk_id == "b_0"
    strong = [cand("a_0", Category.FAQ, 0.95, "text a")]
    _, used = maybe_rerank(reranker, query, strong, config)
    assert not used and reranker.calls == 1


def test_medical_claim_rests_on_the_medical_policy_when_it_is_in_the_evidence():
    """A fresh general terms section does not make a stale medical policy current."""
    medical = plan("I had a coronary stent fitted 8 months ago. Can I join the Everest trek?")
    assert medical.policy_like and "medical" in medical.sensitivity
    terms = cand("terms_7", Category.TERMS_POLICY, 0.73, "who can travel minimum age grades")
    stale_policy = cand("medical_1", Category.SAFETY_MEDICAL, 0.74, "cardiac stent", stale=True)
    verdict = decide(medical, [terms, stale_policy], CONFIG)
    assert verdict.flags["stale_only_evidence"] and verdict.outcome.value == "NEEDS_REVIEW"
    assert [r.value for r in verdict.reason_codes] == ["STALE_ONLY_EVIDENCE", "SENSITIVE_TOPIC"]
    fresh_policy = cand("medical_1", Category.SAFETY_MEDICAL, 0.74, "cardiac stent")
    verdict = decide(medical, [terms, fresh_policy], CONFIG)
    assert verdict.outcome.value == "OK_TO_DRAFT"
    # Without the medical policy in the evidence, the authoritative categories ground the claim.
    assert decide(medical, [terms], CONFIG).outcome.value == "OK_TO_DRAFT"
    # Other policy-like questions keep judging staleness on all authoritative chunks.
    refund = plan("Can I get a refund if I cancel 10 days before departure?")
    verdict = decide(refund, [terms, stale_policy], CONFIG)
    assert not verdict.flags["stale_only_evidence"]


def test_departure_logistics_of_no_named_trip_ask_which_trip():
    meeting = plan("Where is the meeting point, and when should we get there on day one?")
    terms = cand("terms_0", Category.TERMS_POLICY, 0.8)
    johnstone = itinerary("js_0", "Johnstone Strait Orca Expedition - 5 Days", 0.5)
    broken = itinerary("bg_0", "Broken Group Islands Explorer - 4 Days", 0.2)
    verdict = decide(meeting, [terms, johnstone, broken], CONFIG)
    assert verdict.outcome.value == "ASK_CLARIFYING_QUESTION"
    named_person = plan("My friend Anna and I wonder: what time do we meet on the first morning?")
    assert named_person.entities and not named_person.trip_names
    assert decide(named_person, [terms, johnstone, broken], CONFIG).outcome.value == (
        "ASK_CLARIFYING_QUESTION"
    ), "a person's name does not pin down the trip"
    assert decide(meeting, [terms, johnstone], CONFIG).outcome.value == "OK_TO_DRAFT"
    gear = plan("Do I need to bring my own paddle jacket?")
    assert decide(gear, [terms, johnstone, broken], CONFIG).outcome.value == "OK_TO_DRAFT", (
        "only departure logistics depend on the trip"
    )


def test_pack_min_is_filled_from_candidates_under_the_low_relevance_line():
    config = RetrievalConfig(pack_fill=0)
    pool = [
        cand("faq_0", Category.FAQ, 0.80, doc="faq"),
        cand("itin_0", Category.TRIP_ITINERARY, 0.05, doc="itin"),
        cand("pack_0", Category.PACKING_LIST, 0.04, doc="packing"),
        cand("blog_0", Category.MARKETING, 0.03, doc="blog"),
        cand("noise_0", Category.MARKETING, 0.01, doc="noise"),
    ]
    pack, stats = select_pack(pool, config, tiered=False)
    assert [c.chunk_id for c in pack] == ["faq_0", "itin_0", "pack_0", "blog_0"]
    assert stats["low_relevance_fill"] == 3
    bigger, _ = select_pack(pool, config.model_copy(update={"pack_min": 2}), tiered=False)
    assert [c.chunk_id for c in bigger] == ["faq_0", "itin_0"]


def test_low_relevance_chunks_are_marked_in_the_pack():
    strong = cand("faq_0", Category.FAQ, 0.80, doc="faq")
    weak = cand("itin_0", Category.TRIP_ITINERARY, 0.05, doc="itin")
    items = [evidence_item(i, c, 1.0, CONFIG.score_floor) for i, c in enumerate([strong, weak])]
    assert "low_relevance" not in items[0]
    assert items[1]["low_relevance"] is True
