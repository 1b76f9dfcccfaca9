"""The stored sentence vectors (migration 0008) of a tenant snapshot, loaded on first use.

Only a retrieval with `sentence_features` on asks for them: `ensure_loaded` reads every
sentence vector of the snapshot's chunks once (through the tenant-scoped connection, so
row-level security applies), keeps them in a memory-mapped spill file beside the snapshot and
frees them with it. Rows of chunks the snapshot does not hold are dropped, so what is read in a
later transaction never adds chunks to an older snapshot. `lookup` returns the candidates'
matrices, the same float32 rows `sentence_vectors.fetch_sentence_vectors` reads from PostgreSQL.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Iterable
from typing import Any

import numpy as np

from kb_retrieval.retrieval.sentence_vectors import as_float32
from kb_retrieval.retrieval.snapshot import TenantSnapshot
from kb_retrieval.retrieval.spill import SpillFile
from kb_retrieval.text.sentence_units import UNITS_VERSION

SNAPSHOT_SENTENCES = """
SELECT s.chunk_pk, s.embedding FROM chunk_sentence_vectors s
WHERE s.tenant_id = %(tenant_id)s AND s.embedding_model_id = %(embedding_model_id)s
  AND s.chunker_version = %(chunker_version)s AND s.units_version = %(units_version)s
  AND s.doc_version_id = ANY(%(versions)s)
ORDER BY s.chunk_pk, s.sentence_index
"""


class SentenceMatrix:
    """Every sentence vector of a snapshot's chunks: rows grouped by chunk_pk (ascending)."""

    def __init__(self, pks: np.ndarray, vectors: np.ndarray) -> None:
        self.chunk_pks, self.starts, counts = (
            np.unique(pks, return_index=True, return_counts=True)
            if len(pks)
            else (np.array([], dtype=np.int64),) * 3
        )
        self.ends = self.starts + counts
        self._spill = SpillFile(vectors, [])
        self.vectors = self._spill.vectors

    @property
    def nbytes(self) -> int:
        """Heap plus spill-file bytes."""
        arrays = (self.chunk_pks, self.starts, self.ends)
        return int(sum(a.nbytes for a in arrays)) + self._spill.file_bytes

    def lookup(self, pks: Iterable[int]) -> dict[int, np.ndarray]:
        """Sentence matrices of the given chunks that have stored vectors."""
        out = {}
        for pk in pks:
            index = int(np.searchsorted(self.chunk_pks, pk))
            if index < len(self.chunk_pks) and self.chunk_pks[index] == pk:
                out[int(pk)] = self.vectors[self.starts[index] : self.ends[index]]
        return out


_LOADED: weakref.WeakKeyDictionary[TenantSnapshot, SentenceMatrix] = weakref.WeakKeyDictionary()
_LOAD_LOCKS: weakref.WeakKeyDictionary[TenantSnapshot, threading.Lock] = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def load_matrix(conn: Any, snapshot: TenantSnapshot) -> SentenceMatrix:
    """Read the sentence vectors of the snapshot's chunks."""
    params = {
        **snapshot.key.params(),
        "units_version": UNITS_VERSION,
        "versions": list(snapshot.version_ids),
    }
    rows = conn.cursor(binary=True).execute(SNAPSHOT_SENTENCES, params).fetchall()
    held = set(snapshot.chunk_pk.tolist())
    rows = [row for row in rows if int(row[0]) in held]
    pks = np.array([int(row[0]) for row in rows], dtype=np.int64)
    dim = len(as_float32(rows[0][1])) if rows else 0
    vectors = np.empty((len(rows), dim), dtype=np.float32)
    for i, row in enumerate(rows):
        vectors[i] = as_float32(row[1])
    return SentenceMatrix(pks, vectors)


def ensure_loaded(conn: Any, snapshot: TenantSnapshot) -> SentenceMatrix:
    """The snapshot's sentence vectors, read on the first call. Once loaded, no lock is taken;
    a load holds only its own snapshot's lock, so one tenant's load never waits for another's."""
    found = _LOADED.get(snapshot)
    if found is not None:
        return found
    with _LOCK:
        load_lock = _LOAD_LOCKS.setdefault(snapshot, threading.Lock())
    with load_lock:
        found = _LOADED.get(snapshot)
        if found is None:
            found = load_matrix(conn, snapshot)
            with _LOCK:
                _LOADED[snapshot] = found
        return found


def loaded(snapshot: TenantSnapshot) -> SentenceMatrix:
    """The sentence vectors `ensure_loaded` read for this snapshot."""
    found = _LOADED.get(snapshot)
    if found is None:
        raise LookupError("the snapshot's sentence vectors are not loaded: call ensure_loaded")
    return found


def loaded_nbytes(snapshot: TenantSnapshot | None) -> int:
    """Bytes of the snapshot's loaded sentence vectors (0 when not loaded)."""
    found = _LOADED.get(snapshot) if snapshot is not None else None
    return found.nbytes if found is not None else 0
