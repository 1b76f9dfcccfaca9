"""Clause- and token-level alignment of a claim with its evidence (features of the learned judge).

A claim is compared with the evidence *clause* it matches best (MiniLM cosine plus claim-term
coverage), not only the whole sentence: "we recommend X for all Y; on Z days X is required" holds
both modalities in one sentence, but each clause holds one. On that clause: negation parity and
opposed modality classes. On the aligned sentence: which claim words it states (same word), states
in other words (embedding cosine >= 0.7) or does not state at all, and whether a claim quantity of
a kind the sentence states has another value there. Over the whole evidence: the modality classes
the claim uses and no evidence sentence uses (a recommendation restated as a rule, "always" added).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from kb_eval.judge.claims import STOPWORDS
from kb_eval.judge.clauses import clause_unit, terms_of
from kb_eval.judge.encoder import TextEncoder
from kb_eval.judge.modality import OPPOSED, classes
from kb_eval.judge.quantities import normalise_text

ALIGNMENT_FEATURES: tuple[str, ...] = (
    "clause_cosine",
    "clause_coverage",
    "clause_negation_mismatch",
    "clause_opposed",
    "claim_strong_class_unstated",
    "claim_class_unstated",
    "sentence_words_same",
    "sentence_words_paraphrased",
    "sentence_words_novel",
    "sentence_words_elsewhere",
    "sentence_quantity_differs",
)
_CLAUSE_BREAK = re.compile(
    r";\s*|:\s+|,\s*(?=(?:but|while|whereas|unless|except|although|though|however|so|and|or|"
    r"if|when|otherwise)\b)|\s+(?=but\b)"
)
_STRONG = ("require", "forbid", "universal")
_WORD = re.compile(r"[a-z][a-z']+")
_MIN_CLAUSE_WORDS = 3


def evidence_clauses(sentences: Sequence[str]) -> list[str]:
    """Clauses of the evidence sentences (a clause under three words stays with its sentence)."""
    clauses: list[str] = []
    for sentence in sentences:
        parts = [p.strip() for p in _CLAUSE_BREAK.split(sentence) if p and p.strip()]
        kept = [p for p in parts if len(p.split()) >= _MIN_CLAUSE_WORDS]
        clauses += kept if len(kept) > 1 else [sentence]
    return clauses


def _coverage(claim_terms: frozenset[str], text: str) -> float:
    return len(claim_terms & terms_of(text)) / len(claim_terms) if claim_terms else 1.0


def _best(claim: str, texts: Sequence[str], encoder: TextEncoder) -> tuple[int, float]:
    """Index and cosine of the text with the highest cosine plus claim-term coverage."""
    vectors = encoder.encode([claim, *texts])
    cosines = np.round(vectors[1:] @ vectors[0], 4)
    claim_terms = terms_of(claim)
    scores = [float(c) + _coverage(claim_terms, t) for c, t in zip(cosines, texts, strict=True)]
    index = int(np.argmax(scores))
    return index, float(cosines[index])


def content_words(text: str) -> list[str]:
    """Content words (not stemmed, sorted) for the embedding-based word alignment."""
    words = (w.strip("'") for w in _WORD.findall(normalise_text(text).lower()))
    return sorted({w for w in words if len(w) > 2 and w not in STOPWORDS})


def _token_alignment(
    claim_words: list[str], sentence_words: list[str], all_words: list[str], encoder: TextEncoder
) -> list[float]:
    """Shares of claim words the sentence states as such, in other words (cosine >= 0.7) or not
    at all (< 0.4), and of claim words absent from the sentence but in other evidence sentences."""
    if not claim_words:
        return [1.0, 0.0, 0.0, 0.0]
    stems = {w[:5] for w in sentence_words}
    same = [w for w in claim_words if w[:5] in stems]
    rest = [w for w in claim_words if w[:5] not in stems]
    best = (
        np.round((encoder.encode(rest) @ encoder.encode(sentence_words).T).max(axis=1), 4)
        if rest and sentence_words
        else np.zeros(len(rest))
    )
    elsewhere = {w[:5] for w in all_words} - stems
    count = len(claim_words)
    return [
        len(same) / count,
        float(sum(b >= 0.7 for b in best)) / count,
        float(sum(b < 0.4 for b in best)) / count,
        sum(w[:5] in elsewhere for w in rest) / count,
    ]


def _quantity_differs(claim: str, sentence: str) -> float:
    """A claim quantity whose kind the sentence states, with no value of the sentence matching."""
    mine = clause_unit(normalise_text(claim)).quantities
    theirs = clause_unit(normalise_text(sentence)).quantities
    kinds = {q.kind for q in theirs}
    return float(any(q.kind in kinds and not any(q.matches(o) for o in theirs) for q in mine))


def best_clause(claim: str, sentences: Sequence[str], encoder: TextEncoder) -> tuple[str, float]:
    """The evidence clause aligned with the claim and its cosine."""
    clauses = evidence_clauses(sentences)
    index, cosine = _best(claim, clauses, encoder)
    return clauses[index], cosine


def alignment_features(
    claim: str,
    sentences: Sequence[str],
    aligned_sentence: str,
    encoder: TextEncoder,
) -> list[float]:
    """The ALIGNMENT_FEATURES of a claim against the evidence sentences and its aligned one."""
    clause, cosine = best_clause(claim, sentences, encoder)
    claim_negations = clause_unit(normalise_text(claim)).negations % 2
    clause_negations = clause_unit(normalise_text(clause)).negations % 2
    mine, theirs = classes(claim), classes(clause)
    opposed = any(
        (mine[a] and not mine[b] and theirs[b] and not theirs[a])
        or (mine[b] and not mine[a] and theirs[a] and not theirs[b])
        for a, b in OPPOSED
    )
    stated = {name for s in sentences for name, on in classes(s).items() if on}
    unstated = [name for name, on in mine.items() if on and name not in stated]
    strong = sum(name in _STRONG for name in unstated)
    return [
        cosine,
        _coverage(terms_of(claim), clause),
        float(claim_negations != clause_negations),
        float(opposed),
        min(strong, 2) / 2,
        min(len(unstated) - strong, 3) / 3,
        *_token_alignment(
            content_words(claim),
            content_words(aligned_sentence),
            content_words(" ".join(sentences)),
            encoder,
        ),
        _quantity_differs(claim, aligned_sentence),
    ]
