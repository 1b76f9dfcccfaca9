"""The snapshot's pruned BM25 top k equals the exhaustive scorer: hits, scores, order, ties."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from kb_retrieval.retrieval import snapshot_bm25
from kb_retrieval.retrieval.postings import build_postings
from kb_retrieval.retrieval.snapshot import TenantSnapshot
from kb_retrieval.retrieval.snapshot_bm25 import (
    Bm25Scope,
    TermBound,
    exhaustive_top,
    pruned_top,
    scope_bounds,
    term_bound,
    term_limits,
)

VOCABULARY = ["alp", "boat", "cabin", "deposit", "ferry", "glacier", "hut"]

_template = st.dictionaries(st.sampled_from(VOCABULARY), st.integers(1, 5), min_size=1, max_size=5)


def _scope(
    term_freqs: list[dict[str, int]], eligible: list[bool], k1: float, b: float
) -> tuple[Bm25Scope, np.ndarray]:
    lengths = np.array([sum(tf.values()) + 3 for tf in term_freqs], dtype=np.float64)
    mask = np.array(eligible, dtype=bool)
    n = int(mask.sum())
    avgdl = float(lengths[mask].mean()) if n else 1.0
    return Bm25Scope(mask, k1 * (1 - b + b * lengths / avgdl), n, avgdl, k1, b), lengths


def _bounds(term_freqs, scope, lengths, terms) -> dict[str, TermBound]:
    postings = build_postings(term_freqs)
    return {
        t: term_bound(postings, scope, t, term_limits(postings, lengths, t))
        for t in set(terms)
        if t in postings
    }


@settings(max_examples=400, deadline=None)
@given(
    templates=st.lists(_template, min_size=1, max_size=6),
    picks=st.lists(st.integers(0, 5), min_size=1, max_size=80),
    eligible_seed=st.integers(0, 2**31),
    share=st.sampled_from([0.3, 0.8, 1.0]),
    k1=st.sampled_from([0.0, 0.9, 1.2, 2.0]),
    b=st.sampled_from([0.0, 0.5, 0.75, 1.0]),
    k=st.integers(1, 12),
    terms=st.lists(st.sampled_from([*VOCABULARY, "unseen"]), min_size=1, max_size=6),
    dense=st.sampled_from([0, 8, 10**9]),
)
def test_pruned_top_equals_exhaustive(
    templates, picks, eligible_seed, share, k1, b, k, terms, dense
):
    """Near-copies (a few templates repeated): many equal scores, ties broken by chunk_pk;
    lookups by binary search only, by the dense array only, and mixed."""
    term_freqs = [dict(templates[p % len(templates)]) for p in picks]
    rng = np.random.default_rng(eligible_seed)
    scope, lengths = _scope(term_freqs, list(rng.random(len(picks)) < share), k1, b)
    postings = build_postings(term_freqs)
    bounds = _bounds(term_freqs, scope, lengths, terms)
    chunk_pk = np.cumsum(rng.integers(1, 4, len(picks)))
    want = exhaustive_top(postings, scope, bounds, terms, k, chunk_pk)
    saved, snapshot_bm25.DENSE_LOOKUP = snapshot_bm25.DENSE_LOOKUP, dense
    try:
        assert pruned_top(postings, scope, bounds, terms, k, chunk_pk) == want
    finally:
        snapshot_bm25.DENSE_LOOKUP = saved


@settings(max_examples=200, deadline=None)
@given(
    rows=st.lists(
        st.dictionaries(st.sampled_from(VOCABULARY), st.integers(1, 9), min_size=1, max_size=7),
        min_size=1,
        max_size=60,
    ),
    k=st.integers(1, 8),
    terms=st.lists(st.sampled_from(VOCABULARY), min_size=1, max_size=7),
)
def test_pruned_top_distinct_texts(rows, k, terms):
    """Chunks of every shape, all eligible, BM25's usual k1 and b."""
    scope, lengths = _scope(rows, [True] * len(rows), 1.2, 0.75)
    postings = build_postings(rows)
    bounds = _bounds(rows, scope, lengths, terms)
    chunk_pk = np.arange(10, 10 + len(rows))
    want = exhaustive_top(postings, scope, bounds, terms, k, chunk_pk)
    assert pruned_top(postings, scope, bounds, terms, k, chunk_pk) == want


def test_bound_covers_every_weight():
    """A term's bound is at least the weight of each of its eligible postings."""
    rows = [{"hut": 1}, {"hut": 7, "alp": 1}, {"hut": 2, "boat": 30}]
    scope, lengths = _scope(rows, [True, True, True], 1.2, 0.75)
    postings = build_postings(rows)
    bound = term_bound(postings, scope, "hut", term_limits(postings, lengths, "hut"))
    hits = exhaustive_top(postings, scope, {"hut": bound}, ["hut"], 3, np.arange(3))
    assert bound.df == 3 and max(score for _, score in hits) <= bound.upper
    assert [row for row, _ in hits] == [1, 0, 2]  # the long chunk last despite tf 2


def test_pruned_top_equals_the_snapshot_leg():
    """On a snapshot of near-copies in two versions (one eligible): the pruned scorer gives
    the snapshot's lexical leg (the `retrieve` path) hit for hit, score for score."""
    term_freqs = [{"ferry": 1 + i % 3, "cabin": 1 + i % 2} for i in range(40)]
    term_freqs += [{"glacier": 2, "ferry": 1}] * 10
    rows = [
        (100 + i, "v1" if i % 4 else "v0", *([None] * 9), sum(tf.values()), tf)
        for i, tf in enumerate(term_freqs)
    ]
    snapshot = _snapshot(rows)
    mask = snapshot.chunk_mask(["v1"])
    variants = [["ferry", "glacier"], ["cabin", "ferry", "nowhere"], ["nowhere"]]
    want = snapshot.lexical_leg(mask, variants, 5, 1.2, 0.75)
    n = int(mask.sum())
    avgdl = float(snapshot.term_count[mask].mean())
    norm = 1.2 * (1 - 0.75 + 0.75 * snapshot.term_count / avgdl)
    scope = Bm25Scope(mask, norm, n, avgdl, 1.2, 0.75)
    bounds = scope_bounds(
        snapshot.postings, snapshot.term_count, scope, [t for v in variants for t in v]
    )
    got = [
        (variant, int(snapshot.chunk_pk[row]), score)
        for variant, terms in enumerate(variants, start=1)
        for row, score in pruned_top(snapshot.postings, scope, bounds, terms, 5, snapshot.chunk_pk)
    ]
    assert got == want and len(got) == 10


def _snapshot(rows: list[tuple], versions: tuple[str, ...] = ("v0", "v1")) -> TenantSnapshot:
    from datetime import date

    from kb_retrieval.retrieval.candidates import PipelineKey, VersionInfo
    from kb_retrieval.retrieval.snapshot import VersionFacts

    def facts(vid: str) -> VersionFacts:
        info = VersionInfo(
            vid, "doc-" + vid, "T", "general", 1, date(2026, 1, 1), None, None, False
        )
        return VersionFacts(info, ())

    key = PipelineKey("tenant-a", "p1", "c1", "m1")
    return TenantSnapshot(key, 1, {v: facts(v) for v in versions}, rows, [], [])
