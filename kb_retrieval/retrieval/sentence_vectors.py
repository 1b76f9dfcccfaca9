"""Best-matching sentence cosine of a chunk for each query variant.

Sentence vectors are computed at ingestion (`chunk_sentence_vectors`, migration 0008) and held
in the tenant snapshot; `SentenceVectorCache` embeds a chunk's sentences on first use for the
paths that have none stored (an index built before 0008, the PostgreSQL path).
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict

import numpy as np

from kb_retrieval.embedding import Embedder
from kb_retrieval.text.sentence_units import sentence_units


def text_key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def best_sentence_sims(sentences: np.ndarray, queries: np.ndarray) -> list[float]:
    """Per query variant, the highest cosine over the chunk's sentence vectors (0 for none)."""
    if sentences.size == 0:
        return [0.0] * len(queries)
    return [float(x) for x in (sentences @ np.asarray(queries, dtype=np.float32).T).max(axis=0)]


class SentenceVectorCache:
    """Sentence vectors by chunk text, embedded on first use; LRU-bounded by chunk count."""

    def __init__(self, embedder: Embedder, max_chunks: int = 50_000) -> None:
        self.embedder = embedder
        self.max_chunks = max_chunks
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

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
            self._vectors[key] = vectors
            while len(self._vectors) > self.max_chunks:
                self._vectors.popitem(last=False)
        return vectors
