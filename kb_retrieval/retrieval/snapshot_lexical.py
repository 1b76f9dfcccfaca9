"""The BM25 leg of a tenant snapshot, with the same idf and length norms as the SQL leg.

`LexicalLeg` is a mixin of `snapshot.TenantSnapshot` (which builds the postings and text
classes it reads). Document frequencies and the mean length are counted over the eligible
chunks of the scope; scoring runs over text classes (`snapshot_classes.py`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from kb_retrieval.retrieval.postings import Postings
from kb_retrieval.retrieval.snapshot_classes import TextClasses, class_lexical
from kb_retrieval.retrieval.snapshot_vectors import SCOPE_CACHE_SIZE, Hit

EMPTY_ROWS = np.array([], dtype=np.int64)
EMPTY_TFS = np.array([], dtype=np.float32)


class LexicalLeg:
    """The snapshot's BM25 leg; the attributes below are set by `TenantSnapshot`."""

    chunk_pk: np.ndarray
    term_count: np.ndarray
    postings: Postings
    classes: TextClasses
    _scopes_lock: Any
    _stats: dict[tuple[int, float, float], tuple[np.ndarray, ScopeStats]]

    def lexical_leg(
        self, mask: np.ndarray, variant_terms: Sequence[Sequence[str]], k: int, k1: float, b: float
    ) -> list[Hit]:
        """(variant from 1, chunk_pk, BM25) of the top k chunks per variant, as `LEXICAL_BM25`."""
        return self.lexical_search(mask, variant_terms, k, k1, b)[0]

    def lexical_search(
        self, mask: np.ndarray, variant_terms: Sequence[Sequence[str]], k: int, k1: float, b: float
    ) -> tuple[list[Hit], dict[str, float], float]:
        """`lexical_leg`'s hits with what `term_idf(mask, every variant's terms)` returns: the
        leg counts each term's eligible postings anyway. Scored over text classes (chunks with
        equal terms scored once, `snapshot_classes.py`); each distinct term's weights computed
        once per call and shared by the variants; the scope's size, mean length, length norms
        and eligible chunks per class once per scope."""
        stats = self._scope_stats(mask, k1, b)
        tops, idf = class_lexical(
            self.classes,
            mask,
            stats.counts,
            stats.norm,
            stats.n,
            variant_terms,
            k,
            k1,
            self.chunk_pk,
        )
        hits = [
            (index, int(self.chunk_pk[row]), score)
            for index, top in enumerate(tops, start=1)
            for row, score in top
        ]
        return hits, idf, stats.avgdl

    def term_idf(self, mask: np.ndarray, terms: Sequence[str]) -> tuple[dict[str, float], float]:
        """What `candidates.term_idf` returns: BM25 idf per term over the scope, and avgdl."""
        stats = self._scope_stats(mask, 0.0, 0.0)
        idf = {}
        for term in sorted(set(terms)):
            rows, _tfs = self.postings.get(term, (EMPTY_ROWS, EMPTY_TFS))
            df = int(np.count_nonzero(mask[rows]))
            idf[term] = math.log(1 + (stats.n - df + 0.5) / (df + 0.5))
        return idf, stats.avgdl

    def _scope_stats(self, mask: np.ndarray, k1: float, b: float) -> ScopeStats:
        """The scope's size, mean length and length norms, cached per scope mask (the same
        object while `scope` caches it) like the window penalties."""
        key = (id(mask), k1, b)
        with self._scopes_lock:
            found = self._stats.get(key)
        if found is not None and found[0] is mask:
            return found[1]
        n = int(mask.sum())
        avgdl = float(self.term_count[mask].mean()) if n else 1.0
        # Per chunk, the same float64 operations as per posting: identical values.
        norm = k1 * (1 - b + b * self.term_count / avgdl)
        stats = ScopeStats(n, avgdl, norm, self.classes.eligible_counts(mask))
        with self._scopes_lock:
            if len(self._stats) >= SCOPE_CACHE_SIZE:
                self._stats.pop(next(iter(self._stats)), None)
            self._stats[key] = (mask, stats)
        return stats


@dataclass(frozen=True)
class ScopeStats:
    """A scope's chunk count, mean length, each chunk's BM25 length norm and the eligible
    chunks of each text class."""

    n: int
    avgdl: float
    norm: np.ndarray
    counts: np.ndarray
