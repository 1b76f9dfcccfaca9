"""The snapshot's BM25 leg with max-score pruning returns the unpruned leg's hits exactly: the same
chunks, the same float64 scores (summed in sorted-term order) and the same chunk-id tie-breaks."""

from __future__ import annotations

import math

import numpy as np
import pytest

from kb_retrieval.retrieval import bm25
from kb_retrieval.retrieval.bm25 import _skippable, _Term, bm25_search, scope_stats
from kb_retrieval.retrieval.postings import build_postings

VOCABULARY = [f"t{i:03d}" for i in range(300)]


def _corpus(seed: int, chunks: int = 3000) -> tuple[list[dict[str, int]], np.ndarray]:
    """Zipf-like term frequencies: a few terms in most chunks, most terms in a few; ties made
    likely by many chunks with identical short texts."""
    rng = np.random.default_rng(seed)
    freqs = []
    for i in range(chunks):
        if i % 10 == 0:
            freqs.append({"t000": 1, "t001": 2, "t150": 1})
            continue
        ranks = np.minimum(rng.zipf(1.3, rng.integers(5, 60)) - 1, len(VOCABULARY) - 1)
        words, counts = np.unique(ranks, return_counts=True)
        freqs.append({VOCABULARY[w]: int(c) for w, c in zip(words, counts, strict=True)})
    lengths = np.array([sum(f.values()) for f in freqs], dtype=np.float64)
    return freqs, lengths


def _plain(freqs, lengths, mask, variants, k, k1, b) -> tuple[list, dict]:
    """Every eligible chunk scored term after term in sorted-term order, sorted by (-score, pk)."""
    n = int(mask.sum())
    avgdl = float(lengths[mask].mean())
    idf = {}
    for term in sorted({t for ts in variants for t in ts}):
        df = sum(1 for i, f in enumerate(freqs) if mask[i] and term in f)
        idf[term] = math.log(1 + (n - df + 0.5) / (df + 0.5))
    hits = []
    for index, terms in enumerate(variants, start=1):
        scored = []
        for i, f in enumerate(freqs):
            used = sorted(t for t in set(terms) if t in f)
            if not mask[i] or not used:
                continue
            score, norm = 0.0, k1 * (1 - b + b * lengths[i] / avgdl)
            for t in used:
                score += idf[t] * np.float64(f[t]) * (k1 + 1) / (f[t] + norm)
            scored.append((-score, 1000 + i))
        hits += [(index, pk, -s) for s, pk in sorted(scored)[:k]]
    return hits, idf


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_pruned_leg_equals_the_plain_leg(seed, monkeypatch):
    freqs, lengths = _corpus(seed)
    postings = build_postings(freqs)
    rng = np.random.default_rng(seed + 10)
    mask = rng.random(len(freqs)) < 0.8
    chunk_pk = np.arange(1000, 1000 + len(freqs), dtype=np.int64)
    variants = [
        ["t000", "t001", "t002", "t040", "t150", "t299"],
        ["t000", "t003", "t090", "t091"],
        ["t001", "t150"],
        ["t000", "t001"],
        ["unknown-term"],
        ["t200", "t201", "t000", "t004", "t005", "t006"],
    ]
    pruned = []
    original = bm25._skippable

    def spy(terms, used, stats, k, k1):
        skipped = original(terms, used, stats, k, k1)
        pruned.append(bool(skipped))
        return skipped

    monkeypatch.setattr(bm25, "_skippable", spy)
    for k, k1, b in ((16, 1.2, 0.75), (5, 0.9, 0.4), (40, 1.2, 1.0)):
        stats = scope_stats(lengths, mask, k1, b)
        hits, idf = bm25_search(postings, mask, stats, chunk_pk, variants, k, k1, b)
        expected, expected_idf = _plain(freqs, lengths, mask, variants, k, k1, b)
        assert hits == expected
        assert idf == expected_idf
    assert any(pruned), "some long lists were only looked up"


def test_skippable_keeps_every_term_that_could_lift_a_chunk_into_the_top_k():
    freqs, lengths = _corpus(4)
    postings = build_postings(freqs)
    mask = np.ones(len(freqs), dtype=bool)
    stats = scope_stats(lengths, mask, 1.2, 0.75)
    terms = {}
    for term in ("t000", "t001", "t150", "t250"):
        rows, tfs = postings[term]
        df = len(rows)
        terms[term] = _Term(
            rows, tfs, mask[rows], df, math.log(1 + (stats.n - df + 0.5) / (df + 0.5))
        )
    skipped = _skippable(terms, sorted(terms), stats, 16, 1.2)
    kept = set(terms) - skipped
    bound = sum(terms[t].idf * 2.2 for t in skipped)
    scores = np.zeros(len(freqs))
    for term in kept:
        rows, weights = terms[term].weights(stats, 1.2)
        scores[rows] += weights
    assert bound < np.sort(scores)[-16], "the skipped terms alone stay below the k-th best"
    assert "t250" in kept, "the rarest term is always read in full"
