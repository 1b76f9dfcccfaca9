"""Session 12 (issue 12): what the pack loses between the candidates and the evidence.

Pure ranking logic over hand-built candidates (no embedder, no database): soft signals on the
log-odds of relevance, the minimal relevance floor, and the bench's attribution of a miss and its
nested choice of a setting. Every e-mail and chunk text here is written for these tests.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import date

from hypothesis import given, settings
from hypothesis import strategies as st

from bench.pack_misses import _Held, _mechanism, nested_choice
from kb_retrieval.models import Category
from kb_retrieval.query.plan import build_query_plan
from kb_retrieval.retrieval.config import RetrievalConfig
from kb_retrieval.retrieval.pack import evidence_item
from kb_retrieval.retrieval.scoring import rank_score, soft_signals
from kb_retrieval.retrieval.selection import select_pack
from tests.test_ranking_rules import cand

AS_OF = date(2026, 11, 20)
CONFIG = RetrievalConfig()
ADDITIVE = CONFIG.model_copy(update={"soft_signal_logit_scale": 0.0})
LONG_AGO = date(2025, 1, 10)


def _boosted(chunk: str, relevance: float):
    """A freshly reviewed, high-priority chunk naming the guest's date."""
    c = cand(chunk, Category.FAQ, relevance, reviewed=date(2026, 11, 1))
    c.version = replace(c.version, priority=5)
    c.trip_match = True
    return c


def _plain(chunk: str, relevance: float):
    return cand(chunk, Category.FAQ, relevance, reviewed=LONG_AGO)


def test_soft_signals_no_longer_outrank_a_chunk_six_times_more_relevant():
    answer = _plain("baggage_0", 0.06)
    boosted = _boosted("news_0", 0.01)
    for c in (answer, boosted):
        c.stale = False
    additive = {c.chunk_id: rank_score(c, AS_OF, ADDITIVE) for c in (answer, boosted)}
    scaled = {c.chunk_id: rank_score(c, AS_OF, CONFIG) for c in (answer, boosted)}
    assert additive["news_0"] > additive["baggage_0"]
    assert scaled["baggage_0"] > scaled["news_0"]


def test_soft_signals_still_decide_between_chunks_of_similar_relevance():
    plain = _plain("ferry_0", 0.050)
    dated = _boosted("ferry_1", 0.045)
    for c in (plain, dated):
        c.stale = False
    assert rank_score(dated, AS_OF, CONFIG) > rank_score(plain, AS_OF, CONFIG)
    high_plain, high_dated = _plain("ferry_2", 0.62), _boosted("ferry_3", 0.58)
    assert rank_score(high_dated, AS_OF, CONFIG) > rank_score(high_plain, AS_OF, CONFIG)


def test_scale_zero_is_relevance_plus_the_signals():
    c = _boosted("hut_0", 0.3)
    assert rank_score(c, AS_OF, ADDITIVE) == soft_signals(c, AS_OF, ADDITIVE, 0.3)
    assert abs(rank_score(c, AS_OF, ADDITIVE) - (0.3 + soft_signals(c, AS_OF, ADDITIVE))) < 1e-12


@settings(max_examples=60, deadline=None)
@given(
    low=st.floats(0.0, 1.0),
    high=st.floats(0.0, 1.0),
    priority=st.integers(-8, 8),
    stale=st.booleans(),
)
def test_logit_rank_score_is_a_probability_increasing_in_relevance_and_signals(
    low, high, priority, stale
):
    low, high = sorted((low, high))
    a, b = _plain("x_0", low), _plain("x_1", high)
    for c in (a, b):
        c.version = replace(c.version, priority=priority)
        c.stale = stale
    score_a, score_b = rank_score(a, AS_OF, CONFIG), rank_score(b, AS_OF, CONFIG)
    assert 0.0 < score_a <= score_b < 1.0
    a.trip_match = True
    assert rank_score(a, AS_OF, CONFIG) > score_a


def test_pack_fills_with_chunks_between_the_minimal_floor_and_the_line_marked():
    pool = [
        cand("cabins_0", Category.FAQ, 0.40, "cabins have two berths and a sink", doc="cabins"),
        cand("linen_0", Category.FAQ, 0.25, "bed linen and towels are provided", doc="linen"),
        cand("towels_0", Category.FAQ, 0.012, "bring a beach towel of your own", doc="towels"),
        cand("snorkel_0", Category.FAQ, 0.008, "snorkel sets are on board", doc="snorkel"),
        cand("dinghy_0", Category.FAQ, 0.003, "the dinghy seats four adults", doc="dinghy"),
    ]
    pack, stats = select_pack(pool, CONFIG, tiered=False)
    ids = [c.chunk_id for c in pack]
    assert ids == ["cabins_0", "linen_0", "towels_0", "snorkel_0"]
    assert stats["low_relevance_fill"] == 2
    items = [evidence_item(i, c, 1.0, CONFIG.score_floor) for i, c in enumerate(pack, 1)]
    assert [bool(item.get("low_relevance")) for item in items] == [False, False, True, True]
    old_floor = CONFIG.model_copy(update={"relevance_floor": 0.02})
    assert len(select_pack(pool, old_floor, tiered=False)[0]) == 2


def _full_pool():
    """Three close chunks of one document, the third answering, and ten other documents."""
    pool = [
        cand(f"terms_{i}", Category.FAQ, 0.90 - i * 0.01, f"terms clause {i}", doc="terms")
        for i in range(3)
    ]
    pool += [
        cand(f"doc{i}_0", Category.FAQ, 0.86 - i * 0.01, f"topic {i} text", doc=f"doc{i}")
        for i in range(10)
    ]
    return pool


def test_the_bench_attributes_a_chunk_dropped_by_the_per_document_cap():
    pool = _full_pool()
    plan = build_query_plan(
        "Which clause of the booking terms covers a late arrival at the marina?"
    )
    held = _Held(case=None, fold=None, args=(None, plan, pool), case_probability=None)  # type: ignore[arg-type]
    chosen, _ = select_pack(pool, CONFIG, tiered=plan.policy_like)
    assert "terms_2" not in {c.chunk_id for c in chosen}
    mechanism, undone = _mechanism(pool[2], held, CONFIG, {c.chunk_id for c in chosen})
    assert mechanism == "max_per_document"
    assert undone[0] == "max_per_document"
    last = min(pool[3:], key=lambda c: c.rank_score)
    assert _mechanism(last, held, CONFIG, set()) == ("ordering", [])


def _figures(correct: int, recall: float) -> dict:
    return {
        "correct": correct,
        "cases": 10,
        "recall_at_10": recall,
        "recall_cases": 10,
        "unsafe": [],
        "must_not_cite": [],
    }


def test_nested_choice_never_reads_the_held_out_operator():
    # "wide" wins on operator c only; "narrow" wins on a and b.
    candidates = {
        "narrow": {"a": _figures(8, 0.9), "b": _figures(8, 0.9), "c": _figures(8, 0.5)},
        "wide": {"a": _figures(8, 0.8), "b": _figures(8, 0.8), "c": _figures(8, 1.0)},
    }
    report = nested_choice(candidates)
    assert report["chosen"] == {"a": "wide", "b": "wide", "c": "narrow"}
    assert report["recall_at_10"] == round((0.8 + 0.8 + 0.5) / 3, 4)


def test_nested_choice_ties_go_to_more_correct_outcomes_then_to_the_default():
    same = {"a": _figures(8, 0.9), "b": _figures(8, 0.9)}
    better = {"a": _figures(9, 0.9), "b": _figures(9, 0.9)}
    assert set(nested_choice({"default": same, "other": same})["chosen"].values()) == {"default"}
    assert set(nested_choice({"default": same, "other": better})["chosen"].values()) == {"other"}
