"""The real embedder: process-level settings and the query path."""

from __future__ import annotations

import numpy as np
import pytest

from kb_retrieval.embedding import TORCH_THREADS_ENV, sentence_transformer


def test_torch_threads_setting_is_validated(monkeypatch) -> None:
    monkeypatch.setenv(TORCH_THREADS_ENV, "two")
    with pytest.raises(ValueError, match=TORCH_THREADS_ENV):
        sentence_transformer("/nonexistent-model-dir")


def test_query_path_gives_the_vectors_of_embed(minilm, monkeypatch) -> None:
    monkeypatch.setenv("KB_QUERY_ENCODER", "torch")
    texts = [
        "refugios torres del paine heated night cold easily",
        "cancellation refund window terms policy",
        '"torres del paine"',
    ]
    fast = minilm.embed_query(texts)
    assert fast.shape == (3, minilm.dimensions) and fast.dtype == np.float32
    assert np.abs(fast - minilm.embed(texts)).max() < 1e-6
    assert np.allclose(np.linalg.norm(fast, axis=1), 1.0, atol=1e-5)
    assert minilm.embed_query([]).shape == (0, minilm.dimensions)
