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
This module builds the snapshot and its scopes; the two legs are mixins that `TenantSnapshot`
inherits: `snapshot_vectors.py` (vector leg, exact cosines, top-k) and `snapshot_lexical.py`
(BM25 leg, idf). The names callers import from here are re-exported.
Tenants with more window vectors than `RetrievalConfig.in_memory_max_vectors` are searched in
PostgreSQL instead (exact scan, then HNSW).
"""

from __future__ import annotations

import dataclasses
import json
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
from kb_retrieval.retrieval.snapshot_classes import text_classes
from kb_retrieval.retrieval.snapshot_lexical import EMPTY_ROWS, LexicalLeg, ScopeStats
from kb_retrieval.retrieval.snapshot_vectors import (
    SCOPE_CACHE_SIZE,
    Hit,
    VectorLeg,
    as_float32,
    normalized_rows,
)
from kb_retrieval.retrieval.spill import SpillFile

__all__ = [
    "SCOPE_CACHE_SIZE",
    "Hit",
    "ScopeStats",
    "SnapshotKey",
    "TenantSnapshot",
    "VersionFacts",
    "as_float32",
    "normalized_rows",
]

SnapshotKey = PipelineKey


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


class TenantSnapshot(VectorLeg, LexicalLeg):
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
            self.basis if self.basis is not None else EMPTY_ROWS,
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
