"""Best-matching sentence cosine of a chunk for each query variant.

Sentence vectors are computed at ingestion (`chunk_sentence_vectors`, migration 0008). Both
candidate paths read the stored vectors of their ~40 candidates: the PostgreSQL path with
`fetch_sentence_vectors`, the snapshot path from the snapshot (`snapshot_sentences.py`); the
cosines are computed by `best_sentence_sims` on the same float32 rows, so both paths give the
same values. Fallback rule: a candidate whose chunk has no stored sentence vectors (an index
built before migration 0008 and not yet re-ingested: `kb ingest` of the folder backfills it)
has its sentences embedded on first use by `SentenceVectorCache`.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import numpy as np

from kb_retrieval.embedding import Embedder
from kb_retrieval.text.sentence_units import UNITS_VERSION, sentence_units

# The stored sentence vectors of the given chunks, in sentence order.
CANDIDATE_SENTENCES = """
SELECT s.chunk_pk, s.embedding FROM chunk_sentence_vectors s
WHERE s.tenant_id = %(tenant_id)s AND s.chunk_pk = ANY(%(ids)s)
  AND s.embedding_model_id = %(embedding_model_id)s AND s.chunker_version = %(chunker_version)s
  AND s.units_version = %(units_version)s
ORDER BY s.chunk_pk, s.sentence_index
"""


def text_key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def best_sentence_sims(sentences: np.ndarray, queries: np.ndarray) -> list[float]:
    """Per query variant, the highest cosine over the chunk's sentence vectors (0 for none);
    float64 products of the stored float32 vectors."""
    if sentences.size == 0:
        return [0.0] * len(queries)
    left = np.asarray(sentences, dtype=np.float64)
    right = np.asarray(queries, dtype=np.float64)
    return [float(x) for x in (left @ right.T).max(axis=0)]


def as_float32(value: Any) -> np.ndarray:
    """A pgvector `Vector` (or anything array-like) as float32."""
    to_numpy = getattr(value, "to_numpy", None)
    return np.asarray(to_numpy() if to_numpy else value, dtype=np.float32)


def group_rows(rows: Sequence[tuple[int, Any]]) -> dict[int, np.ndarray]:
    """(chunk_pk, vector) rows ordered by chunk and sentence -> one matrix per chunk."""
    grouped: dict[int, list[np.ndarray]] = {}
    for pk, vector in rows:
        grouped.setdefault(int(pk), []).append(as_float32(vector))
    return {pk: np.vstack(vectors) for pk, vectors in grouped.items()}


def fetch_sentence_vectors(
    conn: Any, params: dict[str, Any], pks: Sequence[int]
) -> dict[int, np.ndarray]:
    """Stored sentence vectors of the candidates (PostgreSQL path), by chunk_pk."""
    if not pks:
        return {}
    query = {**params, "ids": sorted(pks), "units_version": UNITS_VERSION}
    cursor = conn.cursor(binary=True)
    return group_rows(cursor.execute(CANDIDATE_SENTENCES, query).fetchall())


# Per chunk, its stored sentence nearest any of the query vectors (cosine = inner product of unit
# vectors, computed by pgvector), lowest sentence index on a tie; one row per chunk.
NEAREST_STORED_SENTENCES = """
SELECT DISTINCT ON (s.chunk_pk) s.chunk_pk, s.sentence_index, -(s.embedding <#> q.v) AS cosine
FROM chunk_sentence_vectors s
CROSS JOIN unnest(%(queries)s::text[]::vector[]) AS q(v)
WHERE s.tenant_id = %(tenant_id)s AND s.chunk_pk = ANY(%(ids)s)
  AND s.embedding_model_id = %(embedding_model_id)s AND s.chunker_version = %(chunker_version)s
  AND s.units_version = %(units_version)s
ORDER BY s.chunk_pk, cosine DESC, s.sentence_index
"""


def vector_literal(vector: np.ndarray) -> str:
    """A float32 vector as pgvector's text form, every value printed exactly."""
    return "[" + ",".join(repr(float(x)) for x in np.asarray(vector, dtype=np.float32)) + "]"


def nearest_stored_sentences(
    conn: Any, params: dict[str, Any], pks: Sequence[int], queries: np.ndarray
) -> dict[int, tuple[int, float]]:
    """For each chunk with stored sentence vectors: (sentence index, cosine) of its sentence
    nearest any of the `queries`. Only one row per chunk leaves the database."""
    if not pks or len(queries) == 0:
        return {}
    query = {
        **params,
        "ids": sorted(pks),
        "units_version": UNITS_VERSION,
        "queries": [vector_literal(q) for q in queries],
    }
    rows = conn.execute(NEAREST_STORED_SENTENCES, query).fetchall()
    return {int(pk): (int(index), float(cosine)) for pk, index, cosine in rows}


class SentenceVectorCache:
    """Fallback for chunks without stored sentence vectors: embedded on first use, LRU-bounded."""

    def __init__(self, embedder: Embedder, max_chunks: int = 50_000) -> None:
        self.embedder = embedder
        self.max_chunks = max_chunks
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()
        self.embedded_chunks = 0

    def vectors(self, text: str) -> np.ndarray:
        key = text_key(text)
        with self._lock:
            found = self._vectors.get(key)
            if found is not None:
                self._vectors.move_to_end(key)
                return found
        units = sentence_units(text)
        vectors = self.embedder.embed(units) if units else np.zeros((0, 1), dtype=np.float32)
        with self._lock:
            self.embedded_chunks += 1
            self._vectors[key] = vectors
            while len(self._vectors) > self.max_chunks:
                self._vectors.popitem(last=False)
        return vectors
