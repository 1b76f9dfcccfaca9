"""Issue 11 session 7: the int8 query encoder (opt-in) and the vector leg's batched chunk ranking."""

from __future__ import annotations

import numpy as np
import pytest

from kb_retrieval.embedding_onnx import (
    OnnxQueryEncoder,
    export_onnx,
    onnx_path,
    onnx_query_encoder,
    quantize_onnx,
    quantized_choice,
    quantized_path,
)
from kb_retrieval.retrieval.snapshot_vectors import best_chunks_per_column

TEXTS = [
    "Can we bring our own bikes on the lakeside cycling week, or do you rent them?",
    "bike rental",
    "What happens to the deposit if the ferry strike cancels the first night in Split?",
    "ferry strike deposit refund first night",
]


def test_int8_encoder_stays_near_float32_and_is_deterministic(minilm, tmp_path):
    source = export_onnx(minilm.model_dir, onnx_path(minilm.model_dir))
    first = quantize_onnx(source, tmp_path / "a.onnx")
    second = quantize_onnx(source, tmp_path / "b.onnx")
    assert first.read_bytes() == second.read_bytes(), "a function of the weights alone"
    assert first.stat().st_size < 0.7 * source.stat().st_size, "MatMul weights in int8"
    assert quantize_onnx(source, first) == first, "an existing export is reused"
    exact = OnnxQueryEncoder(minilm.model_dir, threads=1).encode(TEXTS)
    quantized = OnnxQueryEncoder(minilm.model_dir, threads=1, quantized=True).encode(TEXTS)
    assert quantized_path(source).is_file()
    assert np.allclose(np.linalg.norm(quantized, axis=1), 1.0, atol=1e-6)
    cosines = (exact * quantized).sum(axis=1)
    assert cosines.min() > 0.97 and cosines.max() < 1 - 1e-6, cosines


def test_the_int8_choice_comes_from_the_environment(minilm, monkeypatch):
    monkeypatch.setenv("KB_QUERY_ENCODER_INT8", "0")
    assert quantized_choice() is False
    plain = onnx_query_encoder(minilm.model_dir, 1)
    monkeypatch.delenv("KB_QUERY_ENCODER_INT8")
    assert quantized_choice() is True, "int8 is the default (issue 11 session 8)"
    int8 = onnx_query_encoder(minilm.model_dir, 1)
    assert plain is not None and int8 is not None and int8 is not plain
    assert onnx_query_encoder(minilm.model_dir, 1) is int8
    monkeypatch.setenv("KB_QUERY_ENCODER_INT8", "maybe")
    with pytest.raises(ValueError, match="KB_QUERY_ENCODER_INT8"):
        quantized_choice()


def _per_column_reference(picked, finite, windows, exact, window_chunk, size):
    """The loop the vector leg ran before: one pair of sorts per column."""
    out = []
    for column in range(picked.shape[1]):
        chosen = picked[finite[:, column], column]
        scores = exact[np.searchsorted(windows, chosen), column]
        chunks = window_chunk[chosen]
        order = np.lexsort((-scores, chunks))
        first = np.ones(len(order), dtype=bool)
        first[1:] = chunks[order][1:] != chunks[order][:-1]
        rows, partial = chunks[order][first], scores[order][first]
        out.append(rows[np.argsort(-partial, kind="stable")[:size]])
    return out


@pytest.mark.parametrize("seed", range(12))
def test_batched_chunk_ranking_equals_the_per_column_loop(seed):
    rng = np.random.default_rng(seed)
    count = int(rng.integers(1, 400))
    window_chunk = np.sort(rng.integers(0, max(1, count // 3), count)).astype(np.int32)
    columns = int(rng.integers(1, 5))
    shortlist = int(rng.integers(1, count + 1))
    picked = np.stack([rng.permutation(count)[:shortlist] for _ in range(columns)], axis=1)
    finite = rng.random(picked.shape) > 0.2
    windows = np.flatnonzero(np.isin(np.arange(count), picked[finite]))
    # Few distinct values: ties between chunks and between one chunk's windows.
    exact = rng.integers(-4, 5, (len(windows), columns)).astype(np.float32) / 4
    size = int(rng.integers(1, 40))
    got = best_chunks_per_column(picked, finite, windows, exact, window_chunk, size)
    want = _per_column_reference(picked, finite, windows, exact, window_chunk, size)
    assert len(got) == len(want) == columns
    for a, b in zip(got, want, strict=True):
        assert a.tolist() == b.tolist()
