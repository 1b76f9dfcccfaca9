"""Case-level answerability: the calibrated probability that the knowledge base answers the email.

The chunk model (`answerability.py`) says whether one chunk contains an answer; this model reads
the candidate set as a whole: the best candidate's chunk score and features, how strongly the
next candidates support it, and how much of the query the knowledge base never uses. It is a
logistic regression fitted on each case's best candidate against "the case has relevant items"
(`kb_eval/answerability_fit.py::fit_case_model`), so 0.65 keeps the seed's meaning: under it, no
chunk is likely to answer. Features form a named list (`CASE_FEATURES`); a new chunk feature
(e.g. a sentence cosine) joins by its name, weights for names it lacks count 0.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Protocol

from pydantic import BaseModel, ConfigDict

# Pool-level features computed here; every other name is read from the best candidate's features.
POOL_FEATURES: tuple[str, ...] = ("chunk_logit", "second", "support3")
CASE_FEATURES: tuple[str, ...] = (
    *POOL_FEATURES,
    "high_precedence",
    "safety_medical",
    "itinerary",
    "faq",
    "low_tier",
    "type_match",
    "type_miss",
    "key_terms_missing",
    "vector_best",
    "passage_best",
    "coverage_best",
    "bm25_best",
    "pool_absent_share",
)
SUPPORT = 3


class ChunkScorer(Protocol):
    def score(self, features: Mapping[str, float]) -> float: ...


def case_features(
    pool: Sequence[Mapping[str, float]], chunk_model: ChunkScorer, names: Sequence[str]
) -> dict[str, float]:
    """The named features of a candidate set (empty set: every feature 0).

    `chunk_logit` = the best candidate's chunk score (log-odds); `second` = the next candidate's
    chunk probability; `support3` = the sum of the next `SUPPORT` candidates' probabilities; the
    rest are the best candidate's own features.
    """
    if not pool:
        return dict.fromkeys(names, 0.0)
    scores = [chunk_model.score(f) for f in pool]
    best = max(range(len(pool)), key=lambda i: (scores[i], -i))
    others = sorted((_sigmoid(s) for i, s in enumerate(scores) if i != best), reverse=True)
    values = {
        "chunk_logit": scores[best],
        "second": others[0] if others else 0.0,
        "support3": math.fsum(others[:SUPPORT]),
    }
    return {n: values[n] if n in values else pool[best].get(n, 0.0) for n in names}


class CaseAnswerabilityModel(BaseModel):
    """q = sigmoid(bias + sum(weight[f] * case_feature[f]))."""

    model_config = ConfigDict(frozen=True)

    bias: float
    weights: dict[str, float]
    fitted_on: str = ""

    def probability(self, pool: Sequence[Mapping[str, float]], chunk_model: ChunkScorer) -> float:
        """Probability that some candidate of `pool` answers the email (0 without candidates:
        nothing can answer, and the fit never sees an empty set)."""
        if not pool:
            return 0.0
        features = case_features(pool, chunk_model, list(self.weights))
        z = self.bias + math.fsum(w * features[n] for n, w in self.weights.items())
        return _sigmoid(z)


def _sigmoid(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z))))
