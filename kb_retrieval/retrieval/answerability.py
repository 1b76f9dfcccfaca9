"""Answerability: the calibrated probability that a candidate chunk answers the email.

Features are absolute (nothing normalised per query): cosines and lexical coverage for every
query variant, the answer-type match, the category's tier, how many variants found the chunk.
The model is a logistic regression (weights in `answerability.json`, fitted by
`python -m kb_eval.fit_answerability`, see docs/retrieval.md section 3).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from kb_retrieval.models import HIGH_PRECEDENCE, Category
from kb_retrieval.query.answer_type import answer_type_match, stated_kinds
from kb_retrieval.retrieval.case_answerability import CaseAnswerabilityModel
from kb_retrieval.retrieval.ranker import RankerModel

MODEL_PATH = Path(__file__).with_name("answerability.json")
BM25_HALF = 8.0

FEATURE_NAMES: tuple[str, ...] = (
    "vector_direct",
    "vector_best",
    "sentence_direct",
    "sentence_best",
    "coverage_direct",
    "coverage_best",
    "bm25_direct",
    "bm25_best",
    "passage_direct",
    "passage_best",
    "type_match",
    "type_miss",
    "high_precedence",
    "safety_medical",
    "itinerary",
    "faq",
    "low_tier",
    "seen_share",
    "lexical_top1",
    "pool_absent_share",
    "key_terms_missing",
    "vector_gap",
    "sentence_gap",
    "passage_gap",
    "bm25_gap",
)
# Gap features: how far a candidate is behind the best candidate of the same retrieval.
GAP_OF = {
    "vector_gap": "vector_best",
    "sentence_gap": "sentence_best",
    "passage_gap": "passage_best",
    "bm25_gap": "bm25_best",
}


class AnswerabilityModel(BaseModel):
    """p = sigmoid(bias + sum(weight[f] * feature[f])); unknown features count 0."""

    model_config = ConfigDict(frozen=True)

    bias: float
    weights: dict[str, float]
    calibration_bias: float = 0.0
    calibration_slope: float = 1.0
    fitted_on: str = ""
    case: CaseAnswerabilityModel | None = None
    ranker: RankerModel | None = None

    def score(self, features: Mapping[str, float]) -> float:
        """The linear score (log-odds that this chunk contains an answer)."""
        return self.bias + math.fsum(w * features.get(n, 0.0) for n, w in self.weights.items())

    def probability(self, features: Mapping[str, float]) -> float:
        """Probability that this chunk contains an answer (orders candidates, marks low relevance)."""
        return _sigmoid(self.score(features))

    def relevance(self, features: Mapping[str, float]) -> float:
        """The probability that orders candidates and carries the floors: the learned ranker's
        when the model has one (ranker.py), else the chunk probability."""
        if self.ranker is not None:
            return self.ranker.relevance(features)
        return self.probability(features)

    def confidence(self, features: Mapping[str, float]) -> float:
        """Probability that the email is answered when this chunk is the best evidence: the
        chunk score recalibrated on each case's best candidate; 0.65 / 0.72 are compared with it."""
        return _sigmoid(self.calibration_bias + self.calibration_slope * self.score(features))

    def case_probability(self, pool: Sequence[Mapping[str, float]]) -> float | None:
        """Probability that some candidate of `pool` answers the email (None: no case model)."""
        return self.case.probability(pool, self) if self.case is not None else None


def pack_confidences(confidences: Sequence[float], probabilities: Sequence[float]) -> list[float]:
    """The pack's `confidence_score` of each chunk (docs/retrieval.md section 7).

    The most confident chunk (the first of equals) keeps the verdict's confidence, the value the
    0.65 / 0.72 thresholds are compared with; every other chunk shows its own calibrated
    probability of containing an answer (`probabilities`: the chunk model), never above the top
    chunk's value, so the pack's maximum is still the verdict's top confidence.
    """
    if len(confidences) != len(probabilities):
        raise ValueError("one probability per confidence is needed")
    if not confidences:
        return []
    top = max(range(len(confidences)), key=lambda i: (confidences[i], -i))
    ceiling = confidences[top]
    return [
        value if i == top else min(probability, ceiling)
        for i, (value, probability) in enumerate(zip(confidences, probabilities, strict=True))
    ]


def _sigmoid(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z))))


@cache
def default_model() -> AnswerabilityModel:
    """The model stored in the repository (kb_retrieval/retrieval/answerability.json)."""
    return AnswerabilityModel.model_validate(json.loads(MODEL_PATH.read_text(encoding="utf-8")))


def saturate(bm25: float) -> float:
    return bm25 / (bm25 + BM25_HALF) if bm25 > 0 else 0.0


def category_features(category: Category) -> dict[str, float]:
    return {
        "high_precedence": float(category in HIGH_PRECEDENCE),
        "safety_medical": float(category is Category.SAFETY_MEDICAL),
        "itinerary": float(category is Category.TRIP_ITINERARY),
        "faq": float(category is Category.FAQ),
        "low_tier": float(
            category in (Category.PACKING_LIST, Category.OPERATIONS_INTERNAL, Category.MARKETING)
        ),
    }


def answer_features(
    *,
    sims: Sequence[float],
    sentence_sims: Sequence[float],
    coverages: Sequence[float],
    bm25s: Sequence[float],
    passages: Sequence[float],
    asked: frozenset[str],
    text: str,
    category: Category,
    seen: int,
    variants: int,
    lexical_top1: bool,
) -> dict[str, float]:
    """The feature vector of one candidate; index 0 of each sequence is the direct variant."""
    match = answer_type_match(asked, stated_kinds(text))
    features = {
        "vector_direct": sims[0] if sims else 0.0,
        "vector_best": max(sims, default=0.0),
        "sentence_direct": sentence_sims[0] if sentence_sims else 0.0,
        "sentence_best": max(sentence_sims, default=0.0),
        "coverage_direct": coverages[0] if coverages else 0.0,
        "coverage_best": max(coverages, default=0.0),
        "bm25_direct": saturate(bm25s[0]) if bm25s else 0.0,
        "bm25_best": saturate(max(bm25s, default=0.0)),
        "passage_direct": passages[0] if passages else 0.0,
        "passage_best": max(passages, default=0.0),
        "type_match": float(match == 1.0),
        "type_miss": float(match == 0.0),
        "seen_share": seen / max(variants, 1),
        "lexical_top1": float(lexical_top1),
    }
    features.update(category_features(category))
    return features


def add_gap_features(features: Sequence[dict[str, float]]) -> None:
    """Each candidate's distance to the best candidate of its retrieval (0 for the best).

    Not a normalisation: the absolute features stay, so a best candidate that matches weakly
    still scores low; the gaps tell the model which candidate is the one answering.
    """
    for gap, source in GAP_OF.items():
        best = max((f[source] for f in features), default=0.0)
        for f in features:
            f[gap] = best - f[source]


KEY_TERMS = 2


def add_query_term_features(
    features: Sequence[dict[str, float]],
    chunk_terms: Sequence[Mapping[str, int]],
    direct_terms: Sequence[str],
    idf: Mapping[str, float],
) -> None:
    """Two features about the direct query's rarest words.

    `pool_absent_share`: the share of the query's idf mass in words no candidate contains (the
    lexical leg fetches the chunks holding rare words, so these are words the knowledge base
    does not use: the same value for every candidate). `key_terms_missing`: the share of the
    query's `KEY_TERMS` rarest words found among the candidates that this chunk lacks.
    """
    unique = sorted(set(direct_terms))
    total = math.fsum(idf.get(t, 0.0) for t in unique)
    present = {t for t in unique if any(t in terms for terms in chunk_terms)}
    absent = math.fsum(idf.get(t, 0.0) for t in unique if t not in present)
    key = sorted(present, key=lambda t: (-idf.get(t, 0.0), t))[:KEY_TERMS]
    for f, terms in zip(features, chunk_terms, strict=True):
        f["pool_absent_share"] = absent / total if total > 0 else 0.0
        f["key_terms_missing"] = sum(t not in terms for t in key) / len(key) if key else 0.0
