"""Opportunistic rerank (spec 6.5) behind an adapter: a local cross-encoder, or off."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from kb_retrieval.query.plan import QueryPlan
from kb_retrieval.retrieval.candidates import Candidate
from kb_retrieval.retrieval.config import RetrievalConfig

RERANK_WEIGHT = 0.1


class Reranker(Protocol):
    def scores(self, query: str, texts: Sequence[str]) -> list[float]:
        """Relevance in [0, 1] of each text to the query."""
        ...


class CrossEncoderReranker:
    """A sentence-transformers CrossEncoder loaded from a local path (never downloaded)."""

    def __init__(self, model_path: str) -> None:
        from sentence_transformers import CrossEncoder

        self.model = CrossEncoder(model_path, device="cpu", local_files_only=True)

    def scores(self, query: str, texts: Sequence[str]) -> list[float]:
        import numpy as np

        raw = np.asarray(self.model.predict([(query, t) for t in texts]), dtype=float)
        return list(1 / (1 + np.exp(-raw)))


def reranker_from_config(config: RetrievalConfig) -> Reranker | None:
    if config.rerank_enabled and config.rerank_model_path:
        return CrossEncoderReranker(config.rerank_model_path)
    return None


def maybe_rerank(
    reranker: Reranker | None, plan: QueryPlan, pool: list[Candidate], config: RetrievalConfig
) -> tuple[list[Candidate], bool]:
    """Rerank the top window only when the best relevance is borderline (spec 6.5); order only."""
    if reranker is None or not pool or not plan.variants:
        return pool, False
    top = max(c.relevance for c in pool)
    if not (config.score_floor <= top < config.rerank_trigger_max):
        return pool, False
    window = sorted(pool, key=lambda c: (-c.rank_score, c.key))[: config.rerank_window]
    for cand, score in zip(
        window, reranker.scores(plan.variants[0].text, [c.text for c in window]), strict=True
    ):
        cand.rank_score += RERANK_WEIGHT * float(score)
    return pool, True
