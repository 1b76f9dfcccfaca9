"""Coverage of each claim clause by the evidence, and of the aligned clause by the claim.

A claim that joins a stated fact to an unstated one ("one bag is allowed, and bikes travel free")
is covered well on average but not in its second clause: the features take the worst clause.
The other direction: the share of the aligned evidence clause's terms the claim leaves out (a
condition dropped, "more than 90 days before arrival").
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from kb_eval.judge.alignment import content_words
from kb_eval.judge.claim_judge import claim_clauses
from kb_eval.judge.clauses import terms_of
from kb_eval.judge.encoder import TextEncoder

COVERAGE_FEATURES: tuple[str, ...] = (
    "worst_clause_coverage",
    "worst_clause_soft",
    "worst_clause_novel",
    "aligned_terms_left_out",
)
NOVEL_BELOW = 0.5


def _clause_scores(
    clause: str, evidence_terms: frozenset[str], evidence_words: list[str], encoder: TextEncoder
) -> tuple[float, float, int]:
    """Term coverage, mean best word cosine and count of novel words of one claim clause."""
    terms = terms_of(clause)
    coverage = len(terms & evidence_terms) / len(terms) if terms else 1.0
    words = content_words(clause)
    if not words or not evidence_words:
        return coverage, 1.0 if not words else 0.0, 0
    stems = {w[:5] for w in evidence_words}
    best = np.round((encoder.encode(words) @ encoder.encode(evidence_words).T).max(axis=1), 4)
    novel = sum(
        1 for w, b in zip(words, best, strict=True) if w[:5] not in stems and b < NOVEL_BELOW
    )
    return coverage, float(best.mean()), novel


def coverage_features(
    claim: str, evidence: Sequence[str], aligned_clause: str, encoder: TextEncoder
) -> list[float]:
    """The COVERAGE_FEATURES of a claim against its evidence and its aligned evidence clause."""
    joined = " ".join(evidence)
    evidence_terms, evidence_words = terms_of(joined), content_words(joined)
    scores = [
        _clause_scores(c, evidence_terms, evidence_words, encoder) for c in claim_clauses(claim)
    ] or [(1.0, 1.0, 0)]
    clause_terms = terms_of(aligned_clause)
    left_out = len(clause_terms - terms_of(claim)) / len(clause_terms) if clause_terms else 0.0
    return [
        min(s[0] for s in scores),
        min(s[1] for s in scores),
        min(max(s[2] for s in scores), 3) / 3,
        left_out,
    ]
