"""In-memory search snapshots: exact vector and BM25 legs per tenant, without scanning tables.

A snapshot holds, for one tenant and one pipeline (parser, chunker, embedding model), every
indexed version's eligibility facts, each chunk's BM25 postings and every window vector. It is
read through the tenant-scoped connection (row-level security applies), tagged with the
tenant's index generation (migration 0005, bumped by triggers on every change of
`doc_versions` and `doc_builds`) and reused until that generation moves on.

Both legs return what the SQL legs in `sql.py` return (same candidates, same order, same
tie-breaks): up to `first_stage.PROJECT_ABOVE_WINDOWS` windows the vector leg is an exact scan
(recall 1.0 against exact search); above, a projected first stage picks the windows that are
re-scored exactly (every returned cosine exact, recall measured by bench/). BM25 uses the same
document frequencies and mean length over the eligible chunks. The exact vectors and the chunk
rows live in a memory-mapped spill file (`spill.py`), not on the heap.
Tenants with more window vectors than `RetrievalConfig.in_memory_max_vectors` are searched in
PostgreSQL instead (exact scan, then HNSW).
"""

from __future__ import annotations

import copy
import dataclasses
import json
import math
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

import numpy as np

from kb_retrieval.retrieval import first_stage
from kb_retrieval.retrieval.candidates import (
    Candidate,
    PipelineKey,
    VersionInfo,
    candidate_from_row,
)
from kb_retrieval.retrieval.postings import Postings, build_postings, merge_postings
from kb_retrieval.retrieval.snapshot_classes import class_lexical, text_classes
from kb_retrieval.retrieval.spill import SpillFile

SnapshotKey = PipelineKey

Hit = tuple[int, int, float]
SCOPE_CACHE_SIZE = 16


@dataclass(frozen=True)
class VersionFacts:
    """An indexed version and the effective dates of the indexed versions superseding it."""

    info: VersionInfo
    superseded_from: tuple[date | None, ...]

    def eligible(self, as_of: date) -> bool:
        effective = self.info.effective_date
        return effective is None or effective <= as_of

    def superseded(self, as_of: date) -> bool:
        return any(day is None or day <= as_of for day in self.superseded_from)


class TenantSnapshot:
    """One tenant's searchable state for one pipeline, as of one index generation.

    `chunk_rows` are SNAPSHOT_CHUNKS rows; `window_rows` are (chunk_pk, window_index, vector)
    with unit-length vectors (`unit_windows` of SNAPSHOT_VECTORS rows); `builds` maps each
    version to the `indexed_at` of the build its rows come from. With `previous`, the rows of
    every version outside `fetched_versions` come from that older snapshot, whose postings are
    then remapped instead of rebuilt from `term_freqs`.
    """

    def __init__(
        self,
        key: SnapshotKey,
        generation: int,
        versions: dict[str, VersionFacts],
        chunk_rows: Sequence[Sequence[Any]],
        window_rows: Sequence[tuple[int, int, Any]],
        trip_titles: Sequence[str],
        builds: dict[str, Any] | None = None,
        fetched_versions: Sequence[str] = (),
        previous: TenantSnapshot | None = None,
    ) -> None:
        self.key = key
        self.generation = generation
        self.builds = dict(builds or {})
        self.fetched_versions = tuple(fetched_versions)
        self._scopes: dict[tuple[date, bool], tuple[dict[str, VersionInfo], np.ndarray]] = {}
        self._scopes_lock = threading.Lock()
        self.versions = versions
        self.trip_titles = tuple(trip_titles)
        self.version_ids = sorted(versions)
        position = {vid: i for i, vid in enumerate(self.version_ids)}
        rows = sorted((r for r in chunk_rows if r[1] in position), key=lambda r: r[0])
        # term_freqs parsed once, here: the spill keeps the dict (marshal reads it back ~1.5x
        # faster than json.loads parsed the text for every candidate of every query).
        rows = [(*r[:12], _term_freqs(r[12]), *r[13:]) for r in rows]
        self.chunk_pk = np.array([r[0] for r in rows], dtype=np.int64)
        self.chunk_version = np.array([position[r[1]] for r in rows], dtype=np.int32)
        self.term_count = np.array([r[11] for r in rows], dtype=np.float64)
        fetched = set(fetched_versions)
        if previous is not None:
            self.postings = _reused_postings(previous, fetched, rows)
        else:
            self.postings = build_postings([r[12] for r in rows])
        self.classes = text_classes(rows)
        row_of = {int(pk): i for i, pk in enumerate(self.chunk_pk.tolist())}
        windows = sorted(
            ((row_of[w[0]], w[1], w[2]) for w in window_rows if w[0] in row_of),
            key=lambda w: (w[0], w[1]),
        )
        self.window_chunk = np.array([w[0] for w in windows], dtype=np.int32)
        self.window_index = np.array([w[1] for w in windows], dtype=np.int16)
        self.window_first = self.window_index == 0
        dim = len(windows[0][2]) if windows else 0
        exact = np.empty((len(windows), dim), dtype=np.float32)
        for i, window in enumerate(windows):
            exact[i] = as_float32(window[2])
        del windows
        # Each chunk's row as SNAPSHOT_CHUNKS returns it (term_freqs parsed) and the exact
        # vectors, in a memory-mapped file: candidates' rows without a round trip (8-15 ms per
        # retrieval at 100k, bench/) and exact cosines without float32 vectors on the heap.
        self._spill = SpillFile(exact, rows)
        self.vectors = self._spill.vectors
        self._penalties: dict[tuple[int, bool], tuple[np.ndarray, np.ndarray]] = {}
        self._stats: dict[tuple[int, float, float], tuple[np.ndarray, ScopeStats]] = {}
        self._set_first_stage(
            exact,
            first_stage.SCAN_DIMS if len(exact) > first_stage.PROJECT_ABOVE_WINDOWS else None,
        )
        del exact
        self.window_rows, self.window_starts = (
            np.unique(self.window_chunk, return_index=True)
            if len(self.window_chunk)
            else (np.array([], dtype=np.int64),) * 2
        )
        everything = np.arange(len(self.chunk_pk))
        self.row_window_start = np.searchsorted(self.window_chunk, everything, "left")
        self.row_window_end = np.searchsorted(self.window_chunk, everything, "right")

    @property
    def nbytes(self) -> int:
        """Heap bytes of the snapshot's arrays (the spill file's bytes are in `file_nbytes`)."""
        arrays = (
            self.chunk_pk,
            self.chunk_version,
            self.term_count,
            self.window_chunk,
            self.window_index,
            self.window_first,
            self.scan,
            self.basis if self.basis is not None else _EMPTY_ROWS,
            self.window_rows,
            self.window_starts,
            self.row_window_start,
            self.row_window_end,
            self._spill.offsets,
        )
        if self.lists is not None:
            arrays += (self.lists.centroids, self.lists.order, self.lists.bounds)
        penalties = sum(p.nbytes for _, p in list(self._penalties.values()))
        postings = self.postings.nbytes + self.classes.nbytes
        return int(sum(a.nbytes for a in arrays) + postings + penalties)

    @property
    def file_nbytes(self) -> int:
        """Bytes of the memory-mapped spill file (exact vectors and rows)."""
        return self._spill.file_bytes

    def row(self, pk: int) -> tuple[Any, ...] | None:
        """The chunk's SNAPSHOT_CHUNKS row (term_freqs parsed into a dict), or None when the
        snapshot does not hold it."""
        index = int(np.searchsorted(self.chunk_pk, pk))
        if index < len(self.chunk_pk) and self.chunk_pk[index] == pk:
            return self._spill.row(index)
        return None

    def reusable(
        self, builds: dict[str, Any]
    ) -> tuple[list[Sequence[Any]], list[tuple[int, int, np.ndarray]], set[str]]:
        """The chunk and window rows of every version whose build this snapshot already holds
        (same `indexed_at`), and those versions: a reload reads only the others."""
        kept = {
            vid
            for vid, built in builds.items()
            if built is not None and self.builds.get(vid) == built
        }
        kept_positions = np.array([vid in kept for vid in self.version_ids], dtype=bool)
        kept_rows = np.flatnonzero(kept_positions[self.chunk_version]) if len(self.chunk_pk) else []
        chunk_rows: list[Sequence[Any]] = [self._spill.row(int(i)) for i in kept_rows]
        wanted = np.zeros(len(self.chunk_pk), dtype=bool)
        wanted[kept_rows] = True
        picked = np.flatnonzero(wanted[self.window_chunk])
        block = self.vectors[picked]
        pks = self.chunk_pk[self.window_chunk[picked]].tolist()
        indexes = self.window_index[picked].tolist()
        window_rows = [(pks[j], indexes[j], block[j]) for j in range(len(picked))]
        return chunk_rows, window_rows, kept

    @property
    def vector_count(self) -> int:
        return len(self.window_chunk)

    def scope(self, as_of: date, *, audit: bool) -> tuple[dict[str, VersionInfo], np.ndarray]:
        """Eligible versions and their chunk mask, cached per (date, mode): most retrievals of a
        day share both (at 4,000 versions computing them took 33 ms, bench/retrieval.py).
        Callers must not mutate the result."""
        key = (as_of, audit)
        found = self._scopes.get(key)
        if found is None:
            versions = self.eligible_versions(as_of, audit=audit)
            found = (versions, self.chunk_mask(versions))
            with self._scopes_lock:
                if len(self._scopes) >= SCOPE_CACHE_SIZE:
                    self._scopes.pop(next(iter(self._scopes)), None)
                self._scopes[key] = found
        return found

    def eligible_versions(self, as_of: date, *, audit: bool) -> dict[str, VersionInfo]:
        """What `candidates.load_versions` returns for the same date and mode."""
        out = {}
        for vid in self.version_ids:
            facts = self.versions[vid]
            if not facts.eligible(as_of):
                continue
            superseded = facts.superseded(as_of)
            if audit or not superseded:
                out[vid] = _with_superseded(facts.info, superseded)
        return out

    def chunk_mask(self, version_ids: Iterable[str]) -> np.ndarray:
        """Chunks of the given versions (the retrieval's eligible scope)."""
        wanted = set(version_ids)
        allowed = np.array([vid in wanted for vid in self.version_ids], dtype=bool)
        return allowed[self.chunk_version] if len(self.chunk_version) else allowed[:0]

    def with_first_stage(self, dims: int | None, *, lists: bool = True) -> TenantSnapshot:
        """A copy whose vector leg starts with a projection on `dims` principal directions
        (grouped in coarse lists above `LISTS_ABOVE_WINDOWS` unless `lists` is false), or with
        the exact float32 scan (None); everything else shared (bench/ compares them)."""
        other = copy.copy(self)
        other._penalties = {}
        other._stats = {}
        other._set_first_stage(self.vectors, dims if self.vector_count else None, lists=lists)
        return other

    def _set_first_stage(self, exact: np.ndarray, dims: int | None, *, lists: bool = True) -> None:
        """The projection basis, the projected windows (in coarse-list order when there are
        lists) and the lists; nothing for the exact scan (dims None)."""
        self.basis: np.ndarray | None = None
        self.scan = np.empty((len(exact), 0), dtype=np.float32)
        self.lists: first_stage.CoarseLists | None = None
        if dims is None:
            return
        self.basis = first_stage.principal_basis(exact, dims)
        self.scan = np.ascontiguousarray(exact @ self.basis)
        self.lists = first_stage.coarse_lists(self.scan) if lists else None
        if self.lists is not None:
            self.scan = np.ascontiguousarray(self.scan[self.lists.order])

    def _penalty(self, mask: np.ndarray, all_windows: bool) -> np.ndarray:
        """0 for the eligible windows, -inf for the others, in the projected windows' order;
        cached per scope mask (the same object while `scope` caches it): recomputing it per
        query was a pass over every window."""
        key = (id(mask), all_windows)
        with self._scopes_lock:
            found = self._penalties.get(key)
        if found is not None and found[0] is mask:
            return found[1]
        eligible = mask[self.window_chunk]
        if not all_windows:
            eligible &= self.window_first
        penalty = np.where(eligible, np.float32(0), np.float32(-np.inf)).astype(np.float32)
        if self.lists is not None:
            penalty = penalty[self.lists.order]
        with self._scopes_lock:
            if len(self._penalties) >= SCOPE_CACHE_SIZE:
                self._penalties.pop(next(iter(self._penalties)), None)
            self._penalties[key] = (mask, penalty)
        return penalty

    def vector_leg(
        self,
        mask: np.ndarray,
        vectors: np.ndarray,
        k: int,
        *,
        all_windows: bool = True,
        shortlist: int | None = None,
    ) -> list[Hit]:
        """(variant from 1, chunk_pk, best-window cosine) of the top k chunks per variant.

        Up to `first_stage.PROJECT_ABOVE_WINDOWS` windows: the exact float32 scan. Above: the
        windows' projections on the `SCAN_DIMS` principal directions of the tenant's vectors
        pick the best `shortlist` windows per variant, those are re-scored exactly, and the
        2k chunks they rank best get their exact best-window cosine (every window): the top k
        of those is returned, every cosine exact, recall measured (bench/vector_scan.py).
        """
        queries = normalized_rows(np.asarray(vectors, dtype=np.float32).reshape(len(vectors), -1))
        if not self.vector_count or not len(queries):
            return []
        if self.basis is not None:
            return self._projected_leg(mask, queries, k, all_windows, shortlist)
        sims = _similarities(self.vectors, queries)
        best = np.full((len(self.chunk_pk), len(queries)), -np.inf, dtype=np.float32)
        if all_windows:
            best[self.window_rows] = np.maximum.reduceat(sims, self.window_starts, axis=0)
        else:
            best[self.window_chunk[self.window_first]] = sims[self.window_first]
        best[~mask] = -np.inf
        hits: list[Hit] = []
        for column in range(len(queries)):
            hits.extend(self._top(column + 1, best[:, column], k))
        return hits

    def _projected_leg(
        self,
        mask: np.ndarray,
        queries: np.ndarray,
        k: int,
        all_windows: bool,
        shortlist: int | None,
    ) -> list[Hit]:
        size = first_stage.SHORTLIST_WINDOWS if shortlist is None else shortlist
        projected = np.ascontiguousarray(queries @ self.basis)
        penalty = self._penalty(mask, all_windows)
        if self.lists is None:
            approx = _similarities(self.scan, projected)
            approx += penalty[:, None]
            picked = first_stage.best_windows(approx, size)
            finite = np.isfinite(np.take_along_axis(approx, picked, axis=0))
        else:
            positions = self.lists.probe(projected, size)
            approx = _similarities(np.take(self.scan, positions, axis=0), projected)
            approx += penalty[positions][:, None]
            local = first_stage.best_windows(approx, size)
            finite = np.isfinite(np.take_along_axis(approx, local, axis=0))
            picked = self.lists.order[positions[local]]
        marked = np.zeros(self.vector_count, dtype=bool)
        marked[picked[finite]] = True
        windows = np.flatnonzero(marked)
        exact = _similarities(np.take(self.vectors, windows, axis=0), queries)
        per_column = _best_chunks_per_column(
            picked, finite, windows, exact, self.window_chunk, 2 * k
        )
        rows = np.unique(np.concatenate(per_column)).astype(np.int64)
        full = self._exact_best(rows, queries, all_windows=all_windows)
        hits: list[Hit] = []
        for column, candidates in enumerate(per_column):
            scores = full[np.searchsorted(rows, candidates), column]
            order = np.lexsort((self.chunk_pk[candidates], -scores))[:k]
            hits.extend(
                (column + 1, int(self.chunk_pk[candidates[i]]), float(scores[i])) for i in order
            )
        return hits

    def _exact_best(
        self, rows: np.ndarray, queries: np.ndarray, *, all_windows: bool
    ) -> np.ndarray:
        """Best exact window cosine of each chunk row (rows x queries, float32 products of the
        stored vectors, as the SQL exact scan ranks them)."""
        if not len(rows):
            return np.empty((0, len(queries)), dtype=np.float32)
        starts = self.row_window_start[rows]
        ends = self.row_window_end[rows] if all_windows else starts + 1
        counts = ends - starts
        windows = np.repeat(starts - np.cumsum(counts) + counts, counts) + np.arange(counts.sum())
        sims = _similarities(self.vectors[windows], queries)
        return np.maximum.reduceat(sims, np.cumsum(counts) - counts, axis=0)

    def candidate_sims(
        self, pks: Sequence[int], vectors: np.ndarray, *, all_windows: bool = True
    ) -> dict[int, list[float]]:
        """Best-window cosine of each given chunk for each variant (float64 dot products of the
        stored float32 vectors; within 1e-6 of pgvector's `<=>`)."""
        queries = normalized_rows(np.asarray(vectors, dtype=np.float64).reshape(len(vectors), -1))
        out: dict[int, list[float]] = {}
        for pk in pks:
            index = int(np.searchsorted(self.chunk_pk, pk))
            if index >= len(self.chunk_pk) or self.chunk_pk[index] != pk:
                continue
            start, end = self.row_window_start[index], self.row_window_end[index]
            windows = self.vectors[start:end].astype(np.float64)
            if not all_windows:
                windows = windows[self.window_first[start:end]]
            if len(windows):
                out[int(pk)] = [float(s) for s in (windows @ queries.T).max(axis=0)]
        return out

    def candidates(
        self, pks: Iterable[int], versions: dict[str, VersionInfo]
    ) -> dict[int, Candidate]:
        """What `candidates.fetch_candidates` returns without vectors, from memory."""
        out = {}
        for pk in sorted({int(pk) for pk in pks}):
            row = self.row(pk)
            version = versions.get(row[1]) if row is not None else None
            if version is not None:
                out[pk] = candidate_from_row(row, version)
        return out

    def lexical_leg(
        self, mask: np.ndarray, variant_terms: Sequence[Sequence[str]], k: int, k1: float, b: float
    ) -> list[Hit]:
        """(variant from 1, chunk_pk, BM25) of the top k chunks per variant, as `LEXICAL_BM25`."""
        return self.lexical_search(mask, variant_terms, k, k1, b)[0]

    def lexical_search(
        self, mask: np.ndarray, variant_terms: Sequence[Sequence[str]], k: int, k1: float, b: float
    ) -> tuple[list[Hit], dict[str, float], float]:
        """`lexical_leg`'s hits with what `term_idf(mask, every variant's terms)` returns: the
        leg counts each term's eligible postings anyway. Scored over text classes (chunks with
        equal terms scored once, `snapshot_classes.py`); each distinct term's weights computed
        once per call and shared by the variants; the scope's size, mean length, length norms
        and eligible chunks per class once per scope."""
        stats = self._scope_stats(mask, k1, b)
        tops, idf = class_lexical(
            self.classes,
            mask,
            stats.counts,
            stats.norm,
            stats.n,
            variant_terms,
            k,
            k1,
            self.chunk_pk,
        )
        hits = [
            (index, int(self.chunk_pk[row]), score)
            for index, top in enumerate(tops, start=1)
            for row, score in top
        ]
        return hits, idf, stats.avgdl

    def term_idf(self, mask: np.ndarray, terms: Sequence[str]) -> tuple[dict[str, float], float]:
        """What `candidates.term_idf` returns: BM25 idf per term over the scope, and avgdl."""
        stats = self._scope_stats(mask, 0.0, 0.0)
        idf = {}
        for term in sorted(set(terms)):
            rows, _tfs = self.postings.get(term, (_EMPTY_ROWS, _EMPTY_TFS))
            df = int(np.count_nonzero(mask[rows]))
            idf[term] = math.log(1 + (stats.n - df + 0.5) / (df + 0.5))
        return idf, stats.avgdl

    def _scope_stats(self, mask: np.ndarray, k1: float, b: float) -> ScopeStats:
        """The scope's size, mean length and length norms, cached per scope mask (the same
        object while `scope` caches it) like the window penalties."""
        key = (id(mask), k1, b)
        with self._scopes_lock:
            found = self._stats.get(key)
        if found is not None and found[0] is mask:
            return found[1]
        n = int(mask.sum())
        avgdl = float(self.term_count[mask].mean()) if n else 1.0
        # Per chunk, the same float64 operations as per posting: identical values.
        norm = k1 * (1 - b + b * self.term_count / avgdl)
        stats = ScopeStats(n, avgdl, norm, self.classes.eligible_counts(mask))
        with self._scopes_lock:
            if len(self._stats) >= SCOPE_CACHE_SIZE:
                self._stats.pop(next(iter(self._stats)), None)
            self._stats[key] = (mask, stats)
        return stats

    def _top(self, variant: int, scores: np.ndarray, k: int) -> list[Hit]:
        """The k best finite scores, ties broken by chunk_pk like the SQL `ORDER BY`: every
        score at least the k-th best (torch's top-k, a partial sort) is ordered exactly."""
        import torch

        if k <= 0:
            return []
        if len(scores) > k:
            cut = torch.topk(torch.from_numpy(scores), k, sorted=False).values.min().item()
            found = np.flatnonzero(scores >= cut)
        else:
            found = np.arange(len(scores))
        found = found[np.isfinite(scores[found])]
        order = np.lexsort((self.chunk_pk[found], -scores[found]))[:k]
        return [(variant, int(self.chunk_pk[found[i]]), float(scores[found[i]])) for i in order]


@dataclass(frozen=True)
class ScopeStats:
    """A scope's chunk count, mean length, each chunk's BM25 length norm and the eligible
    chunks of each text class."""

    n: int
    avgdl: float
    norm: np.ndarray
    counts: np.ndarray


def _best_chunks_per_column(
    picked: np.ndarray,
    finite: np.ndarray,
    windows: np.ndarray,
    exact: np.ndarray,
    window_chunk: np.ndarray,
    size: int,
) -> list[np.ndarray]:
    """Per column of `picked` (shortlisted windows x queries; only the `finite` ones count;
    `exact[i]` the cosines of window `windows[i]`): the chunk rows of the `size` best chunks by
    their best shortlisted window, best first, ties by chunk row. All columns at once, with
    one-key sorts (two `lexsort`s per column cost ~0.5 ms per variant at 100k chunks)."""
    columns = np.broadcast_to(np.arange(picked.shape[1], dtype=np.int64), picked.shape)[finite]
    chosen = picked[finite]
    values = exact[np.searchsorted(windows, chosen), columns]
    keys = (columns << 32) | window_chunk[chosen].astype(np.int64)
    order = np.argsort(keys, kind="stable")
    keys, values = keys[order], values[order]
    starts = np.flatnonzero(np.concatenate(([True], keys[1:] != keys[:-1])))
    best = np.maximum.reduceat(values, starts) if len(starts) else values
    keys = keys[starts]
    columns, chunks = keys >> 32, keys & 0xFFFFFFFF
    # Column first, then the cosine descending (exact in float64: |cosine| <= 1 and a float32
    # mantissa), then chunk row (the stable sort keeps the (column, chunk) order of ties).
    order = np.argsort(columns * 4.0 - best.astype(np.float64), kind="stable")
    columns, chunks = columns[order], chunks[order]
    bounds = np.searchsorted(columns, np.arange(picked.shape[1] + 1))
    return [
        chunks[bounds[c] : min(bounds[c + 1], bounds[c] + size)] for c in range(len(bounds) - 1)
    ]


_EMPTY_ROWS = np.array([], dtype=np.int64)
_EMPTY_TFS = np.array([], dtype=np.float32)


def _similarities(vectors: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """vectors @ queries.T through torch, on the thread pool the query embedder uses.

    numpy's OpenBLAS threads spin after a matmul and then compete with torch's OpenMP threads:
    measured here, the next query embedding took 63 ms instead of 26 ms p50 after a numpy
    matmul of 27k windows (12 ms), and 24 ms after the same product in torch (2.8 ms).
    """
    import torch

    # (windows x dim) @ (queries x dim).T as a transposed view: 2.8 ms for 27k windows here,
    # against 8 ms with a contiguous (dim x queries) right-hand side (another kernel).
    with torch.inference_mode():
        right = torch.from_numpy(np.ascontiguousarray(queries, dtype=vectors.dtype))
        product = torch.from_numpy(vectors) @ right.T
    return product.numpy()


def as_float32(value: Any) -> np.ndarray:
    """A pgvector `Vector` (or anything array-like) as float32."""
    to_numpy = getattr(value, "to_numpy", None)
    return np.asarray(to_numpy() if to_numpy else value, dtype=np.float32)


def _reused_postings(
    previous: TenantSnapshot, fetched: set[str], rows: Sequence[Sequence[Any]]
) -> Postings:
    """The postings of `rows`: the previous snapshot's, remapped, for chunks of versions it
    already held; built from `term_freqs` for the chunks of the `fetched` versions."""
    new_row = {int(r[0]): i for i, r in enumerate(rows) if r[1] not in fetched}
    remap = np.full(len(previous.chunk_pk), -1, dtype=np.int64)
    old_versions = previous.version_ids
    for old_row, (pk, version) in enumerate(
        zip(previous.chunk_pk.tolist(), previous.chunk_version.tolist(), strict=True)
    ):
        if old_versions[version] not in fetched:
            remap[old_row] = new_row.get(pk, -1)
    fresh = [(i, r) for i, r in enumerate(rows) if r[1] in fetched]
    fresh_postings = build_postings([r[12] for _, r in fresh])
    fresh_rows = np.array([i for i, _ in fresh], dtype=np.int64)
    return merge_postings(previous.postings, remap, fresh_postings, fresh_rows)


def _term_freqs(value: str | dict[str, int]) -> dict[str, int]:
    """A row's term_freqs as a dict: SNAPSHOT_CHUNKS gives JSON text, a reused row the dict."""
    return json.loads(value) if isinstance(value, str) else value


def _with_superseded(info: VersionInfo, superseded: bool) -> VersionInfo:
    return dataclasses.replace(info, superseded=superseded)


def normalized_rows(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True) if matrix.size else matrix
    return matrix / np.where(norms == 0, 1, norms) if matrix.size else matrix
