"""Sentence and word vectors for the learned judge, cached per text."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np


class Embeds(Protocol):
    """What the encoder needs of an embedder (kb_retrieval.embedding's embedders have it)."""

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


class TextEncoder:
    """Unit vectors per text; each distinct text is embedded once and then read from the cache."""

    def __init__(self, embedder: Embeds) -> None:
        self.embedder = embedder
        self._cache: dict[str, np.ndarray] = {}

    def prefetch(self, texts: Sequence[str]) -> None:
        """Embed the texts not yet cached, in one sorted batch (order does not depend on calls)."""
        missing = sorted({t for t in texts if t not in self._cache})
        if missing:
            for text, vector in zip(missing, self.embedder.embed(missing), strict=True):
                self._cache[text] = np.asarray(vector, dtype=np.float32)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """One row per text, in the given order."""
        self.prefetch(texts)
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        return np.stack([self._cache[t] for t in texts])


def minilm_encoder() -> TextEncoder:
    """The encoder over the bundled all-MiniLM-L6-v2 (never downloaded)."""
    from kb_retrieval.embedding import MiniLMEmbedder

    return TextEncoder(MiniLMEmbedder())
