"""The first stage of the snapshot's vector leg above `PROJECT_ABOVE_WINDOWS` windows.

Windows are scored by their projection on the `SCAN_DIMS` principal directions of the
tenant's vectors (float32, a sixth of the full vectors' bytes); the best `SHORTLIST_WINDOWS`
per variant are re-scored exactly by the snapshot. float16 and bfloat16 copies of the full
vectors were measured slower than float32 with torch on these CPUs (docs/benchmarks.md).

Above `LISTS_ABOVE_WINDOWS` the projections are also grouped into coarse lists (k-means in the
projected space, fitted at load from a fixed initialisation: deterministic), stored list after
list, and each variant scores only the lists whose centroids it scores best, until they hold
`1 / PROBE_SHARE` of the windows and at least twice the shortlist (bench/query_path.py: a
sixth of the scan's bytes at 100k chunks, recall measured against the exact scan).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# Up to this many windows the vector leg is the exact float32 scan.
PROJECT_ABOVE_WINDOWS = 8192
SCAN_DIMS = 64
SHORTLIST_WINDOWS = 2048
# The projection is fitted on at most this many windows (every n-th, in window order).
FIT_WINDOWS = 8192
# Coarse lists: about WINDOWS_PER_LIST windows per list, fitted on SAMPLE_PER_LIST windows per
# list (every n-th), KMEANS_ITERATIONS rounds. At 272k windows a sample of 16k windows and 4
# rounds kept recall 0.995 for 1.2 s of CPU against 1.9 s for 32k and 8 rounds; 8k windows (15
# per list) dropped it to 0.89 (bench/query_path.py, docs/benchmarks.md).
LISTS_ABOVE_WINDOWS = 65536
WINDOWS_PER_LIST = 512
SAMPLE_PER_LIST = 32
KMEANS_ITERATIONS = 4
PROBE_SHARE = 16


@dataclass(frozen=True)
class CoarseLists:
    """k-means lists over the projected windows: `order[bounds[i]:bounds[i + 1]]` are the
    windows of list i, whose centroid is `centroids[i]` (projected space)."""

    centroids: np.ndarray
    order: np.ndarray
    bounds: np.ndarray

    def probe(self, projected: np.ndarray, shortlist: int) -> np.ndarray:
        """Positions (in list order, ascending) of the lists each query row probes: its best
        lists by centroid score until they hold 1 / PROBE_SHARE of the windows and at least
        twice `shortlist`."""
        total = len(self.order)
        wanted = min(total, max(total // PROBE_SHARE, 2 * shortlist))
        sizes = np.diff(self.bounds)
        scores = projected @ self.centroids.T
        chosen = set()
        for row in scores:
            ranked = np.argsort(-row, kind="stable")
            enough = int(np.searchsorted(np.cumsum(sizes[ranked]), wanted)) + 1
            chosen.update(ranked[:enough].tolist())
        lists = np.array(sorted(chosen), dtype=np.int64)
        starts, ends = self.bounds[lists], self.bounds[lists + 1]
        counts = ends - starts
        offsets = np.repeat(starts - np.cumsum(counts) + counts, counts)
        return offsets + np.arange(int(counts.sum()))


def coarse_lists(scan: np.ndarray) -> CoarseLists | None:
    """k-means lists of the projected windows (None below `LISTS_ABOVE_WINDOWS`): centroids
    initialised with evenly spaced sample windows, `KMEANS_ITERATIONS` rounds on a fixed
    sample (every n-th window, `SAMPLE_PER_LIST` per list), then every window assigned to its
    best centroid (ties: the first). In torch, on the query embedder's thread pool."""
    import torch

    count = len(scan) // WINDOWS_PER_LIST
    if len(scan) <= LISTS_ABOVE_WINDOWS or count < 2:
        return None
    data = torch.from_numpy(np.ascontiguousarray(scan, dtype=np.float32))
    sample = data[:: max(1, len(scan) // (SAMPLE_PER_LIST * count))]
    centroids = sample[:: max(1, len(sample) // count)][:count].clone()
    with torch.inference_mode():
        for _ in range(KMEANS_ITERATIONS):
            nearest = (sample @ centroids.T).argmax(dim=1)
            sums = torch.zeros_like(centroids).index_add_(0, nearest, sample)
            sizes = torch.bincount(nearest, minlength=len(centroids))
            filled = sizes > 0
            centroids[filled] = sums[filled] / sizes[filled, None].to(sums.dtype)
        assigned = torch.cat(
            [(block @ centroids.T).argmax(dim=1) for block in data.split(65536)]
        ).numpy()
    order = np.argsort(assigned, kind="stable")
    bounds = np.searchsorted(assigned[order], np.arange(len(centroids) + 1))
    return CoarseLists(centroids.numpy(), order, bounds)


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
