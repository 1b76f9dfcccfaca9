"""BM25 postings of a tenant snapshot: term -> (chunk rows ascending, term frequencies).

Stored as one compressed-sparse-row table (three numpy arrays and a term index) instead of two
small arrays per term: 8 bytes per (chunk, term) pair (int32 row, float32 frequency, exact for
counts below 2**24) and no Python object per term beyond its dictionary entry.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from itertools import chain

import numpy as np

ROW_DTYPE = np.int32
TF_DTYPE = np.float32


class Postings(Mapping[str, tuple[np.ndarray, np.ndarray]]):
    """term -> (rows ascending, term frequencies), views into three shared arrays."""

    def __init__(
        self, vocabulary: Sequence[str], bounds: np.ndarray, rows: np.ndarray, tfs: np.ndarray
    ) -> None:
        self._index = {term: i for i, term in enumerate(vocabulary)}
        self.vocabulary = list(vocabulary)
        self.bounds = np.asarray(bounds, dtype=np.int64)
        self.rows = np.asarray(rows, dtype=ROW_DTYPE)
        self.tfs = np.asarray(tfs, dtype=TF_DTYPE)

    def __getitem__(self, term: str) -> tuple[np.ndarray, np.ndarray]:
        i = self._index[term]
        start, end = self.bounds[i], self.bounds[i + 1]
        return self.rows[start:end], self.tfs[start:end]

    def __iter__(self) -> Iterator[str]:
        return iter(self.vocabulary)

    def __len__(self) -> int:
        return len(self.vocabulary)

    @property
    def nbytes(self) -> int:
        return int(self.bounds.nbytes + self.rows.nbytes + self.tfs.nbytes)

    def pairs(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(term id, row, tf) of every pair, in term then row order."""
        term_ids = np.repeat(np.arange(len(self.vocabulary), dtype=np.int64), np.diff(self.bounds))
        return term_ids, self.rows, self.tfs


def _from_pairs(
    vocabulary: Sequence[str], term_ids: np.ndarray, rows: np.ndarray, tfs: np.ndarray
) -> Postings:
    """Postings from unordered (term id, row, tf) triples with distinct (term, row) pairs."""
    order = np.lexsort((rows, term_ids))
    bounds = np.searchsorted(term_ids[order], np.arange(len(vocabulary) + 1))
    return Postings(vocabulary, bounds, rows[order], tfs[order])


def build_postings(term_freqs: Sequence[dict[str, int]]) -> Postings:
    """Postings from each chunk's `term_freqs` (row i = term_freqs[i]).

    Built with C-level iteration (chain, map, fromiter): a Python loop over the 1.5 M (chunk,
    term) pairs of a 10,000-chunk tenant took most of the snapshot's load time.
    """
    lengths = np.fromiter(map(len, term_freqs), dtype=np.int64, count=len(term_freqs))
    total = int(lengths.sum())
    if not total:
        return Postings([], np.zeros(1, dtype=np.int64), np.empty(0), np.empty(0))
    terms = list(chain.from_iterable(term_freqs))
    tfs = np.fromiter(
        chain.from_iterable(freqs.values() for freqs in term_freqs), dtype=np.float64, count=total
    )
    vocabulary = sorted(set(terms))
    index = {term: i for i, term in enumerate(vocabulary)}
    ids = np.fromiter(map(index.__getitem__, terms), dtype=np.int64, count=total)
    rows = np.repeat(np.arange(len(term_freqs), dtype=np.int64), lengths)
    return _from_pairs(vocabulary, ids, rows, tfs)


def merge_postings(
    old: Postings, remap: np.ndarray, fresh: Postings, fresh_rows: np.ndarray
) -> Postings:
    """Postings over a new row order: `old` with its rows mapped through `remap` (-1 drops a
    row), merged with `fresh`, whose rows map through `fresh_rows`. Equal to `build_postings`
    over the new rows (tested through the snapshot reload)."""
    old_ids, old_rows, old_tfs = old.pairs()
    mapped = remap[old_rows] if len(old_rows) else np.empty(0, dtype=np.int64)
    keep = mapped >= 0
    fresh_ids, fresh_local, fresh_tfs = fresh.pairs()
    present = np.flatnonzero(np.bincount(old_ids[keep], minlength=len(old.vocabulary)))
    vocabulary = sorted({old.vocabulary[i] for i in present.tolist()} | set(fresh.vocabulary))
    position = {term: i for i, term in enumerate(vocabulary)}

    def translate(terms: Sequence[str], ids: np.ndarray) -> np.ndarray:
        table = np.array([position.get(term, -1) for term in terms], dtype=np.int64)
        return table[ids] if len(ids) else np.empty(0, dtype=np.int64)

    kept = (translate(old.vocabulary, old_ids[keep]), mapped[keep], old_tfs[keep])
    added = (
        translate(fresh.vocabulary, fresh_ids),
        np.asarray(fresh_rows, dtype=np.int64)[fresh_local],
        fresh_tfs,
    )
    return _merge_sorted(vocabulary, kept, added)


Pairs = tuple[np.ndarray, np.ndarray, np.ndarray]


def _merge_sorted(vocabulary: Sequence[str], kept: Pairs, added: Pairs) -> Postings:
    """Postings of `kept` and `added` (term id, row, tf) triples. A reload keeps the old pairs
    in (term, row) order (both the vocabulary and the remapped rows keep their order), so the
    few added pairs are sorted alone and inserted: linear instead of a sort of every pair
    (most of a 100k-chunk reload's postings time, bench/query_path.py); any other input is
    sorted whole. Both give the same arrays."""
    term_ids, rows, tfs = kept
    width = int(max(rows.max(initial=-1), added[1].max(initial=-1))) + 1
    keys = term_ids * width + rows
    if len(keys) > 1 and not np.all(keys[1:] > keys[:-1]):
        return _from_pairs(
            vocabulary, *(np.concatenate([a, b]) for a, b in zip(kept, added, strict=True))
        )
    order = np.lexsort((added[1], added[0]))
    new_ids, new_rows, new_tfs = (a[order] for a in added)
    at = np.searchsorted(keys, new_ids * width + new_rows)
    term_ids = np.insert(term_ids, at, new_ids)
    bounds = np.searchsorted(term_ids, np.arange(len(vocabulary) + 1))
    return Postings(vocabulary, bounds, np.insert(rows, at, new_rows), np.insert(tfs, at, new_tfs))
