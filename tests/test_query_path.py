"""The query path's large-tenant shortcuts: coarse lists in the first stage, BM25 by bincount,
top-k by partial sort. Each must keep exact scores and the tie-breaks of the plain versions."""

from __future__ import annotations

import math

import numpy as np

from kb_retrieval.retrieval import first_stage, postings
from kb_retrieval.retrieval.postings import build_postings, merge_postings
from kb_retrieval.retrieval.snapshot import TenantSnapshot
from tests.test_snapshot_compact import (
    DIM,
    KEY,
    _corpus,
    _exact_top,
    _hits_are_exact_cosines,
    _same_ranking,
)


def _listed(monkeypatch, chunks: int = 2000) -> tuple[TenantSnapshot, TenantSnapshot, list]:
    """Two snapshots of the same corpus with a projected first stage in coarse lists."""
    monkeypatch.setattr(first_stage, "PROJECT_ABOVE_WINDOWS", 0)
    monkeypatch.setattr(first_stage, "LISTS_ABOVE_WINDOWS", 0)
    monkeypatch.setattr(first_stage, "WINDOWS_PER_LIST", 64)
    monkeypatch.setattr(first_stage, "SCAN_DIMS", 12)
    versions, rows, windows = _corpus(chunks)
    return (
        TenantSnapshot(KEY, 1, versions, rows, windows, []),
        TenantSnapshot(KEY, 1, versions, rows, windows, []),
        windows,
    )


def test_coarse_lists_are_deterministic_and_partition_the_windows(monkeypatch):
    snapshot, again, windows = _listed(monkeypatch)
    lists = snapshot.lists
    assert lists is not None and len(lists.centroids) == len(windows) // 64
    assert sorted(lists.order.tolist()) == list(range(len(windows)))
    assert lists.bounds[0] == 0 and lists.bounds[-1] == len(windows)
    assert lists.order.tobytes() == again.lists.order.tobytes()
    assert lists.centroids.tobytes() == again.lists.centroids.tobytes()
    # the projected windows are stored list after list
    flat = snapshot.vectors[lists.order] @ snapshot.basis
    assert np.allclose(snapshot.scan, flat, atol=1e-5)


def test_probing_reads_part_of_the_windows_and_keeps_recall(monkeypatch):
    snapshot, again, windows = _listed(monkeypatch)
    rng = np.random.default_rng(23)
    mask = snapshot.chunk_mask(["v0", "v1", "v3"])
    queries = rng.standard_normal((3, DIM)).astype(np.float32)
    probed = snapshot.lists.probe(queries @ snapshot.basis, 300)
    assert 0 < len(probed) < len(windows)
    assert np.all(np.diff(probed) > 0)
    found = wanted = 0
    for _ in range(5):
        queries = rng.standard_normal((3, DIM))
        for shortlist in (1200, len(windows)):
            hits = snapshot.vector_leg(mask, queries, 24, shortlist=shortlist)
            assert hits == again.vector_leg(mask, queries, 24, shortlist=shortlist)
            _hits_are_exact_cosines(snapshot, hits, queries, True)
            expected = _exact_top(snapshot, windows, mask, queries, 24)
            if shortlist == len(windows):
                _same_ranking(hits, expected)
            else:
                found += len({(v, pk) for v, pk, _ in expected} & {(v, pk) for v, pk, _ in hits})
                wanted += len(expected)
    assert found / wanted >= 0.98


def test_only_eligible_windows_are_returned_with_lists(monkeypatch):
    snapshot, _, _ = _listed(monkeypatch)
    mask = snapshot.chunk_mask(["v2"])
    allowed = {int(pk) for pk in snapshot.chunk_pk[mask]}
    queries = np.random.default_rng(5).standard_normal((2, DIM))
    for all_windows in (True, False):
        hits = snapshot.vector_leg(mask, queries, 24, all_windows=all_windows)
        assert hits and {pk for _, pk, _ in hits} <= allowed
        _hits_are_exact_cosines(snapshot, hits, queries, all_windows)
    other = snapshot.chunk_mask(["v0"])
    assert {pk for _, pk, _ in snapshot.vector_leg(other, queries, 24)} <= {
        int(pk) for pk in snapshot.chunk_pk[other]
    }


def _bm25_term_by_term(snapshot, mask, variant_terms, k, k1=1.2, b=0.75) -> list:
    """The plain BM25 leg: every variant, every term, added one after another."""
    n = int(mask.sum())
    avgdl = float(snapshot.term_count[mask].mean())
    hits = []
    for index, terms in enumerate(variant_terms, start=1):
        scores = np.zeros(len(snapshot.chunk_pk))
        matched = np.zeros(len(snapshot.chunk_pk), dtype=bool)
        for term in sorted(set(terms)):
            if term not in snapshot.postings:
                continue
            rows, tfs = snapshot.postings[term]
            keep = mask[rows]
            rows, tfs = rows[keep], tfs[keep].astype(np.float64)
            if not len(rows):
                continue
            idf = math.log(1 + (n - len(rows) + 0.5) / (len(rows) + 0.5))
            norm = k1 * (1 - b + b * snapshot.term_count[rows] / avgdl)
            scores[rows] += idf * tfs * (k1 + 1) / (tfs + norm)
            matched[rows] = True
        ranked = sorted(
            (-float(scores[i]), int(snapshot.chunk_pk[i])) for i in np.flatnonzero(matched)
        )[:k]
        hits.extend((index, pk, -score) for score, pk in ranked)
    return hits


def test_the_lexical_leg_equals_term_by_term_bm25_exactly():
    versions, rows, windows = _corpus(900)
    snapshot = TenantSnapshot(KEY, 1, versions, rows, windows, [])
    mask = snapshot.chunk_mask(["v0", "v1", "v2"])
    variants = [
        ["kayak", "trip", "3", "guide"],
        ["trip", "day", "5", "missing-term"],
        ["guide"],
        ["missing-term"],
    ]
    hits = snapshot.lexical_leg(mask, variants, 16, 1.2, 0.75)
    assert hits == _bm25_term_by_term(snapshot, mask, variants, 16)
    assert not [h for h in hits if h[0] == 4]
    assert len([h for h in hits if h[0] == 3]) == 16


def test_top_k_breaks_ties_by_chunk_id_and_skips_unmatched():
    versions, rows, windows = _corpus(40)
    snapshot = TenantSnapshot(KEY, 1, versions, rows, windows, [])
    scores = np.full(len(snapshot.chunk_pk), -np.inf)
    scores[[3, 7, 11, 19, 23]] = [2.0, 5.0, 5.0, 1.0, 5.0]
    top = snapshot._top(1, scores, 2)
    assert top == [(1, int(snapshot.chunk_pk[7]), 5.0), (1, int(snapshot.chunk_pk[11]), 5.0)]
    everything = snapshot._top(2, scores, 10)
    assert [pk for _, pk, _ in everything] == [
        int(snapshot.chunk_pk[i]) for i in (7, 11, 23, 3, 19)
    ]


def _scratch_equal(merged, scratch) -> None:
    assert list(merged) == list(scratch)
    assert merged.bounds.tolist() == scratch.bounds.tolist()
    assert merged.rows.tolist() == scratch.rows.tolist()
    assert merged.tfs.tolist() == scratch.tfs.tolist()


def test_merged_postings_with_interleaved_and_reordered_rows_equal_a_fresh_build(monkeypatch):
    rng = np.random.default_rng(8)
    words = [f"w{i}" for i in range(25)]
    freqs = [
        {w: int(rng.integers(1, 5)) for w in rng.choice(words, 5, replace=False)} for _ in range(60)
    ]
    old = build_postings(freqs[:45])
    kept = [i for i in range(45) if i % 4]
    # new order: the kept old chunks keep their order, the fresh ones fall between them
    fresh_rows = np.array(sorted(rng.choice(len(kept) + 15, 15, replace=False)))
    old_rows = np.array([r for r in range(len(kept) + 15) if r not in set(fresh_rows)])
    remap = np.full(45, -1, dtype=np.int64)
    remap[kept] = old_rows
    fresh = build_postings(freqs[45:])
    sorts = []
    whole_sort = postings._from_pairs
    monkeypatch.setattr(postings, "_from_pairs", lambda *a: sorts.append(1) or whole_sort(*a))
    merged = merge_postings(old, remap, fresh, fresh_rows)
    assert not sorts, "kept pairs in order: the added ones are inserted, nothing re-sorted"
    order = [None] * (len(kept) + 15)
    for old_index, row in zip(kept, old_rows, strict=True):
        order[row] = freqs[old_index]
    for fresh_index, row in enumerate(fresh_rows):
        order[row] = freqs[45 + fresh_index]
    monkeypatch.undo()
    _scratch_equal(merged, build_postings(order))
    monkeypatch.setattr(postings, "_from_pairs", lambda *a: sorts.append(1) or whole_sort(*a))
    # kept chunks in another order: the general path (a full sort) gives the same
    shuffled = rng.permutation(old_rows)
    remap[kept] = shuffled
    merged = merge_postings(old, remap, fresh, fresh_rows)
    assert sorts
    monkeypatch.undo()
    for old_index, row in zip(kept, shuffled, strict=True):
        order[row] = freqs[old_index]
    _scratch_equal(merged, build_postings(order))


def test_lexical_search_gives_term_idf_of_every_variant_term():
    versions, rows, windows = _corpus(300)
    snapshot = TenantSnapshot(KEY, 1, versions, rows, windows, [])
    mask = snapshot.chunk_mask(["v1", "v3"])
    variants = [["kayak", "guide", "5"], ["day", "absent-term"], ["guide"]]
    hits, idf, avgdl = snapshot.lexical_search(mask, variants, 16, 1.2, 0.75)
    assert hits == _bm25_term_by_term(snapshot, mask, variants, 16)
    terms = sorted({t for ts in variants for t in ts})
    assert (idf, avgdl) == snapshot.term_idf(mask, terms)
    assert list(idf) == terms and idf["absent-term"] > idf["kayak"]
    again = snapshot.lexical_search(snapshot.chunk_mask(["v0"]), variants, 16, 1.2, 0.75)
    assert again[1] != idf, "the scope statistics are cached per scope, not shared"
