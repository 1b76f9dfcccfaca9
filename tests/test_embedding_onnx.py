"""The ONNX Runtime query encoder gives torch's query vectors (the same weights, exported)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pytest

from kb_retrieval.embedding_onnx import (
    OnnxQueryEncoder,
    export_onnx,
    length_groups,
    onnx_path,
    onnx_query_encoder,
    query_encoder_choice,
)

TEXTS = [
    "Is the glacier crossing on day three roped, and who carries the crampons?",
    "deposit refund",
    "Our daughter is vegetarian and allergic to sesame; can the camp cook adapt the menu? " * 30,
]


def test_onnx_query_vectors_are_torchs_within_1e_4_cosine(minilm, tmp_path, monkeypatch):
    monkeypatch.setenv("KB_ONNX_DIR", str(tmp_path))
    monkeypatch.setenv("KB_QUERY_ENCODER_INT8", "0")  # the float32 export (int8: test_query_speed)
    path = export_onnx(minilm.model_dir, onnx_path(minilm.model_dir))
    assert path.parent == tmp_path and path.stat().st_size > 10_000_000
    onnx = OnnxQueryEncoder(minilm.model_dir, threads=1).encode(TEXTS)
    monkeypatch.setenv("KB_QUERY_ENCODER", "torch")
    torch_vectors = minilm.embed_query(TEXTS)
    assert onnx.shape == torch_vectors.shape == (3, 384)
    assert np.allclose(np.linalg.norm(onnx, axis=1), 1.0, atol=1e-6)
    cosines = (onnx * torch_vectors).sum(axis=1)
    assert cosines.min() > 1 - 1e-4, "the long text is truncated as torch truncates it"
    alone = OnnxQueryEncoder(minilm.model_dir, threads=1).encode(TEXTS[1:2])
    assert float((alone[0] * onnx[1]).sum()) > 1 - 1e-5, "padding does not change a vector"
    monkeypatch.setenv("KB_QUERY_ENCODER", "onnx")
    assert query_encoder_choice() == "onnx"
    via_embedder = minilm.embed_query(TEXTS[:2])
    assert float((via_embedder * torch_vectors[:2]).sum(axis=1).min()) > 1 - 1e-4


def test_onnx_is_the_default_and_torch_the_fallback(minilm, monkeypatch):
    monkeypatch.delenv("KB_QUERY_ENCODER", raising=False)
    assert query_encoder_choice() == "onnx"
    monkeypatch.setenv("KB_QUERY_ENCODER", "torch")
    torch_vectors = minilm.embed_query(TEXTS[:2])
    monkeypatch.setenv("KB_QUERY_ENCODER", "onnx")
    broken = tmp_dir_blocked(monkeypatch)
    onnx_query_encoder.cache_clear()
    try:
        fallback = minilm.embed_query(TEXTS[:2])
    finally:
        onnx_query_encoder.cache_clear()
    assert broken.is_file(), "the export had nowhere to go"
    assert np.array_equal(fallback, torch_vectors)


def tmp_dir_blocked(monkeypatch) -> Path:
    """Point KB_ONNX_DIR below a regular file: the export cannot be written (OSError)."""
    blocker = Path(tempfile.mkdtemp()) / "not-a-folder"
    blocker.write_text("x")
    monkeypatch.setenv("KB_ONNX_DIR", str(blocker / "kb-onnx"))
    return blocker


def test_an_unknown_query_encoder_is_refused(monkeypatch):
    monkeypatch.setenv("KB_QUERY_ENCODER", "tensorrt")
    with pytest.raises(ValueError, match="KB_QUERY_ENCODER"):
        query_encoder_choice()


def test_length_groups_split_only_where_padding_costs_more_than_a_pass():
    assert length_groups([9, 10, 11]) == [[0, 1, 2]]
    assert length_groups([40, 6, 7, 25]) == [[1, 2], [3], [0]]
    assert length_groups([5]) == [[0]]
    assert length_groups([30, 4], overhead=0) == [[1], [0]]
    assert length_groups([30, 4], overhead=100) == [[0, 1]]
    groups = length_groups([3, 44, 12, 12, 5, 27])
    assert sorted(i for g in groups for i in g) == list(range(6))


def test_grouped_passes_give_the_single_padded_batchs_vectors(minilm, tmp_path, monkeypatch):
    monkeypatch.setenv("KB_ONNX_DIR", str(tmp_path))
    encoder = OnnxQueryEncoder(minilm.model_dir, threads=1)
    texts = [
        "Can we bring our own snowshoes on the winter lake circuit, or are rentals included "
        "in the price, and is there a storage room at the first hut for wet gear overnight?",
        "snowshoe rental",
        "winter lake circuit gear storage hut",
        "rentals",
    ]
    lengths = [len(encoder.tokenizer.encode(t).ids) for t in texts]
    assert len(length_groups(lengths)) > 1, "the long e-mail runs apart from the keyword lines"
    grouped = encoder.encode(texts)
    batch = encoder._run([encoder.tokenizer.encode(t) for t in texts])
    assert grouped.shape == (4, 384)
    assert np.abs(grouped - batch).max() <= 1e-6
    assert np.abs(encoder.encode(texts[1:2])[0] - grouped[1]).max() <= 1e-6
