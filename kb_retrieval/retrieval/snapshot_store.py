"""Loading tenant snapshots (whole or per changed version) and the process-wide snapshot cache."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from datetime import date
from typing import Any

import numpy as np

from kb_retrieval.db.connection import UnknownTenantError
from kb_retrieval.models import Category
from kb_retrieval.retrieval import sql
from kb_retrieval.retrieval.candidates import VersionInfo
from kb_retrieval.retrieval.snapshot import (
    SnapshotKey,
    TenantSnapshot,
    VersionFacts,
    as_float32,
    normalized_rows,
)
from kb_retrieval.retrieval.snapshot_sentences import loaded_nbytes


def read_generation(conn: Any, tenant_id: str) -> int:
    """The tenant's index generation (0 before its first document); UnknownTenantError for a
    tenant that was never registered."""
    registered, generation = conn.execute(sql.INDEX_GENERATION, {"tenant_id": tenant_id}).fetchone()
    if not registered:
        raise UnknownTenantError(tenant_id)
    return int(generation or 0)


def load_snapshot(
    conn: Any,
    key: SnapshotKey,
    generation: int,
    max_vectors: int,
    previous: TenantSnapshot | None = None,
) -> TenantSnapshot | None:
    """Read a tenant's snapshot, or None when it has more than `max_vectors` windows.

    The caller reads `generation` first in the same transaction: what is loaded is then at
    least as new as the generation it is tagged with, never older. With `previous` (an older
    snapshot of the same tenant and pipeline), the rows of every version whose build it holds
    are reused and only the other versions' chunks and vectors are read: a version's rows are
    fixed by its immutable content and its build (a rebuild gets a new `indexed_at`).
    """
    params = key.params()
    version_rows = conn.execute(sql.SNAPSHOT_VERSIONS, params).fetchall()
    facts = _version_facts(version_rows)
    builds = {row[0]: row[8] for row in version_rows}
    params["versions"] = sorted(facts)
    count = conn.execute(sql.VECTOR_COUNT, params).fetchone()[0]
    if count > max_vectors:
        return None
    chunk_rows, window_rows, kept = previous.reusable(builds) if previous else ([], [], set())
    params["versions"] = sorted(set(facts) - kept)
    if params["versions"]:
        chunk_rows += conn.execute(sql.SNAPSHOT_CHUNKS, params).fetchall()
        # Binary transfer: parsing the text form of 384 floats per row was most of the load time.
        cursor = conn.cursor(binary=True)
        window_rows += unit_windows(cursor.execute(sql.SNAPSHOT_VECTORS, params).fetchall())
    titles = [row[0] for row in conn.execute(sql.TRIP_TITLES, params)]
    return TenantSnapshot(
        key,
        generation,
        facts,
        chunk_rows,
        window_rows,
        titles,
        builds,
        params["versions"],
        previous if kept else None,
    )


def unit_windows(rows: Sequence[tuple[int, int, Any]]) -> list[tuple[int, int, np.ndarray]]:
    """SNAPSHOT_VECTORS rows with unit-length float32 vectors (normalised once, when read, so a
    reused row keeps its exact bits)."""
    if not rows:
        return []
    matrix = normalized_rows(np.array([as_float32(r[2]) for r in rows], dtype=np.float32))
    return [(int(r[0]), int(r[1]), matrix[i]) for i, r in enumerate(rows)]


def _version_facts(rows: Sequence[tuple[Any, ...]]) -> dict[str, VersionFacts]:
    superseders: dict[str, list[date | None]] = {}
    for row in rows:
        if row[7] is not None:
            superseders.setdefault(row[7], []).append(row[5])
    out = {}
    for row in rows:
        info = VersionInfo(
            row[0], row[1], row[2], Category(row[3]), row[4], row[5], row[6], row[7], False
        )
        dates = sorted(superseders.get(row[0], []), key=lambda d: (d is not None, d))
        out[row[0]] = VersionFacts(info, tuple(dates))
    return out


class SnapshotStore:
    """Process-wide LRU of tenant snapshots, bounded by their heap and spill-file bytes;
    thread-safe."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._items: OrderedDict[tuple[str, SnapshotKey, int], tuple[int, TenantSnapshot | None]]
        self._items = OrderedDict()
        self._lock = threading.Lock()
        self._loading: set[tuple[str, SnapshotKey, int]] = set()
        self.loads = 0
        self.hits = 0
        self.stale_served = 0

    def get(
        self,
        conn: Any,
        database: str,
        key: SnapshotKey,
        generation: int,
        *,
        max_vectors: int,
        max_bytes: int | None = None,
    ) -> TenantSnapshot | None:
        """The snapshot for this generation, loading it if needed; None: search in PostgreSQL.

        Keyed by the size bound too: a tenant too large for one configuration may fit another.
        A reload never blocks readers: while one thread loads a newer generation, the others
        keep answering from the snapshot they had (its `generation` says which one it is).
        Without an older snapshot, two threads asking at once may both load it.
        """
        slot = (database, key, max_vectors)
        with self._lock:
            if max_bytes is not None:
                self.max_bytes = max_bytes
            found = self._items.get(slot)
            if found is not None and found[0] == generation:
                self.hits += 1
                self._items.move_to_end(slot)
                return found[1]
            if found is not None and slot in self._loading:
                self.stale_served += 1
                return found[1]
            self._loading.add(slot)
        previous = found[1] if found is not None else None
        try:
            snapshot = load_snapshot(conn, key, generation, max_vectors, previous)
        finally:
            with self._lock:
                self._loading.discard(slot)
        with self._lock:
            self.loads += 1
            current = self._items.get(slot)
            if current is None or current[0] <= generation:
                self._items[slot] = (generation, snapshot)
                self._items.move_to_end(slot)
                self._evict()
        return snapshot

    def clear(self) -> None:
        with self._lock:
            self._items.clear()

    def _evict(self) -> None:
        """Drop the least recently used snapshots while heap plus spill-file bytes exceed the
        bound (the spill files hold the exact vectors and rows: disk and page cache)."""
        total = sum(_footprint(s) for _, s in self._items.values())
        while total > self.max_bytes and len(self._items) > 1:
            _, (_, oldest) = self._items.popitem(last=False)
            total -= _footprint(oldest)


def _footprint(snapshot: TenantSnapshot | None) -> int:
    if snapshot is None:
        return 0
    return snapshot.nbytes + snapshot.file_nbytes + loaded_nbytes(snapshot)


SNAPSHOTS = SnapshotStore(max_bytes=2 * 1024**3)
