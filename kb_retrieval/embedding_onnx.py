"""An ONNX Runtime export of the same MiniLM weights: the query encoder (default).

`MiniLMEmbedder.embed_query` runs the transformer through ONNX Runtime unless
`KB_QUERY_ENCODER=torch`: same tokenizer (truncation at the model's `max_seq_length`), same mean
pooling and normalisation, vectors within 1e-4 cosine of torch's (tests/test_embedding_onnx.py;
measured 6e-8 to 1.2e-7), about half of torch's time per query (docs/benchmarks.md, issue 11
session 5: the golden packs were identical but for one vector score's fourth decimal). When
onnxruntime is missing or the export fails, queries fall back to torch with a warning. Ingestion
keeps torch (`embed`), so stored vectors never depend on it.

The graph is exported once, offline, from the packaged `model.safetensors` with torch's ONNX
exporter (eager attention, dynamic batch and sequence axes) into `KB_ONNX_DIR` (default: a
`kb-onnx` folder in the system temporary directory), under a name keyed by the weights' size and
modification time and the torch version; written to a temporary name, then renamed, so
concurrent processes never read half a file.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
import threading
import warnings
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

ONNX_DIR_ENV = "KB_ONNX_DIR"
QUERY_ENCODER_ENV = "KB_QUERY_ENCODER"
# Default since issue 11 session 8 ("0" for float32): the export with int8 weights (dynamic
# quantization, per output channel, MatMul nodes only): about half the forward pass's CPU time,
# vectors 0.98-0.99 cosine of float32's; held-out quality within noise (docs/benchmarks.md).
QUANTIZED_ENV = "KB_QUERY_ENCODER_INT8"
INPUTS = ("input_ids", "attention_mask", "token_type_ids")
OPSET = 17
# A forward pass costs about as much as this many more tokens in the batch (measured with one
# intra-op thread: per-text passes cost 2-3 ms more each than one batch of equal tokens).
GROUP_OVERHEAD_TOKENS = 12
LOG = logging.getLogger(__name__)


def query_encoder_choice() -> str:
    """`onnx` (default) or `torch`, from `KB_QUERY_ENCODER`."""
    choice = os.environ.get(QUERY_ENCODER_ENV) or "onnx"
    if choice not in ("torch", "onnx"):
        raise ValueError(f"{QUERY_ENCODER_ENV} must be 'torch' or 'onnx', not {choice!r}")
    return choice


def quantized_choice() -> bool:
    """Whether `KB_QUERY_ENCODER_INT8` asks for the int8 export ("1"/"true"/unset; "0"/"false"
    for float32)."""
    value = (os.environ.get(QUANTIZED_ENV) or "1").strip().casefold()
    if value not in ("0", "1", "true", "false"):
        raise ValueError(f"{QUANTIZED_ENV} must be 1/true or 0/false, not {value!r}")
    return value in ("1", "true")


def onnx_path(model_dir: str) -> Path:
    """Where the export of this model's weights (and this torch version) lives."""
    import torch

    weights = Path(model_dir) / "model.safetensors"
    stat = weights.stat()
    folder = Path(os.environ.get(ONNX_DIR_ENV) or Path(tempfile.gettempdir()) / "kb-onnx")
    tag = f"{stat.st_size}-{int(stat.st_mtime)}-torch{torch.__version__}-opset{OPSET}"
    return folder / f"minilm-{tag}.onnx"


def export_onnx(model_dir: str, path: Path) -> Path:
    """Export the transformer (last hidden state) to `path`, unless it is there already."""
    if path.is_file():
        return path
    import torch
    from transformers import AutoModel

    model = AutoModel.from_pretrained(
        model_dir, attn_implementation="eager", local_files_only=True
    ).eval()

    class LastHiddenState(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(
            self,
            input_ids: torch.Tensor,
            attention_mask: torch.Tensor,
            token_type_ids: torch.Tensor,
        ) -> torch.Tensor:
            return self.model(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state

    example = torch.ones((2, 8), dtype=torch.long)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.part")
    axes = {name: {0: "batch", 1: "sequence"} for name in (*INPUTS, "last_hidden_state")}
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the TorchScript exporter's notes on traced operators
        torch.onnx.export(
            LastHiddenState(),
            (example, example, torch.zeros_like(example)),
            str(partial),
            input_names=list(INPUTS),
            output_names=["last_hidden_state"],
            dynamic_axes=axes,
            opset_version=OPSET,
            dynamo=False,
        )
    os.replace(partial, path)
    return path


def quantized_path(path: Path) -> Path:
    """Where the int8 export of the float32 export at `path` lives."""
    return path.with_name(f"{path.stem}-int8pc.onnx")


def quantize_onnx(source: Path, path: Path) -> Path:
    """Write `source` with int8 weights to `path` (unless it is there): ONNX Runtime's dynamic
    quantization, symmetric int8 weights per output channel, MatMul nodes only (quantizing
    every node, or per tensor, gave 0.94 cosine of float32 on the golden e-mails' variants;
    this gives 0.98-0.99). Deterministic: a function of the weights alone."""
    if path.is_file():
        return path
    from onnxruntime.quantization import QuantType, quantize_dynamic

    partial = path.with_name(f"{path.stem}.{os.getpid()}.{threading.get_ident()}.part.onnx")
    quantize_dynamic(
        str(source),
        str(partial),
        weight_type=QuantType.QInt8,
        per_channel=True,
        op_types_to_quantize=["MatMul"],
    )
    os.replace(partial, path)
    return path


class OnnxQueryEncoder:
    """Tokenize, run the exported transformer, mean-pool over the mask, normalise."""

    def __init__(
        self, model_dir: str, threads: int | None = None, *, quantized: bool = False
    ) -> None:
        import onnxruntime
        from tokenizers import Tokenizer

        threads = threads or os.cpu_count() or 1
        options = onnxruntime.SessionOptions()
        # int8: one text per pass, each pass on one thread, up to `threads` passes at once (a
        # short text's pass spent about twice the CPU on two intra-op threads; vectors
        # bit-identical, docs/benchmarks.md issue 11 session 9).
        options.intra_op_num_threads = 1 if quantized else threads
        options.inter_op_num_threads = 1
        self._passes = ThreadPoolExecutor(threads) if quantized and threads > 1 else None
        path = export_onnx(model_dir, onnx_path(model_dir))
        self.quantized = quantized
        if quantized:
            path = quantize_onnx(path, quantized_path(path))
        self.session = onnxruntime.InferenceSession(
            str(path), options, providers=["CPUExecutionProvider"]
        )
        config = json.loads((Path(model_dir) / "sentence_bert_config.json").read_text("utf-8"))
        self.tokenizer = Tokenizer.from_file(str(Path(model_dir) / "tokenizer.json"))
        self.tokenizer.enable_truncation(max_length=int(config["max_seq_length"]))
        self.tokenizer.no_padding()

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors of `texts`: tokenized one by one (no thread pool for a few short
        texts), run in the length groups of `length_groups` (each group padded to its longest
        text), mean-pooled over each text's own tokens.

        The int8 export runs each text alone: its activations are quantized with one scale per
        tensor, so in a batch a text's vector would depend on the other texts and the padding
        (cosine down to 0.978 between a variant alone and in its e-mail's batch); its passes
        run on the encoder's own threads, one text each."""
        encodings = [self.tokenizer.encode(text) for text in texts]
        if self._passes is not None and len(encodings) > 1:
            return np.concatenate(list(self._passes.map(lambda e: self._run([e]), encodings)))
        out = np.empty((len(encodings), 0), dtype=np.float32)
        lengths = [len(e.ids) for e in encodings]
        groups = [[i] for i in range(len(lengths))] if self.quantized else length_groups(lengths)
        for group in groups:
            pooled = self._run([encodings[i] for i in group])
            if not out.shape[1]:
                out = np.empty((len(encodings), pooled.shape[1]), dtype=np.float32)
            out[group] = pooled
        return out

    def _run(self, encodings: Sequence[Any]) -> np.ndarray:
        """One forward pass over `encodings` padded to the longest with id, mask and type 0 (the
        tokenizer's `enable_padding` defaults)."""
        width = max(len(e.ids) for e in encodings)
        ids = np.zeros((len(encodings), width), dtype=np.int64)
        attention = np.zeros((len(encodings), width), dtype=np.int64)
        types = np.zeros((len(encodings), width), dtype=np.int64)
        for row, encoding in enumerate(encodings):
            size = len(encoding.ids)
            ids[row, :size] = encoding.ids
            attention[row, :size] = encoding.attention_mask
            types[row, :size] = encoding.type_ids
        feeds = {"input_ids": ids, "attention_mask": attention, "token_type_ids": types}
        hidden = self.session.run(None, feeds)[0]
        mask = attention[..., None].astype(np.float32)
        pooled = (hidden * mask).sum(axis=1) / np.clip(mask.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.where(norms == 0, 1, norms)).astype(np.float32)


def length_groups(lengths: Sequence[int], overhead: int = GROUP_OVERHEAD_TOKENS) -> list[list[int]]:
    """Indices of `lengths` in forward-pass groups: the partition (contiguous in length order)
    with the least padded tokens plus `overhead` tokens per pass. The cost of a pass grows with
    rows x longest text; a retrieval's variants are 3-45 tokens, and one batch padded a
    4-token keyword line to a 43-token e-mail (bench/query_path.py). Each row's vector is the
    one the single padded batch gives (tested)."""
    order = sorted(range(len(lengths)), key=lambda i: (lengths[i], i))
    best = [0] + [-1] * len(order)
    cut = [0] * (len(order) + 1)
    for end in range(1, len(order) + 1):
        for start in range(end):
            cost = best[start] + overhead + (end - start) * lengths[order[end - 1]]
            if best[end] < 0 or cost < best[end]:
                best[end], cut[end] = cost, start
    groups, end = [], len(order)
    while end:
        groups.append(sorted(order[cut[end] : end]))
        end = cut[end]
    return groups[::-1]


def onnx_query_encoder(model_dir: str, threads: int | None = None) -> OnnxQueryEncoder | None:
    """One encoder per process and `KB_QUERY_ENCODER_INT8` choice (the session is thread-safe
    for `run`); None, with a warning, when onnxruntime (or the exporter's `onnx`) is missing or
    the export fails: the caller then embeds with torch."""
    return _onnx_query_encoder(model_dir, threads, quantized_choice())


@lru_cache(maxsize=4)
def _onnx_query_encoder(
    model_dir: str, threads: int | None, quantized: bool
) -> OnnxQueryEncoder | None:
    try:
        return OnnxQueryEncoder(model_dir, threads, quantized=quantized)
    except (ImportError, OSError, RuntimeError) as error:
        LOG.warning("ONNX query encoder unavailable (%s); query embedding uses torch", error)
        return None


onnx_query_encoder.cache_clear = _onnx_query_encoder.cache_clear  # type: ignore[attr-defined]
