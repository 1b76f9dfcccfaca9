"""The per-fold refit of the verdict's lexical confidence (bench/confidence_refit.py)."""

from __future__ import annotations

from bench.confidence_refit import fit_lexical, target
from kb_eval.answerability_fit import Row

HALF = 8.0


def _row(rank: int, coverage: float, *, quote: bool, version: bool, answerable: bool) -> Row:
    """A candidate whose saturated BM25 is half its coverage (bm25 / (bm25 + HALF))."""
    saturated = coverage / 2
    bm25 = HALF * saturated / (1 - saturated)
    return Row(
        "t", "c", rank, {}, quote, version, answerable, lexical=(0.3, coverage, bm25, coverage)
    )


def test_each_label_reads_its_own_flag() -> None:
    row = _row(0, 0.5, quote=False, version=True, answerable=True)
    assert (target(row, "doc"), target(row, "quote"), target(row, "answerable")) == (1.0, 0.0, 1.0)


def test_the_fit_reads_only_the_best_ranked_candidates_and_keeps_weights_non_negative() -> None:
    rows = [
        _row(0, c, quote=c > 0.5, version=c > 0.5, answerable=True)
        for c in (0.1, 0.3, 0.45, 0.55, 0.7, 0.9, 0.2, 0.8)
    ]
    # Lower-ranked candidates that would reverse the relation if they were read.
    rows += [
        _row(1, c, quote=c < 0.5, version=c < 0.5, answerable=True)
        for c in (0.1, 0.9, 0.95, 0.85, 0.05)
    ]
    best_only = fit_lexical(rows, top_k=1, label="quote", bm25_half=HALF)
    assert min(best_only.w_vector, best_only.w_coverage, best_only.w_bm25) >= 0.0
    assert best_only.w_coverage > 1.0
    # With the reversed candidates read, every signal's slope is negative and dropped.
    both = fit_lexical(rows, top_k=2, label="quote", bm25_half=HALF)
    assert both.w_coverage == both.w_bm25 == both.w_passage == 0.0
