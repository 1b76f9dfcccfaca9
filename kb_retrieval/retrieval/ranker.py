"""The learned ranker: which candidate of one retrieval best answers the email (issue 12, session 8).

A linear score over the answerability features (`answerability.FEATURE_NAMES`) and a few more
that only matter for comparing candidates of one retrieval (`RANK_ONLY_FEATURES`), fitted
pairwise: every (quote-holding, other) candidate pair of a training case is one logistic row
on the difference of their features (`kb_eval/answerability_fit.py::fit_ranker`). Features
constant within a retrieval cancel in a difference, so the score orders candidates and says
nothing about the email; `relevance` maps it to a probability (Platt scaling on every training
candidate, with the pool's `pool_absent_share`), which carries the floors (pack membership) when
`ranker_floors` is set; the low-relevance line and the pack's display keep the chunk probability.
The ranker orders candidates within a tier only: tiers, eligibility and must-not-cite stay with
`selection.py` and `candidates.py`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from kb_retrieval.text.analyzer import analyze

if TYPE_CHECKING:
    from kb_retrieval.retrieval.candidates import Candidate

RANK_ONLY_FEATURES: tuple[str, ...] = (
    "policy_high",
    "policy_itinerary",
    "policy_faq",
    "policy_low_tier",
    "title_coverage",
    "log_length",
    "first_chunk",
    "document_vector_gap",
)
LENGTH_SCALE = 6.0


class RankerModel(BaseModel):
    """score = sum(weight[f] * feature[f]); relevance = sigmoid(bias + slope * score +
    absent_weight * pool_absent_share)."""

    model_config = ConfigDict(frozen=True)

    weights: dict[str, float]
    bias: float = 0.0
    slope: float = 1.0
    absent_weight: float = 0.0
    fitted_on: str = ""

    def score(self, features: Mapping[str, float]) -> float:
        """The ranking score (only differences within one retrieval mean anything)."""
        return math.fsum(w * features.get(n, 0.0) for n, w in self.weights.items())

    def relevance(self, features: Mapping[str, float]) -> float:
        """Probability that the chunk contains an answer, increasing in `score` within a retrieval."""
        z = self.bias + self.slope * self.score(features)
        z += self.absent_weight * features.get("pool_absent_share", 0.0)
        return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z))))


@lru_cache(maxsize=8192)
def title_terms(section_title: str, document_title: str) -> frozenset[str]:
    """Analyzed terms of a chunk's section and document titles (cached: titles repeat)."""
    return frozenset(analyze(f"{section_title} {document_title}"))


def add_rank_features(
    pool: Sequence[Candidate],
    *,
    policy_like: bool,
    direct_terms: Sequence[str],
    idf: Mapping[str, float],
) -> None:
    """Set `RANK_ONLY_FEATURES` in each candidate's `features` (after `answer_features`).

    `policy_*`: the category indicators when the email is policy-like (a policy question is
    answered by policy text, a logistics one by an itinerary or FAQ); `title_coverage`: the share
    of the direct query's idf mass in the section and document titles ("Deposit and balance");
    `log_length`: log(1 + analyzed terms) / 6; `first_chunk`: the document's first chunk (often an
    overview); `document_vector_gap`: how far the chunk's best cosine is behind the best chunk of
    its own document version (a long terms document states the answer in one section).
    """
    unique = sorted(set(direct_terms))
    total = math.fsum(idf.get(t, 0.0) for t in unique)
    best_in_version: dict[str, float] = {}
    for cand in pool:
        version_id = cand.version.doc_version_id
        vector = cand.features.get("vector_best", 0.0)
        best_in_version[version_id] = max(best_in_version.get(version_id, vector), vector)
    policy = float(policy_like)
    for cand in pool:
        f = cand.features
        titles = title_terms(cand.section_title or "", cand.version.title)
        found = math.fsum(idf.get(t, 0.0) for t in unique if t in titles)
        f["policy_high"] = policy * f.get("high_precedence", 0.0)
        f["policy_itinerary"] = policy * f.get("itinerary", 0.0)
        f["policy_faq"] = policy * f.get("faq", 0.0)
        f["policy_low_tier"] = policy * f.get("low_tier", 0.0)
        f["title_coverage"] = found / total if total > 0 else 0.0
        f["log_length"] = math.log1p(cand.term_count) / LENGTH_SCALE
        f["first_chunk"] = float(cand.chunk_index == 0)
        f["document_vector_gap"] = best_in_version[cand.version.doc_version_id] - f.get(
            "vector_best", 0.0
        )
