"""BM25 top k per variant over a snapshot's postings with MaxScore pruning, equal to the
exhaustive scorer (measured by bench/query_path.py beside the snapshot's own leg; not on the
`retrieve` path: on the 100k-chunk tenant of near-copies it costs more CPU than the exhaustive
leg, docs/benchmarks.md "Issue 11, session 9").

The exhaustive scorer (`exhaustive_top`, the reference) weighs every eligible posting of every
query term and sums them per chunk. `pruned_top` is MaxScore over terms:

- each term has an upper bound of its weight (`TermBound.upper`: its idf times the BM25
  saturation at the largest tf and the shortest chunk among its postings);
- the highest-bound term's eligible postings are weighed; the exact scores of the `SEEDS` of
  them it weighs most give a lower bound ("floor") of the k-th best score; further terms, by
  bound, are weighed in full only while the bounds of the terms not yet taken add up to the
  floor ("essential" terms): a chunk outside them cannot reach the top k;
- the candidates alone are then looked up in the remaining terms' postings (binary search, or
  a dense array when they are many), and after each term every candidate whose partial score
  plus the remaining bounds is below the floor is dropped;
- the survivors' scores are summed again from zero in sorted-term order with the same float64
  operations as the exhaustive scorer, and ordered by score, then chunk_pk.

Comparisons keep a relative margin of `MARGIN` on both sides, which covers the rounding of
sums taken in another order. Same hits, same scores, same ties
(tests/test_query_speed_bm25.py, hypothesis against `exhaustive_top` and the snapshot's leg).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from kb_retrieval.retrieval.postings import Postings

# Relative slack of every pruning comparison: far above the rounding of a float64 sum of a few
# hundred positive terms taken in another order (~1e-14), far below any score gap that matters.
MARGIN = 1e-9

RowScores = list[tuple[int, float]]
# Rows whose exact scores give the first lower bound of the k-th best score.
SEEDS = 64
# A lookup of n rows in a term's p postings goes through a dense array when n * this > p.
DENSE_LOOKUP = 8


@dataclass(frozen=True)
class TermBound:
    """A term over one scope: eligible postings (df), idf and an upper bound of its weight."""

    df: int
    idf: float
    upper: float


@dataclass(frozen=True)
class Bm25Scope:
    """What scoring reads of one scope: eligibility, per-chunk length norm (k1 already in it),
    the scope's size and mean length, k1 and b."""

    mask: np.ndarray
    norm: np.ndarray
    n: int
    avgdl: float
    k1: float
    b: float


def term_limits(postings: Postings, term_count: np.ndarray, term: str) -> tuple[float, float]:
    """The largest tf and the fewest terms of a chunk among the term's postings (any scope)."""
    rows, tfs = postings[term]
    return float(tfs.max()), float(term_count[rows].min())


def term_bound(
    postings: Postings, scope: Bm25Scope, term: str, limits: tuple[float, float]
) -> TermBound:
    """df over the scope, the idf of `LEXICAL_BM25` and the weight bound (saturation grows with
    tf and falls with length: the largest tf over the shortest chunk bounds every posting)."""
    rows, _tfs = postings[term]
    df = int(np.count_nonzero(scope.mask[rows]))
    idf = math.log(1 + (scope.n - df + 0.5) / (df + 0.5))
    max_tf, min_length = limits
    k1, b = scope.k1, scope.b
    upper = idf * max_tf * (k1 + 1) / (max_tf + k1 * (1 - b + b * min_length / scope.avgdl))
    return TermBound(df, idf, upper * (1 + MARGIN))


def scope_bounds(
    postings: Postings,
    term_count: np.ndarray,
    scope: Bm25Scope,
    terms: Sequence[str],
    limits: dict[str, tuple[float, float]] | None = None,
) -> dict[str, TermBound]:
    """`term_bound` of each of the terms found in the postings; `limits` keeps each term's
    `term_limits` between calls (they depend on the postings alone)."""
    limits = {} if limits is None else limits
    out = {}
    for term in sorted(set(terms)):
        if term in postings:
            if term not in limits:
                limits[term] = term_limits(postings, term_count, term)
            out[term] = term_bound(postings, scope, term, limits[term])
    return out


def weights(idf: float, tfs: np.ndarray, norm: np.ndarray, k1: float) -> np.ndarray:
    """BM25 weights of postings (float64 tfs, their chunks' norms): the exhaustive arithmetic."""
    return idf * tfs * (k1 + 1) / (tfs + norm)


def _weights_at(
    postings: Postings, scope: Bm25Scope, bound: TermBound, term: str, rows: np.ndarray
) -> np.ndarray:
    """The term's weight in each of the ascending eligible `rows` (0.0 where it is absent).
    Many rows against the term's postings: through a dense tf array (linear); few: binary
    search."""
    term_rows, tfs = postings[term]
    if len(rows) * DENSE_LOOKUP > len(term_rows):
        dense = np.zeros(len(scope.mask), dtype=tfs.dtype)
        dense[term_rows] = tfs
        found = dense[rows]
        hit = found > 0
        found = found[hit]
    else:
        at = np.searchsorted(term_rows, rows)
        at[at == len(term_rows)] = 0
        hit = term_rows[at] == rows
        found = tfs[at[hit]]
    out = np.zeros(len(rows), dtype=np.float64)
    out[hit] = weights(bound.idf, found.astype(np.float64), scope.norm[rows[hit]], scope.k1)
    return out


def _eligible_weights(
    postings: Postings, scope: Bm25Scope, bound: TermBound, term: str
) -> tuple[np.ndarray, np.ndarray]:
    """The term's eligible rows (ascending) and their weights."""
    rows, tfs = postings[term]
    keep = scope.mask[rows]
    rows = rows[keep]
    return rows, weights(bound.idf, tfs[keep].astype(np.float64), scope.norm[rows], scope.k1)


def _kth_best(values: np.ndarray, k: int) -> float:
    """The k-th largest value (-inf when there are fewer)."""
    if len(values) < k:
        return -math.inf
    return float(np.partition(values, len(values) - k)[len(values) - k])


def _scores(
    postings: Postings,
    scope: Bm25Scope,
    bounds: Mapping[str, TermBound],
    used: Sequence[str],
    rows: np.ndarray,
) -> np.ndarray:
    """BM25 of the ascending `rows`: each term's weight added in `used` order (sorted: the
    exhaustive scorer's additions; adding 0.0 where a term is absent changes no value)."""
    out = np.zeros(len(rows), dtype=np.float64)
    for term in used:
        out += _weights_at(postings, scope, bounds[term], term, rows)
    return out


def _floor(
    postings: Postings,
    scope: Bm25Scope,
    bounds: Mapping[str, TermBound],
    used: Sequence[str],
    rows: np.ndarray,
    partial: np.ndarray,
    k: int,
) -> float:
    """A lower bound of the k-th best score: the k-th best exact score of the `SEEDS` rows
    with the best partial scores (less the margin; -inf when there are fewer than k rows)."""
    if len(rows) < k:
        return -math.inf
    size = max(SEEDS, k)
    if len(rows) > size:
        rows = np.sort(rows[np.argpartition(-partial, size - 1)[:size]])
    return _kth_best(_scores(postings, scope, bounds, used, rows), k) * (1 - MARGIN)


def pruned_top(
    postings: Postings,
    scope: Bm25Scope,
    bounds: Mapping[str, TermBound],
    terms: Sequence[str],
    k: int,
    chunk_pk: np.ndarray,
) -> RowScores:
    """(row, BM25) of the k best eligible chunks for one variant's terms, best first, ties by
    chunk_pk: `exhaustive_top`'s result with MaxScore pruning (module docstring)."""
    used = sorted(t for t in set(terms) if t in bounds and bounds[t].df)
    if k <= 0 or not used:
        return []
    by_bound = sorted(used, key=lambda t: (-bounds[t].upper, t))
    rest = [math.fsum(bounds[t].upper for t in by_bound[i:]) for i in range(len(by_bound) + 1)]
    candidates, scores = _eligible_weights(postings, scope, bounds[by_bound[0]], by_bound[0])
    floor = _floor(postings, scope, bounds, used, candidates, scores, k)
    taken = 1
    if taken < len(by_bound) and rest[taken] * (1 + MARGIN) >= floor:
        partial = np.zeros(len(scope.mask), dtype=np.float64)
        touched = np.zeros(len(scope.mask), dtype=bool)
        partial[candidates], touched[candidates] = scores, True
        while taken < len(by_bound) and rest[taken] * (1 + MARGIN) >= floor:
            rows, term_weights = _eligible_weights(
                postings, scope, bounds[by_bound[taken]], by_bound[taken]
            )
            partial[rows] += term_weights
            touched[rows] = True
            taken += 1
        candidates = np.flatnonzero(touched)
        scores = partial[candidates]
        if floor == -math.inf:
            floor = _floor(postings, scope, bounds, used, candidates, scores, k)
    parts: dict[str, np.ndarray] = {}
    for i in range(taken, len(by_bound) + 1):
        keep = (scores + rest[i]) * (1 + MARGIN) >= floor
        candidates, scores = candidates[keep], scores[keep]
        parts = {term: part[keep] for term, part in parts.items()}
        if i < len(by_bound):
            term = by_bound[i]
            parts[term] = _weights_at(postings, scope, bounds[term], term, candidates)
            scores += parts[term]
    for term in by_bound[:taken]:
        parts[term] = _weights_at(postings, scope, bounds[term], term, candidates)
    exact = np.zeros(len(candidates), dtype=np.float64)
    for term in used:
        exact += parts[term]
    order = np.lexsort((chunk_pk[candidates], -exact))[:k]
    return [(int(candidates[i]), float(exact[i])) for i in order]


def exhaustive_top(
    postings: Postings,
    scope: Bm25Scope,
    bounds: Mapping[str, TermBound],
    terms: Sequence[str],
    k: int,
    chunk_pk: np.ndarray,
) -> RowScores:
    """The reference: every eligible posting of every term weighed, summed per chunk in sorted
    term order by one `bincount`, the k best finite scores ordered by score, then chunk_pk."""
    used = sorted(t for t in set(terms) if t in bounds and bounds[t].df)
    if k <= 0 or not used:
        return []
    parts = []
    for term in used:
        rows, tfs = postings[term]
        keep = scope.mask[rows]
        rows = rows[keep]
        parts.append(
            (
                rows,
                weights(bounds[term].idf, tfs[keep].astype(np.float64), scope.norm[rows], scope.k1),
            )
        )
    rows = np.concatenate([p[0] for p in parts])
    scores = np.bincount(rows, np.concatenate([p[1] for p in parts]), minlength=len(scope.mask))
    found = np.unique(rows)
    order = np.lexsort((chunk_pk[found], -scores[found]))[:k]
    return [(int(found[i]), float(scores[found[i]])) for i in order]
