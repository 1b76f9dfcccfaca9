"""Features of a claim/evidence pair for the learned judge: the rule judge's verdict, alignment,
polarity and modality of the aligned sentences, quantities, and MiniLM similarity.

Every feature is structural (which kind of word stands where), not a word of one pair: the
modality and cost classes are small closed classes of English policy language.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from kb_eval.judge.alignment import (
    ALIGNMENT_FEATURES,
    alignment_features,
    best_clause,
    content_words,
    evidence_clauses,
)
from kb_eval.judge.bounds import BOUND_FEATURES, bound_features
from kb_eval.judge.claim_judge import judge_claim
from kb_eval.judge.claims import split_sentences
from kb_eval.judge.clauses import clause_unit, terms_of
from kb_eval.judge.coverage import COVERAGE_FEATURES, coverage_features
from kb_eval.judge.drift import DRIFT_FEATURES, drift_features
from kb_eval.judge.encoder import TextEncoder
from kb_eval.judge.items import ITEM_FEATURES, item_features
from kb_eval.judge.modality import OPPOSED as _OPPOSED
from kb_eval.judge.modality import classes as _classes
from kb_eval.judge.quantities import normalise_text
from kb_eval.judge.subject import SUBJECT_FEATURES, subject_features

_REASONS = (
    ("whole", "a whole sentence"),
    ("antonym", "antonyms"),
    ("negation", "negation mismatch"),
    ("reused", "stated for another thing"),
    ("differs", " differs"),
    ("low_overlap", "low overlap"),
    ("not_stated", "not stated"),
)


def _coverage(claim_terms: frozenset[str], terms: frozenset[str]) -> float:
    return len(claim_terms & terms) / len(claim_terms) if claim_terms else 1.0


_CLAUSE_OPPOSED = ALIGNMENT_FEATURES.index("clause_opposed")
FEATURE_NAMES: tuple[str, ...] = (
    "rule_supported",
    "rule_contradicted",
    *(f"reason_{name}" for name, _ in _REASONS),
    "cos_best",
    "cos_evidence",
    "coverage_aligned",
    "coverage_all",
    "new_terms",
    "soft_coverage",
    "soft_min",
    "words_paraphrased",
    "words_substituted",
    "words_novel",
    "claim_quantities",
    "negation_mismatch",
    "claim_negated",
    "negated_gain",
    "negated_gain_max",
    "limiting_sentence_overlap",
    "quantities_matched",
    "quantity_same_kind_differs",
    "quantity_kind_absent",
    *(f"opposed_{a}_{b}" for a, b in _OPPOSED),
    *(f"shared_{a}" for a, _ in _OPPOSED),
    *ALIGNMENT_FEATURES,
    *BOUND_FEATURES,
    *COVERAGE_FEATURES,
    *SUBJECT_FEATURES,
    *ITEM_FEATURES,
    *DRIFT_FEATURES,
)


@dataclass(frozen=True)
class Alignment:
    """The evidence sentence that best matches a claim (cosine plus token overlap)."""

    sentence: str
    cosine: float
    overlap: float


def align(claim: str, sentences: Sequence[str], encoder: TextEncoder) -> Alignment:
    """The best-aligned evidence sentence: MiniLM cosine plus the claim terms' coverage."""
    claim_terms = terms_of(claim)
    vectors = encoder.encode([claim, *sentences])
    cosines = vectors[1:] @ vectors[0]
    scored = [
        (round(float(c), 4) + _coverage(claim_terms, terms_of(s)), i)
        for i, (s, c) in enumerate(zip(sentences, cosines, strict=True))
    ]
    _, index = max(scored, key=lambda item: (item[0], -item[1]))
    return Alignment(
        sentences[index],
        round(float(cosines[index]), 4),
        _coverage(claim_terms, terms_of(sentences[index])),
    )


def _soft_coverage(claim: str, evidence: str, encoder: TextEncoder) -> list[float]:
    """Word alignment by embedding: the mean and minimum over claim words of the best cosine to
    an evidence word, then the claim words absent from the evidence split into paraphrases
    (best cosine >= 0.7), substitutes (0.4-0.7: another thing in the same slot) and novel words."""
    claim_words, evidence_words = content_words(claim), content_words(evidence)
    if not claim_words or not evidence_words:
        return [0.0, 0.0, 0.0, 0.0, 0.0]
    left, right = encoder.encode(claim_words), encoder.encode(evidence_words)
    best = np.round((left @ right.T).max(axis=1), 4)
    stems = {word[:5] for word in evidence_words}
    absent = [float(b) for w, b in zip(claim_words, best, strict=True) if w[:5] not in stems]
    buckets = [
        sum(b >= 0.7 for b in absent),
        sum(0.4 <= b < 0.7 for b in absent),
        sum(b < 0.4 for b in absent),
    ]
    return [float(best.mean()), float(best.min()), *(min(n, 4) / 4 for n in buckets)]


_AUXILIARY = re.compile(
    r"\b(is|are|was|were|can|will|must|may|should|does|do|did|has|have|had|could|would)\b"
)
_NEGATED = re.compile(r"\s*\bnot\b|n't\b|\bno\b\s*|\bnever\b\s*")


def negated(text: str) -> str:
    """The sentence with its polarity flipped: a negation removed, else "not" after the first
    auxiliary, else "It is not true that" in front (for the embedding contrast feature)."""
    plain = normalise_text(text)
    if _NEGATED.search(plain):
        return " ".join(_NEGATED.sub(" ", plain).split())
    if _AUXILIARY.search(plain):
        return _AUXILIARY.sub(lambda m: f"{m.group(1)} not", plain, count=1)
    return f"It is not true that {plain}"


_LIMITING = re.compile(
    r"\b(?:not|no|never|only|except|unless|however|but|instead|later|otherwise)\b|n't\b"
)


def _other_sentences(
    claim: str, sentences: Sequence[str], aligned: Alignment, encoder: TextEncoder
) -> list[float]:
    """Signals beyond the aligned sentence: the largest gain in cosine from negating the claim
    over all sentences, and the claim-term coverage of the best other sentence that carries a
    negation or limitation (a contradiction stated in the sentence after the aligned one)."""
    vectors = encoder.encode([claim, negated(claim), *sentences])
    gains = vectors[2:] @ vectors[1] - vectors[2:] @ vectors[0]
    claim_terms = terms_of(claim)
    limiting = [
        _coverage(claim_terms, terms_of(s))
        for s in sentences
        if s != aligned.sentence and _LIMITING.search(normalise_text(s).lower())
    ]
    return [round(float(gains.max()), 4), max(limiting, default=0.0)]


def _quantity_features(claim: str, evidence: Sequence[str]) -> list[float]:
    """Share of claim quantities stated in the evidence; a differing value of a stated kind; a
    kind the evidence never states."""
    mine = clause_unit(normalise_text(claim)).quantities
    theirs = [q for text in evidence for q in clause_unit(normalise_text(text)).quantities]
    if not mine:
        return [1.0, 0.0, 0.0]
    matched = [any(q.matches(other) for other in theirs) for q in mine]
    kinds = {q.kind for q in theirs}
    differs = any(not ok and q.kind in kinds for q, ok in zip(mine, matched, strict=True))
    absent = any(q.kind not in kinds for q in mine)
    return [sum(matched) / len(mine), float(differs), float(absent)]


def feature_sentences(evidence: Sequence[str]) -> list[str]:
    """Evidence sentences, a FAQ question joined to the sentence that answers it ("Do I need X?
    None at all." is one statement: its negation and the question's words belong together)."""
    sentences: list[str] = []
    for text in evidence:
        pending = ""
        for sentence in split_sentences(text):
            if pending:
                sentences.append(f"{pending} {sentence}")
                pending = ""
            elif sentence.rstrip().endswith("?"):
                pending = sentence.strip()
            else:
                sentences.append(sentence)
        if pending:
            sentences.append(pending)
    return sentences


def pair_features(claim: str, evidence: Sequence[str], encoder: TextEncoder) -> np.ndarray:
    """The feature vector (FEATURE_NAMES order) of one claim against its evidence texts."""
    evidence = [text for text in evidence if text.strip()] or [""]
    verdict = judge_claim(claim, evidence)
    sentences = feature_sentences(evidence) or list(evidence)
    aligned = align(claim, sentences, encoder)
    joined = " ".join(evidence)
    vectors = encoder.encode([claim, joined, negated(claim), aligned.sentence])
    claim_terms = terms_of(claim)
    everywhere = terms_of(joined)
    claim_unit, sentence_unit = (
        clause_unit(normalise_text(claim)),
        clause_unit(normalise_text(aligned.sentence)),
    )
    mine, theirs = _classes(claim), _classes(aligned.sentence)
    opposed = [
        float(
            (mine[a] and theirs[b] and not theirs[a]) or (mine[b] and theirs[a] and not theirs[b])
        )
        for a, b in _OPPOSED
    ]
    shared = [float(mine[a] and theirs[a]) for a, _ in _OPPOSED]
    clause = best_clause(claim, sentences, encoder)[0]
    aligned_values = alignment_features(claim, sentences, aligned.sentence, encoder)
    values = [
        float(verdict.label == "supported"),
        float(verdict.label == "contradicted"),
        *(float(marker in verdict.reason) for _, marker in _REASONS),
        aligned.cosine,
        round(float(vectors[0] @ vectors[1]), 4),
        aligned.overlap,
        _coverage(claim_terms, everywhere),
        min(len(claim_terms - everywhere), 6) / 6,
        *_soft_coverage(claim, joined, encoder),
        min(len(claim_unit.quantities), 3) / 3,
        float(claim_unit.negations % 2 != sentence_unit.negations % 2),
        float(claim_unit.negations % 2),
        round(float(vectors[2] @ vectors[3]) - aligned.cosine, 4),
        *_other_sentences(claim, sentences, aligned, encoder),
        *_quantity_features(claim, evidence),
        *opposed,
        *shared,
        *aligned_values,
        *bound_features(claim, evidence),
        *coverage_features(claim, evidence, clause, encoder),
        *subject_features(claim, clause, aligned_values[_CLAUSE_OPPOSED]),
        *item_features(claim, evidence, aligned.sentence, encoder, clause),
        *drift_features(claim, evidence, encoder),
    ]
    return np.asarray(values, dtype=np.float64)


def prefetch_pairs(pairs: Sequence[tuple[str, Sequence[str]]], encoder: TextEncoder) -> None:
    """Embed every text the pairs' features read in one batch (faster, order-independent)."""
    texts: list[str] = []
    for claim, evidence in pairs:
        joined = " ".join(evidence)
        sentences = feature_sentences(evidence)
        texts += [
            claim,
            joined,
            negated(claim),
            *sentences,
            *content_words(claim),
            *content_words(joined),
        ]
        texts += evidence_clauses(sentences)
    encoder.prefetch(texts)
