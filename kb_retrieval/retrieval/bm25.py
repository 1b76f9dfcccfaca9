"""The snapshot's BM25 leg: the exact top k chunks per variant, long posting lists read only
where a chunk could still reach the top k (max-score pruning).

A term's BM25 weight in a chunk is below its upper bound `idf * (k1 + 1)` (tf / (tf + norm) < 1).
For each variant the terms with at most `1 / LONG_SHARE` of the scope in their postings are
scored in full first; the k-th best of those partial scores (a lower bound of the k-th best
full score) is the threshold. The longest lists whose upper bounds together stay below it
cannot lift a chunk they alone match into the top k, so they are only looked up (binary
search) for the chunks the other terms matched: their postings are read once, to count the
eligible ones (the idf needs it), instead of being weighted and summed whole. Every returned
score is the full BM25, summed term after term in sorted-term order as `np.bincount` over all
postings sums it, so scores, order and ties are those of the unpruned leg (tested).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from kb_retrieval.retrieval.postings import Postings

Hit = tuple[int, int, float]
# A term is "long" when its eligible postings exceed this share of the scope.
LONG_SHARE = 16
# Upper bounds are compared with this relative margin (rounding of the weights' quotients).
MARGIN = 1e-9
_EMPTY_ROWS = np.array([], dtype=np.int32)
_EMPTY_TFS = np.array([], dtype=np.float32)


@dataclass(frozen=True)
class ScopeStats:
    """The scope's chunk count, mean length and each chunk's BM25 length norm
    `k1 * (1 - b + b * term_count / avgdl)`, computed once per scope."""

    n: int
    avgdl: float
    norm: np.ndarray


@dataclass
class _Term:
    """One query term's postings in the scope: all of them, which are eligible, its idf."""

    rows: np.ndarray
    tfs: np.ndarray
    keep: np.ndarray
    df: int
    idf: float
    _weights: tuple[np.ndarray, np.ndarray] | None = None

    def weights(self, stats: ScopeStats, k1: float) -> tuple[np.ndarray, np.ndarray]:
        """(eligible rows ascending, BM25 weight of each), computed on first use."""
        if self._weights is None:
            rows, tfs = self.rows[self.keep], self.tfs[self.keep].astype(np.float64)
            self._weights = (rows, self.idf * tfs * (k1 + 1) / (tfs + stats.norm[rows]))
        return self._weights

    def lookup(
        self, rows: np.ndarray, stats: ScopeStats, k1: float
    ) -> tuple[np.ndarray, np.ndarray]:
        """(which of `rows` (eligible, ascending) hold the term, their weights), by binary
        search in the postings: the weight computed as `weights` computes it."""
        at = np.searchsorted(self.rows, rows)
        present = at < len(self.rows)
        present[present] = self.rows[at[present]] == rows[present]
        tfs = self.tfs[at[present]].astype(np.float64)
        return present, self.idf * tfs * (k1 + 1) / (tfs + stats.norm[rows[present]])


def scope_stats(term_count: np.ndarray, mask: np.ndarray, k1: float, b: float) -> ScopeStats:
    n = int(mask.sum())
    avgdl = float(term_count[mask].mean()) if n else 1.0
    return ScopeStats(n, avgdl, k1 * (1 - b + b * term_count / avgdl))


def bm25_search(
    postings: Postings,
    mask: np.ndarray,
    stats: ScopeStats,
    chunk_pk: np.ndarray,
    variant_terms: Sequence[Sequence[str]],
    k: int,
    k1: float,
    b: float,
) -> tuple[list[Hit], dict[str, float]]:
    """(variant from 1, chunk_pk, BM25) of the top k chunks per variant (ties by chunk_pk), and
    the idf of every term of every variant over the scope (`term_idf`'s values)."""
    terms: dict[str, _Term] = {}
    idf: dict[str, float] = {}
    for term in sorted({term for words in variant_terms for term in words}):
        rows, tfs = postings.get(term, (_EMPTY_ROWS, _EMPTY_TFS))
        keep = mask[rows]
        df = int(np.count_nonzero(keep))
        idf[term] = math.log(1 + (stats.n - df + 0.5) / (df + 0.5))
        if df:
            terms[term] = _Term(rows, tfs, keep, df, idf[term])
    prunable = k1 >= 0 and 0 <= b <= 1
    hits: list[Hit] = []
    for index, words in enumerate(variant_terms, start=1):
        used = sorted(set(words) & terms.keys())
        if used and k > 0:
            skipped = _skippable(terms, used, stats, k, k1) if prunable else set()
            rows, scores = _scores(terms, used, skipped, stats, k1, len(chunk_pk))
            order = np.lexsort((chunk_pk[rows], -scores))[:k]
            hits.extend((index, int(chunk_pk[rows[i]]), float(scores[i])) for i in order)
    return hits, idf


def _skippable(
    terms: dict[str, _Term], used: list[str], stats: ScopeStats, k: int, k1: float
) -> set[str]:
    """The long terms whose upper bounds sum below the k-th best score of the others."""
    limit = max(k, stats.n // LONG_SHARE)
    long = sorted((t for t in used if terms[t].df > limit), key=lambda t: (terms[t].idf, t))
    if not long:
        return set()
    short = [t for t in used if terms[t].df <= limit] or [long.pop()]
    partial = np.concatenate([terms[t].weights(stats, k1)[1] for t in short])
    rows = np.concatenate([terms[t].weights(stats, k1)[0] for t in short])
    scores = np.bincount(rows, partial)
    matched = scores[scores > 0]
    if len(matched) < k:
        return set()
    threshold = float(np.partition(matched, len(matched) - k)[len(matched) - k])
    skipped, bound = set(), 0.0
    for term in long:
        bound += terms[term].idf * (k1 + 1)
        if bound * (1 + MARGIN) >= threshold:
            break
        skipped.add(term)
    return skipped


def _scores(
    terms: dict[str, _Term],
    used: list[str],
    skipped: set[str],
    stats: ScopeStats,
    k1: float,
    size: int,
) -> tuple[np.ndarray, np.ndarray]:
    """(rows matched by a term outside `skipped`, their full BM25): the weights added term
    after term in sorted-term order, as one `np.bincount` over every used term's postings."""
    full = [terms[t].weights(stats, k1) for t in used if t not in skipped]
    rows = np.concatenate([r for r, _ in full])
    totals = np.bincount(rows, np.concatenate([w for _, w in full]), minlength=size)
    if not skipped:
        found = np.flatnonzero(np.bincount(rows, minlength=size))
        return found, totals[found]
    found = np.flatnonzero(totals > 0)
    scores = np.zeros(len(found))
    for term in used:
        if term in skipped:
            present, weights = terms[term].lookup(found, stats, k1)
        else:
            eligible, values = terms[term].weights(stats, k1)
            at = np.minimum(np.searchsorted(eligible, found), len(eligible) - 1)
            present = eligible[at] == found
            weights = values[at[present]]
        scores[present] = scores[present] + weights
    return found, scores
