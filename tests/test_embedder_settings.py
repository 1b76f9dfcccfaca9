"""Process-level settings of the real embedder."""

from __future__ import annotations

import pytest

from kb_retrieval.embedding import TORCH_THREADS_ENV, _load_sentence_transformer


def test_torch_threads_setting_is_validated(monkeypatch) -> None:
    monkeypatch.setenv(TORCH_THREADS_ENV, "two")
    with pytest.raises(ValueError, match=TORCH_THREADS_ENV):
        _load_sentence_transformer.__wrapped__("/nonexistent-model-dir")
