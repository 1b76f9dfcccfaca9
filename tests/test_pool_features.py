"""The ranking step's pool-wide features equal the per-candidate reference functions, bit for bit
(the answerability model reads them: a moved last digit could move a pack)."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from kb_retrieval.models import Category
from kb_retrieval.query.plan import build_query_plan
from kb_retrieval.retrieval.candidates import Candidate
from kb_retrieval.retrieval.config import RetrievalConfig
from kb_retrieval.retrieval.pool_features import pool_lexical, pool_passages, set_pool_features
from kb_retrieval.retrieval.scoring import candidate_features, lexical_features, passage_coverage
from kb_retrieval.text.analyzer import analyze
from tests.pool_candidates import built_candidate

CONFIG = RetrievalConfig()
WORDS = [
    "kayak",
    "paddle",
    "lagoon",
    "sunrise",
    "permit",
    "ranger",
    "shuttle",
    "luggage",
    "blister",
    "ferry",
    "pontoon",
    "harbour",
    "lantern",
    "porridge",
    "altitude",
    "hut",
    "bunk",
    "refund",
    "voucher",
    "crossing",
    "tide",
    "cliff",
    "goggles",
    "sherpa",
    "vegetarian",
    "gluten",
    "thermos",
    "ridge",
    "scramble",
    "helmet",
]
EMAIL = (
    "Hello, we booked the lagoon kayak week for March. Does the ferry to the pontoon run at "
    "sunrise, and is a ranger permit needed for the cliff path? How many kg of luggage fit in "
    "the shuttle? Thanks, Priya"
)


def _candidate(i: int, text: str, category: Category) -> Candidate:
    cand = built_candidate(i, f"c{i}", f"v{i}", f"d{i}", category, text, title=f"Doc {i}")
    cand.sims = [0.31 + 0.01 * i, 0.42, 0.27][: 1 + i % 3]
    cand.seen_in_queries = {"direct:vector", "policy_expansion:lexical"} if i % 2 else set()
    cand.lexical_top1 = i == 3
    return cand


def _pool(seed: int, size: int = 25) -> list[Candidate]:
    rng = random.Random(seed)
    categories = list(Category)
    pool = []
    for i in range(size):
        words = [rng.choice(WORDS) for _ in range(rng.randint(0, 140))]
        if i % 4 == 0:
            words += ["40 kg per bag", "and 15 minutes"]
        pool.append(_candidate(i, " ".join(words), categories[i % len(categories)]))
    return pool


def _variants(seed: int) -> list[list[str]]:
    rng = random.Random(seed + 1)
    direct = analyze(EMAIL)
    return [
        direct,
        [rng.choice(WORDS) for _ in range(rng.randint(0, 8))],
        [*direct[:5], "unseen", "nowhere"],
        [t for t in direct if rng.random() < 0.5],
    ]


def _idf(seed: int, terms: list[list[str]]) -> dict[str, float]:
    rng = random.Random(seed + 2)
    vocabulary = sorted({t for ts in terms for t in ts})
    # some terms unknown to the index (no idf) and one with idf 0, as BM25 can give
    return {t: (0.0 if j == 2 else rng.uniform(0.05, 9.0)) for j, t in enumerate(vocabulary[:-2])}


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000), st.integers(5, 120), st.floats(0.5, 400.0))
def test_pool_lexical_and_passages_equal_the_per_candidate_functions(seed, window, avgdl):
    pool, variants = _pool(seed), _variants(seed)
    idf = _idf(seed, variants)
    coverage, bm25 = pool_lexical(pool, variants, idf, avgdl, CONFIG)
    passages = pool_passages(pool, variants, idf, window)
    assert coverage.shape == bm25.shape == passages.shape == (len(pool), len(variants))
    for i, cand in enumerate(pool):
        for v, terms in enumerate(variants):
            assert (coverage[i, v], bm25[i, v]) == lexical_features(cand, terms, idf, avgdl, CONFIG)
            assert passages[i, v] == passage_coverage(cand.text, terms, idf, window)
    assert coverage.max() > 0 and passages.max() > 0 and bm25.max() > 0


def test_set_pool_features_gives_candidate_features_and_the_direct_values():
    plan = build_query_plan(EMAIL)
    variants = [analyze(v.text) for v in plan.variants]
    assert len(variants) >= 2
    for seed in (1, 2, 3):
        pool, reference = _pool(seed), _pool(seed)
        idf = _idf(seed, variants)
        set_pool_features(pool, plan, variants, idf, 57.5, CONFIG)
        for cand, ref in zip(pool, reference, strict=True):
            expected = candidate_features(ref, plan, variants, idf, 57.5, CONFIG)
            assert cand.features == expected
            assert all(type(value) is float for value in cand.features.values())
            assert (cand.coverage, cand.bm25) == lexical_features(
                ref, variants[0], idf, 57.5, CONFIG
            )
            assert cand.passage == passage_coverage(
                ref.text, variants[0], idf, CONFIG.passage_window
            )
        assert any(c.features["type_match"] for c in pool), "the kg question meets kg chunks"


def test_empty_pool_and_no_terms():
    coverage, bm25 = pool_lexical([], [["a"], []], {"a": 1.0}, 10.0, CONFIG)
    assert coverage.shape == (0, 2)
    pool = _pool(5, size=3)
    coverage, bm25 = pool_lexical(pool, [[], ["lagoon"]], {}, 10.0, CONFIG)
    assert not coverage.any() and not bm25.any()
    assert not pool_passages(pool, [[]], {"lagoon": 2.0}, 40).any()
