"""The vector leg of a tenant snapshot: exact scan, or a projected first stage re-scored exactly.

`VectorLeg` is a mixin of `snapshot.TenantSnapshot` (which builds the arrays it reads): up to
`first_stage.PROJECT_ABOVE_WINDOWS` windows the leg is an exact float32 scan; above, the
windows' projections on the tenant's principal directions (grouped in coarse lists) pick the
windows that are re-scored exactly, so every returned cosine is exact (recall measured by
bench/vector_scan.py). Also the candidates' exact cosines and the leg's top-k (ties by chunk_pk).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any, Self

import numpy as np

from kb_retrieval.retrieval import first_stage

Hit = tuple[int, int, float]
SCOPE_CACHE_SIZE = 16


class VectorLeg:
    """The snapshot's vector leg; the attributes below are set by `TenantSnapshot`."""

    chunk_pk: np.ndarray
    window_chunk: np.ndarray
    window_index: np.ndarray
    window_first: np.ndarray
    window_rows: np.ndarray
    window_starts: np.ndarray
    row_window_start: np.ndarray
    row_window_end: np.ndarray
    vectors: np.ndarray
    _scopes_lock: Any
    _penalties: dict[tuple[int, bool], tuple[np.ndarray, np.ndarray]]
    _stats: dict[tuple[int, float, float], tuple[np.ndarray, Any]]

    @property
    def vector_count(self) -> int:
        return len(self.window_chunk)

    def with_first_stage(self, dims: int | None, *, lists: bool = True) -> Self:
        """A copy whose vector leg starts with a projection on `dims` principal directions
        (grouped in coarse lists above `LISTS_ABOVE_WINDOWS` unless `lists` is false), or with
        the exact float32 scan (None); everything else shared (bench/ compares them)."""
        other = copy.copy(self)
        other._penalties = {}
        other._stats = {}
        other._set_first_stage(self.vectors, dims if self.vector_count else None, lists=lists)
        return other

    def _set_first_stage(self, exact: np.ndarray, dims: int | None, *, lists: bool = True) -> None:
        """The projection basis, the projected windows (in coarse-list order when there are
        lists) and the lists; nothing for the exact scan (dims None)."""
        self.basis: np.ndarray | None = None
        self.scan = np.empty((len(exact), 0), dtype=np.float32)
        self.lists: first_stage.CoarseLists | None = None
        if dims is None:
            return
        self.basis = first_stage.principal_basis(exact, dims)
        self.scan = np.ascontiguousarray(exact @ self.basis)
        self.lists = first_stage.coarse_lists(self.scan) if lists else None
        if self.lists is not None:
            self.scan = np.ascontiguousarray(self.scan[self.lists.order])

    def _penalty(self, mask: np.ndarray, all_windows: bool) -> np.ndarray:
        """0 for the eligible windows, -inf for the others, in the projected windows' order;
        cached per scope mask (the same object while `scope` caches it): recomputing it per
        query was a pass over every window."""
        key = (id(mask), all_windows)
        with self._scopes_lock:
            found = self._penalties.get(key)
        if found is not None and found[0] is mask:
            return found[1]
        eligible = mask[self.window_chunk]
        if not all_windows:
            eligible &= self.window_first
        penalty = np.where(eligible, np.float32(0), np.float32(-np.inf)).astype(np.float32)
        if self.lists is not None:
            penalty = penalty[self.lists.order]
        with self._scopes_lock:
            if len(self._penalties) >= SCOPE_CACHE_SIZE:
                self._penalties.pop(next(iter(self._penalties)), None)
            self._penalties[key] = (mask, penalty)
        return penalty

    def vector_leg(
        self,
        mask: np.ndarray,
        vectors: np.ndarray,
        k: int,
        *,
        all_windows: bool = True,
        shortlist: int | None = None,
    ) -> list[Hit]:
        """(variant from 1, chunk_pk, best-window cosine) of the top k chunks per variant.

        Up to `first_stage.PROJECT_ABOVE_WINDOWS` windows: the exact float32 scan. Above: the
        windows' projections on the `SCAN_DIMS` principal directions of the tenant's vectors
        pick the best `shortlist` windows per variant, those are re-scored exactly, and the
        2k chunks they rank best get their exact best-window cosine (every window): the top k
        of those is returned, every cosine exact, recall measured (bench/vector_scan.py).
        """
        queries = normalized_rows(np.asarray(vectors, dtype=np.float32).reshape(len(vectors), -1))
        if not self.vector_count or not len(queries):
            return []
        if self.basis is not None:
            return self._projected_leg(mask, queries, k, all_windows, shortlist)
        sims = similarities(self.vectors, queries)
        best = np.full((len(self.chunk_pk), len(queries)), -np.inf, dtype=np.float32)
        if all_windows:
            best[self.window_rows] = np.maximum.reduceat(sims, self.window_starts, axis=0)
        else:
            best[self.window_chunk[self.window_first]] = sims[self.window_first]
        best[~mask] = -np.inf
        hits: list[Hit] = []
        for column in range(len(queries)):
            hits.extend(self._top(column + 1, best[:, column], k))
        return hits

    def _projected_leg(
        self,
        mask: np.ndarray,
        queries: np.ndarray,
        k: int,
        all_windows: bool,
        shortlist: int | None,
    ) -> list[Hit]:
        size = first_stage.SHORTLIST_WINDOWS if shortlist is None else shortlist
        projected = np.ascontiguousarray(queries @ self.basis)
        penalty = self._penalty(mask, all_windows)
        if self.lists is None:
            approx = similarities(self.scan, projected)
            approx += penalty[:, None]
            picked = first_stage.best_windows(approx, size)
            finite = np.isfinite(np.take_along_axis(approx, picked, axis=0))
        else:
            positions = self.lists.probe(projected, size)
            approx = similarities(np.take(self.scan, positions, axis=0), projected)
            approx += penalty[positions][:, None]
            local = first_stage.best_windows(approx, size)
            finite = np.isfinite(np.take_along_axis(approx, local, axis=0))
            picked = self.lists.order[positions[local]]
        marked = np.zeros(self.vector_count, dtype=bool)
        marked[picked[finite]] = True
        windows = np.flatnonzero(marked)
        exact = similarities(np.take(self.vectors, windows, axis=0), queries)
        per_column = best_chunks_per_column(
            picked, finite, windows, exact, self.window_chunk, 2 * k
        )
        rows = np.unique(np.concatenate(per_column)).astype(np.int64)
        full = self._exact_best(rows, queries, all_windows=all_windows)
        hits: list[Hit] = []
        for column, candidates in enumerate(per_column):
            scores = full[np.searchsorted(rows, candidates), column]
            order = np.lexsort((self.chunk_pk[candidates], -scores))[:k]
            hits.extend(
                (column + 1, int(self.chunk_pk[candidates[i]]), float(scores[i])) for i in order
            )
        return hits

    def _exact_best(
        self, rows: np.ndarray, queries: np.ndarray, *, all_windows: bool
    ) -> np.ndarray:
        """Best exact window cosine of each chunk row (rows x queries, float32 products of the
        stored vectors, as the SQL exact scan ranks them)."""
        if not len(rows):
            return np.empty((0, len(queries)), dtype=np.float32)
        starts = self.row_window_start[rows]
        ends = self.row_window_end[rows] if all_windows else starts + 1
        counts = ends - starts
        windows = np.repeat(starts - np.cumsum(counts) + counts, counts) + np.arange(counts.sum())
        sims = similarities(self.vectors[windows], queries)
        return np.maximum.reduceat(sims, np.cumsum(counts) - counts, axis=0)

    def candidate_sims(
        self, pks: Sequence[int], vectors: np.ndarray, *, all_windows: bool = True
    ) -> dict[int, list[float]]:
        """Best-window cosine of each given chunk for each variant (float64 dot products of the
        stored float32 vectors; within 1e-6 of pgvector's `<=>`)."""
        queries = normalized_rows(np.asarray(vectors, dtype=np.float64).reshape(len(vectors), -1))
        out: dict[int, list[float]] = {}
        for pk in pks:
            index = int(np.searchsorted(self.chunk_pk, pk))
            if index >= len(self.chunk_pk) or self.chunk_pk[index] != pk:
                continue
            start, end = self.row_window_start[index], self.row_window_end[index]
            windows = self.vectors[start:end].astype(np.float64)
            if not all_windows:
                windows = windows[self.window_first[start:end]]
            if len(windows):
                out[int(pk)] = [float(s) for s in (windows @ queries.T).max(axis=0)]
        return out

    def _top(self, variant: int, scores: np.ndarray, k: int) -> list[Hit]:
        """The k best finite scores, ties broken by chunk_pk like the SQL `ORDER BY`: every
        score at least the k-th best (torch's top-k, a partial sort) is ordered exactly."""
        import torch

        if k <= 0:
            return []
        if len(scores) > k:
            cut = torch.topk(torch.from_numpy(scores), k, sorted=False).values.min().item()
            found = np.flatnonzero(scores >= cut)
        else:
            found = np.arange(len(scores))
        found = found[np.isfinite(scores[found])]
        order = np.lexsort((self.chunk_pk[found], -scores[found]))[:k]
        return [(variant, int(self.chunk_pk[found[i]]), float(scores[found[i]])) for i in order]


def best_chunks_per_column(
    picked: np.ndarray,
    finite: np.ndarray,
    windows: np.ndarray,
    exact: np.ndarray,
    window_chunk: np.ndarray,
    size: int,
) -> list[np.ndarray]:
    """Per column of `picked` (shortlisted windows x queries; only the `finite` ones count;
    `exact[i]` the cosines of window `windows[i]`): the chunk rows of the `size` best chunks by
    their best shortlisted window, best first, ties by chunk row. All columns at once, with
    one-key sorts (two `lexsort`s per column cost ~0.5 ms per variant at 100k chunks)."""
    columns = np.broadcast_to(np.arange(picked.shape[1], dtype=np.int64), picked.shape)[finite]
    chosen = picked[finite]
    values = exact[np.searchsorted(windows, chosen), columns]
    keys = (columns << 32) | window_chunk[chosen].astype(np.int64)
    order = np.argsort(keys, kind="stable")
    keys, values = keys[order], values[order]
    starts = np.flatnonzero(np.concatenate(([True], keys[1:] != keys[:-1])))
    best = np.maximum.reduceat(values, starts) if len(starts) else values
    keys = keys[starts]
    columns, chunks = keys >> 32, keys & 0xFFFFFFFF
    # Column first, then the cosine descending (exact in float64: |cosine| <= 1 and a float32
    # mantissa), then chunk row (the stable sort keeps the (column, chunk) order of ties).
    order = np.argsort(columns * 4.0 - best.astype(np.float64), kind="stable")
    columns, chunks = columns[order], chunks[order]
    bounds = np.searchsorted(columns, np.arange(picked.shape[1] + 1))
    return [
        chunks[bounds[c] : min(bounds[c + 1], bounds[c] + size)] for c in range(len(bounds) - 1)
    ]


def similarities(vectors: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """vectors @ queries.T through torch, on the thread pool the query embedder uses.

    numpy's OpenBLAS threads spin after a matmul and then compete with torch's OpenMP threads:
    measured here, the next query embedding took 63 ms instead of 26 ms p50 after a numpy
    matmul of 27k windows (12 ms), and 24 ms after the same product in torch (2.8 ms).
    """
    import torch

    # (windows x dim) @ (queries x dim).T as a transposed view: 2.8 ms for 27k windows here,
    # against 8 ms with a contiguous (dim x queries) right-hand side (another kernel).
    with torch.inference_mode():
        right = torch.from_numpy(np.ascontiguousarray(queries, dtype=vectors.dtype))
        product = torch.from_numpy(vectors) @ right.T
    return product.numpy()


def as_float32(value: Any) -> np.ndarray:
    """A pgvector `Vector` (or anything array-like) as float32."""
    to_numpy = getattr(value, "to_numpy", None)
    return np.asarray(to_numpy() if to_numpy else value, dtype=np.float32)


def normalized_rows(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True) if matrix.size else matrix
    return matrix / np.where(norms == 0, 1, norms) if matrix.size else matrix
