"""The per-fold refit of the verdict's lexical confidence (bench/confidence_refit.py)."""

from __future__ import annotations

from bench.confidence_refit import LexicalRow, fit_lexical


def _row(rank: int, coverage: float, *, quote: bool, version: bool, answerable: bool) -> LexicalRow:
    return LexicalRow(
        "t", rank, [1.0, 0.3, coverage, coverage / 2, coverage], quote, version, answerable
    )


def test_each_label_reads_its_own_flag() -> None:
    row = _row(0, 0.5, quote=False, version=True, answerable=True)
    assert (row.label("doc"), row.label("quote"), row.label("answerable")) == (1.0, 0.0, 1.0)


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
    best_only = fit_lexical(rows, top_k=1, label="quote")
    assert min(best_only.w_vector, best_only.w_coverage, best_only.w_bm25) >= 0.0
    assert best_only.w_coverage > 1.0
    # With the reversed candidates read, every signal's slope is negative and dropped.
    both = fit_lexical(rows, top_k=2, label="quote")
    assert both.w_coverage == both.w_bm25 == both.w_passage == 0.0
