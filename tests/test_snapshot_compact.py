"""The compact snapshot: two-stage vector leg with exact re-scoring, CSR postings, a spill file."""

from __future__ import annotations

import json
import tracemalloc
from datetime import date

import numpy as np
import pytest

from kb_retrieval.models import Category
from kb_retrieval.retrieval import first_stage
from kb_retrieval.retrieval.candidates import VersionInfo
from kb_retrieval.retrieval.postings import build_postings, merge_postings
from kb_retrieval.retrieval.snapshot import SnapshotKey, TenantSnapshot, VersionFacts
from kb_retrieval.retrieval.spill import SpillFile

KEY = SnapshotKey("t-compact", "p", "c", "m")
AS_OF = date(2026, 6, 1)
DIM = 32


def _row(pk: int, version: str, text: str) -> tuple:
    words = text.split()
    freqs = json.dumps({w: words.count(w) for w in sorted(set(words))})
    return (
        pk,
        version,
        f"{version}_{pk:03d}",
        0,
        "Sec",
        1,
        2,
        f"docv:{version}#chunk:{pk:03d}",
        len(words),
        text,
        "Low",
        len(words),
        freqs,
    )


def _corpus(chunks: int, seed: int = 3, dim: int = DIM) -> tuple[dict, list, list]:
    """Clusters of near-duplicate chunks (1-4 windows each): ties within float16 precision."""
    rng = np.random.default_rng(seed)
    versions = {}
    for v in range(4):
        info = VersionInfo(f"v{v}", f"d{v}", "T", Category.FAQ, 0, None, None, None, False)
        versions[f"v{v}"] = VersionFacts(info, ())
    centres = rng.standard_normal((12, dim))
    rows, windows = [], []
    for pk in range(100, 100 + chunks):
        rows.append(_row(pk, f"v{pk % 4}", f"kayak trip {pk % 7} day {pk % 11} guide"))
        centre = centres[pk % 12]
        for index in range(1 + pk % 4):
            vector = (
                centre
                + 1e-4 * rng.standard_normal(dim)
                + 0.3 * rng.standard_normal(dim) * (index > 0)
            )
            windows.append((pk, index, (vector / np.linalg.norm(vector)).astype(np.float32)))
    return versions, rows, windows


def _exact_top(snapshot, windows, mask, queries, k, all_windows=True) -> list:
    """Brute force in float64 over the float32 vectors: (variant, pk, cosine) in rank order."""
    allowed = {int(pk) for pk in snapshot.chunk_pk[mask]}
    out = []
    for column, query in enumerate(queries, start=1):
        q = np.asarray(query, dtype=np.float64)
        q = q / np.linalg.norm(q)
        best: dict[int, float] = {}
        for pk, index, vector in windows:
            if pk in allowed and (all_windows or index == 0):
                score = float(vector.astype(np.float64) @ q)
                best[pk] = max(best.get(pk, -2.0), score)
        ranked = sorted(best.items(), key=lambda item: (-item[1], item[0]))[:k]
        out.extend((column, pk, score) for pk, score in ranked)
    return out


def _same_ranking(hits: list, expected: list, tolerance: float = 1e-6) -> None:
    """The same cosines in the same order; the same chunks except ties within `tolerance`
    (float32 products here, float64 in `_exact_top`)."""
    assert [s for _, _, s in hits] == pytest.approx([s for _, _, s in expected], abs=tolerance)
    for variant in {v for v, _, _ in expected}:
        want = [(pk, s) for v, pk, s in expected if v == variant]
        got = {pk for v, pk, s in hits if v == variant and s > want[-1][1] + tolerance}
        assert got == {pk for pk, s in want if s > want[-1][1] + tolerance}


def _hits_are_exact_cosines(snapshot, hits, queries, all_windows) -> None:
    sims = snapshot.candidate_sims([pk for _, pk, _ in hits], queries, all_windows=all_windows)
    for variant, pk, score in hits:
        assert abs(sims[pk][variant - 1] - score) < 1e-6


def test_the_exact_first_stage_returns_the_exact_top_k():
    versions, rows, windows = _corpus(600)
    snapshot = TenantSnapshot(KEY, 1, versions, rows, windows, [])
    assert snapshot.basis is None and snapshot.scan.size == 0
    queries = np.random.default_rng(11).standard_normal((3, DIM))
    mask = snapshot.chunk_mask(["v0", "v1", "v3"])
    for all_windows in (True, False):
        hits = snapshot.vector_leg(mask, queries, 24, all_windows=all_windows)
        _same_ranking(hits, _exact_top(snapshot, windows, mask, queries, 24, all_windows))
        _hits_are_exact_cosines(snapshot, hits, queries, all_windows)


def test_the_projected_first_stage_keeps_recall_and_exact_scores(monkeypatch):
    monkeypatch.setattr(first_stage, "PROJECT_ABOVE_WINDOWS", 0)
    monkeypatch.setattr(first_stage, "SCAN_DIMS", 12)
    versions, rows, windows = _corpus(2000)
    snapshot = TenantSnapshot(KEY, 1, versions, rows, windows, [])
    again = TenantSnapshot(KEY, 1, versions, rows, windows, [])
    assert snapshot.scan.shape == (len(windows), 12)
    assert snapshot.basis.tobytes() == again.basis.tobytes(), "the projection is deterministic"
    rng = np.random.default_rng(17)
    mask = snapshot.chunk_mask(["v0", "v2", "v3"])
    recall = {}
    for shortlist in (300, 1200, len(windows)):
        found = wanted = 0
        for _ in range(5):
            queries = rng.standard_normal((3, DIM))
            hits = snapshot.vector_leg(mask, queries, 24, shortlist=shortlist)
            assert len(hits) == 3 * 24
            assert hits == again.vector_leg(mask, queries, 24, shortlist=shortlist)
            expected = _exact_top(snapshot, windows, mask, queries, 24)
            if shortlist == len(windows):
                _same_ranking(hits, expected)
            found += len({(v, pk) for v, pk, _ in expected} & {(v, pk) for v, pk, _ in hits})
            wanted += len(expected)
            _hits_are_exact_cosines(snapshot, hits, queries, True)
        recall[shortlist] = found / wanted
    assert recall[len(windows)] == 1.0
    assert recall[300] <= recall[1200] and recall[1200] >= 0.98, recall


def test_rows_and_exact_vectors_come_back_from_the_spill_file():
    versions, rows, windows = _corpus(40)
    snapshot = TenantSnapshot(KEY, 1, versions, rows, windows, [])
    parsed = [(*row[:12], json.loads(row[12])) for row in rows]
    assert [snapshot.row(pk) for pk in snapshot.chunk_pk] == parsed
    assert all(isinstance(snapshot.row(pk)[12], dict) for pk in snapshot.chunk_pk)
    assert snapshot.row(99) is None and snapshot.row(10**6) is None
    by_key = {(pk, index): vector for pk, index, vector in windows}
    for i, row in enumerate(snapshot.window_chunk):
        pk = int(snapshot.chunk_pk[row])
        stored = by_key[(pk, int(snapshot.window_index[i]))]
        assert snapshot.vectors[i].tobytes() == stored.tobytes()
    empty = SpillFile(np.empty((0, 0), dtype=np.float32), [])
    assert empty.file_bytes == 0 and empty.vectors.shape == (0, 0)


def test_merged_postings_equal_postings_built_from_scratch():
    rng = np.random.default_rng(5)
    words = [f"w{i}" for i in range(30)]
    freqs = [
        {w: int(rng.integers(1, 4)) for w in rng.choice(words, 6, replace=False)} for _ in range(50)
    ]
    old = build_postings(freqs[:40])
    kept = [i for i in range(40) if i % 3]  # drop every third old chunk
    remap = np.full(40, -1, dtype=np.int64)
    remap[kept] = np.arange(len(kept))
    fresh = build_postings(freqs[40:])
    fresh_rows = np.arange(len(kept), len(kept) + 10)
    merged = merge_postings(old, remap, fresh, fresh_rows)
    scratch = build_postings([freqs[i] for i in kept] + freqs[40:])
    assert list(merged) == list(scratch)
    for term in scratch:
        assert merged[term][0].tolist() == scratch[term][0].tolist()
        assert merged[term][1].tolist() == scratch[term][1].tolist()


@pytest.mark.parametrize("projected", [False, True])
def test_the_heap_holds_a_fraction_of_the_float32_vectors(monkeypatch, projected):
    if projected:
        monkeypatch.setattr(first_stage, "PROJECT_ABOVE_WINDOWS", 0)
    versions, rows, windows = _corpus(1500, dim=384)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        snapshot = TenantSnapshot(KEY, 1, versions, rows, windows, [])
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    float32_vectors = len(windows) * 384 * 4
    assert snapshot.vector_count == len(windows)
    assert snapshot.file_nbytes > float32_vectors
    # the first-stage copy (none, or SCAN_DIMS of 384 dimensions) plus postings and per-chunk
    # arrays; the exact vectors and the rows are in the file
    share = first_stage.SCAN_DIMS / 384 if projected else 0.0
    assert held < share * float32_vectors + 384 * 384 * 4 + 300 * len(rows)
    assert snapshot.nbytes <= held


def test_the_snapshot_cache_bound_counts_the_spill_files():
    from kb_retrieval.retrieval.snapshot_store import SnapshotStore

    versions, rows, windows = _corpus(200, dim=384)
    snapshots = [TenantSnapshot(KEY, g, versions, rows, windows, []) for g in (1, 2, 3)]
    one = snapshots[0].nbytes + snapshots[0].file_nbytes
    assert snapshots[0].file_nbytes > 4 * snapshots[0].nbytes, "most bytes are in the file"
    store = SnapshotStore(max_bytes=2 * one + one // 2)
    for generation, snapshot in enumerate(snapshots, start=1):
        store._items[("db", KEY, generation)] = (generation, snapshot)
        store._evict()
    assert [slot[2] for slot in store._items] == [2, 3], "the oldest went, by heap + file bytes"
