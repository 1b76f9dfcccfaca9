"""The first stage of the snapshot's vector leg above `PROJECT_ABOVE_WINDOWS` windows.

Every window is scored by its projection on the `SCAN_DIMS` principal directions of the
tenant's vectors (float32, a sixth of the full vectors' bytes); the best `SHORTLIST_WINDOWS`
per variant are re-scored exactly by the snapshot. float16 and bfloat16 copies of the full
vectors were measured slower than float32 with torch on these CPUs (docs/benchmarks.md).
"""

from __future__ import annotations

import numpy as np

# Up to this many windows the vector leg is the exact float32 scan.
PROJECT_ABOVE_WINDOWS = 8192
SCAN_DIMS = 64
SHORTLIST_WINDOWS = 2048
# The projection is fitted on at most this many windows (every n-th, in window order).
FIT_WINDOWS = 8192


def best_windows(scores: np.ndarray, size: int) -> np.ndarray:
    """Row indices of the `size` best scores of each column (size x columns; all rows when
    fewer; -inf rows may be among them)."""
    import torch

    if len(scores) <= size:
        return np.repeat(np.arange(len(scores))[:, None], scores.shape[1], axis=1)
    return torch.topk(torch.from_numpy(scores), size, dim=0, sorted=False).indices.numpy()


def principal_basis(vectors: np.ndarray, dims: int) -> np.ndarray:
    """(dim x dims) float32: the top eigenvectors of the (uncentred) second-moment matrix of a
    deterministic sample of `vectors`, each signed so its largest component is positive.

    In torch, on the query embedder's thread pool (numpy's OpenBLAS took 3.4 s for the
    same fit on a busy machine, torch a few tens of ms)."""
    import torch

    step = max(1, len(vectors) // FIT_WINDOWS)
    sample = torch.from_numpy(np.ascontiguousarray(vectors[::step], dtype=np.float32))
    with torch.inference_mode():
        values, vecs = torch.linalg.eigh(sample.T @ sample)
    values, vecs = values.numpy(), vecs.numpy()
    basis = vecs[:, np.argsort(-values, kind="stable")[:dims]]
    signs = np.sign(basis[np.abs(basis).argmax(axis=0), np.arange(basis.shape[1])])
    return np.ascontiguousarray(basis * np.where(signs == 0, 1, signs), dtype=np.float32)
