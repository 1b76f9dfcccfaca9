"""The snapshot's BM25 leg over text classes: chunks with the same terms are scored once.

Chunks whose `term_freqs` (and so term count) are equal get the same BM25 for every query: each
posting's weight reads only the term's idf, the tf and the chunk's length norm, and the sum runs
over the same terms in the same order. A tenant holds many such chunks: each new version of a
document is chunked again, and unchanged passages give the same chunk text (the 100k-chunk bench
tenant is made of copies: 100,000 chunks, a few hundred classes). The leg weighs each class's
postings once (postings over classes, not chunks), counts each term's eligible chunks per class
(df is unchanged: the sum of the eligible members of the term's classes), ranks classes, and
expands the best classes to their eligible chunks in chunk_pk order: the hits, scores, ties and
idf of the per-chunk leg (tests/test_query_speed_classes.py, hypothesis against the per-chunk
scorer). A tenant without repeated texts has one class per chunk: the per-chunk leg's work.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from kb_retrieval.retrieval.postings import Postings, build_postings

RowScores = list[tuple[int, float]]


@dataclass(frozen=True)
class TextClasses:
    """Rows grouped by equal `term_freqs`: `of_row[i]` is row i's class; the rows of class c
    are `members[bounds[c]:bounds[c + 1]]` (ascending); `first_row[c]` is its first row;
    `postings` are over classes (term -> class ids ascending, tfs)."""

    of_row: np.ndarray
    members: np.ndarray
    bounds: np.ndarray
    first_row: np.ndarray
    postings: Postings

    @property
    def nbytes(self) -> int:
        arrays = (self.of_row, self.members, self.bounds, self.first_row)
        return int(sum(a.nbytes for a in arrays) + self.postings.nbytes)

    def eligible_counts(self, mask: np.ndarray) -> np.ndarray:
        """Eligible rows per class."""
        return np.bincount(self.of_row[mask], minlength=len(self.first_row))


def text_classes(rows: Sequence[Sequence[Any]]) -> TextClasses:
    """Classes of SNAPSHOT_CHUNKS rows (term count at 11, the parsed term_freqs dict at 12),
    numbered in order of their first row. Dicts with equal items in another order land in
    different classes: fewer merges, the same scores."""
    index: dict[tuple[Any, ...], int] = {}
    of_row = np.fromiter(
        (index.setdefault((r[11], *r[12].items()), len(index)) for r in rows),
        dtype=np.int32,
        count=len(rows),
    )
    members = np.argsort(of_row, kind="stable")
    bounds = np.searchsorted(of_row[members], np.arange(len(index) + 1))
    first_row = members[bounds[:-1]] if len(rows) else np.empty(0, dtype=np.int64)
    postings = build_postings([rows[int(i)][12] for i in first_row])
    return TextClasses(of_row, members, bounds, first_row, postings)


def class_lexical(
    classes: TextClasses,
    mask: np.ndarray,
    counts: np.ndarray,
    norm: np.ndarray,
    n: int,
    variant_terms: Sequence[Sequence[str]],
    k: int,
    k1: float,
    chunk_pk: np.ndarray,
) -> tuple[list[list[tuple[int, float]]], dict[str, float]]:
    """Per variant, (row, BM25) of its k best eligible rows (score, then chunk_pk), and the idf
    of every variant's terms. `counts` are `eligible_counts(mask)`, `norm` the rows' length
    norms and `n` the eligible rows of the scope."""
    norm = norm[classes.first_row]
    weights: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    idf: dict[str, float] = {}
    for term in sorted({term for terms in variant_terms for term in terms}):
        if term in classes.postings:
            ids, tfs = classes.postings[term]
            keep = counts[ids] > 0
            ids, tfs = ids[keep], tfs[keep].astype(np.float64)
            df = int(counts[ids].sum())
        else:
            ids, tfs, df = _EMPTY_IDS, _EMPTY_TFS, 0
        idf[term] = math.log(1 + (n - df + 0.5) / (df + 0.5))
        if len(ids):
            weights[term] = (ids, idf[term] * tfs * (k1 + 1) / (tfs + norm[ids]))
    tops = [
        _best_rows(classes, mask, counts, _class_scores(weights, terms, len(norm)), k, chunk_pk)
        for terms in variant_terms
    ]
    return tops, idf


def _class_scores(
    weights: dict[str, tuple[np.ndarray, np.ndarray]], terms: Sequence[str], size: int
) -> np.ndarray:
    """BM25 of every class (-inf where no term matches): weights summed in sorted-term order by
    one `bincount`, the per-chunk leg's additions."""
    used = sorted(set(terms) & weights.keys())
    if not used:
        return np.full(size, -np.inf)
    ids = np.concatenate([weights[term][0] for term in used])
    scores = np.bincount(ids, np.concatenate([weights[term][1] for term in used]), size)
    scores[np.bincount(ids, minlength=size) == 0] = -np.inf
    return scores


def _best_rows(
    classes: TextClasses,
    mask: np.ndarray,
    counts: np.ndarray,
    scores: np.ndarray,
    k: int,
    chunk_pk: np.ndarray,
) -> RowScores:
    """The k best eligible rows by their class's score, ties by chunk_pk: the classes in score
    order until they hold k eligible rows, every class tied with the last of them too."""
    if k <= 0:
        return []
    found = np.flatnonzero(np.isfinite(scores) & (counts > 0))
    if not len(found):
        return []
    ranked = found[np.argsort(-scores[found], kind="stable")]
    enough = min(int(np.searchsorted(np.cumsum(counts[ranked]), k)), len(ranked) - 1)
    chosen = ranked[scores[ranked] >= scores[ranked[enough]]]
    starts, ends = classes.bounds[chosen], classes.bounds[chosen + 1]
    sizes = ends - starts
    at = np.repeat(starts - np.cumsum(sizes) + sizes, sizes) + np.arange(int(sizes.sum()))
    rows = classes.members[at]
    rows = rows[mask[rows]]
    row_scores = scores[classes.of_row[rows]]
    order = np.lexsort((chunk_pk[rows], -row_scores))[:k]
    return [(int(rows[i]), float(row_scores[i])) for i in order]


_EMPTY_IDS = np.array([], dtype=np.int32)
_EMPTY_TFS = np.array([], dtype=np.float64)
