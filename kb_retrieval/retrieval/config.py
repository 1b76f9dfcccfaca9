"""Every knob of retrieval (000 and 002) with its documented default; hashed into `config_version`."""

from __future__ import annotations

import hashlib
import json
import os

from pydantic import BaseModel, ConfigDict, Field

from kb_retrieval.retrieval.answerability import AnswerabilityModel, default_model

CONFIG_SCHEMA = "retrieval-v1"
ENV_PREFIX = "KB_RETRIEVAL_"


class ConfidenceModel(BaseModel):
    """A logistic model over absolute signals (see docs/retrieval.md section 3).

    p = sigmoid(bias + w_vector * best_cosine + w_coverage * query_idf_coverage
                + w_bm25 * bm25 / (bm25 + bm25_half) + w_passage * passage_coverage)
    """

    model_config = ConfigDict(frozen=True)

    bias: float
    w_vector: float
    w_coverage: float
    w_bm25: float
    w_passage: float = 0.0
    bm25_half: float = 8.0


# Fitted on the tune split of data/golden by
#   python -m kb_eval.fit_confidence data/golden/golden.jsonl --as-of 2026-11-15
# RELEVANCE: every candidate, soft labels (1 quote, 0.3 same answering version, 0 otherwise);
#   orders candidates and carries the floors of spec 6.4.
# CONFIDENCE (`--top-k 1 --label doc`): the best-ranked candidate of each tune case, label 1 for a
#   chunk of an answering document version: the probability that the pack's top chunk answers,
#   the quantity the 0.72 / 0.65 thresholds of spec 9.2 are compared with. How each was chosen
#   among the fitted variants, and when: docs/retrieval.md section 3.
RELEVANCE_MODEL = ConfidenceModel(
    bias=-5.3799, w_vector=3.4113, w_coverage=0.5968, w_bm25=4.7413, w_passage=1.6992
)
CONFIDENCE_MODEL = ConfidenceModel(bias=-4.4977, w_vector=0.0, w_coverage=3.2519, w_bm25=7.7434)


class RetrievalConfig(BaseModel):
    model_config = ConfigDict(frozen=True)

    k_vector: int = Field(24, description="K_v: vector candidates per query variant")
    k_lexical: int = Field(16, description="K_l: lexical (BM25) candidates per query variant")
    candidate_cap: int = Field(40, description="candidates kept after the union")
    expansion_quota_vector: int = Field(
        8, description="vector candidates kept from each non-direct variant"
    )
    expansion_quota_lexical: int = Field(
        6, description="lexical candidates kept from each non-direct variant"
    )
    pack_min: int = Field(
        4, description="a pack holds at least this many chunks when that many pass relevance_floor"
    )
    pack_max: int = 10
    pack_fill: int = Field(
        10,
        description="candidates passing relevance_floor fill the pack up to this size (those "
        "under score_floor marked `low_relevance`); never below pack_min",
    )
    typed_answer_logit: float = Field(
        1.5,
        description="log-odds added to the confidence of a chunk with a sentence that states "
        "the kind of value the question asks for and names what it asks about "
        "(typed_answer.py; docs/retrieval.md 7, sessions 14-15); 0: off",
    )
    dedicated_source_logit: float = Field(
        2.0,
        description="log-odds added to the confidence of a chunk whose category is the source "
        "written to answer the e-mail's intents: waiver form, safety/medical policy, packing "
        "list (dedicated_source.py; docs/retrieval.md 7, session 15); 0: off",
    )
    low_confidence_threshold: float = 0.72
    unknown_threshold: float = 0.65
    score_floor: float = Field(
        0.08,
        description="spec 6.4 floor, on the calibrated relevance scale (0.45 was min-max "
        "scale): chunks under it are kept, marked `low_relevance` (spec 7.5); 0.08 is chosen "
        "under leave-one-operator-out (`--nested score_floor=...`; docs/retrieval.md, session 17)",
    )
    relevance_floor: float = Field(
        0.005,
        description="spec 7 minimal relevance floor: candidates under it never enter a "
        "pack; a pack holds at least `pack_min` chunks whenever that many pass it",
    )
    vector_floor: float = Field(0.15, description="spec 6.4: cosine floor unless keyword top-1")
    vector_floor_keyword_coverage: float = Field(
        0.9, description="a keyword top-1 with at least this coverage is exempt from vector_floor"
    )
    keyword_top1_override: bool = True
    keyword_top1_min_coverage: float = Field(
        0.5, description="spec 6.4: k_norm >= 0.5 for the override"
    )
    stale_after_days: int = 180
    stale_penalty: float = 0.05
    priority_weight: float = 0.01
    priority_cap: int = 5
    review_recency_weight: float = 0.02
    effective_recency_weight: float = 0.01
    near_duplicate_jaccard: float = 0.6
    near_duplicate_penalty: float = 0.1
    mmr_lambda: float = 0.75
    max_per_document: int = 2
    per_document_drop: float = 0.15
    trip_match_boost: float = 0.08
    soft_signal_logit_scale: float = Field(
        8.0,
        description="> 0: the soft signals of spec 6.2 move the relevance's log-odds by this "
        "many per unit (a +0.08 trip match is x1.9 on the odds at any relevance); 0: they are "
        "added to the probability, which swamps relevance under 0.1 (docs/retrieval.md, "
        "session 12)",
    )
    ambiguity_margin: float = 0.08
    bm25_k1: float = 0.9
    bm25_b: float = 0.4
    in_memory_max_vectors: int = Field(
        500_000,
        description="a tenant with at most this many window vectors is searched in an in-memory "
        "snapshot (exact vectors + BM25, retrieval/snapshot.py); above it, in PostgreSQL",
    )
    snapshot_cache_mb: int = Field(2048, description="memory bound of the snapshot cache")
    exact_scan_max_vectors: int = Field(
        30_000,
        description="PostgreSQL path: exact scan up to this many eligible window vectors, else HNSW",
    )
    hnsw_ef_search: int = 200
    hnsw_window_overfetch: int = 4
    rerank_enabled: bool = False
    rerank_model_path: str = ""
    rerank_window: int = 20
    rerank_trigger_max: float = 0.60
    cache_ttl_seconds: float = 120.0
    audit_store_email: bool = False
    min_content_tokens: int = 3
    follow_up_max_terms: int = Field(
        8,
        description="a thread's latest message of at most this many content terms that names "
        "no trip or date is read with the earlier guest messages",
    )
    passage_window: int = Field(
        40, description="analyzed terms per passage for the passage-coverage feature"
    )
    relevance: ConfidenceModel = RELEVANCE_MODEL
    confidence: ConfidenceModel = CONFIDENCE_MODEL
    use_answerability: bool = Field(
        False,
        description="confidence from the learned answerability model (answerability.json); "
        "off: the session-3 CONFIDENCE_MODEL",
    )
    answerability: AnswerabilityModel = Field(default_factory=default_model)
    answerability_orders: bool = Field(
        True,
        description="relevance (ordering, floors) = the answerability model's chunk probability "
        "instead of RELEVANCE_MODEL",
    )
    answerability_review: bool = Field(
        True,
        description="no chunk usable by `confidence`, but the case-level answerability model "
        "finds the email likely answered (>= unknown_threshold) and it is sensitive or "
        "policy-like: NEEDS_REVIEW (LOW_CONFIDENCE) instead of UNKNOWN (docs/retrieval.md 7)",
    )
    learned_ranker: bool = Field(
        False,
        description="candidates ordered by the pairwise ranker's probability "
        "(answerability.json key `ranker`, ranker.py; docs/retrieval.md section 7, session 8)",
    )
    ranker_floors: bool = Field(
        False,
        description="with learned_ranker: the floors (pack membership) read the ranker's "
        "probability too (off: the chunk probability); the low-relevance line (the pack's "
        "marker, the verdict) reads the chunk probability either way",
    )
    faq_entry_confidence: bool = Field(
        True,
        description="an FAQ chunk of two or more questions at unknown_threshold or above is held "
        "to its best entry's lexical confidence (scoring.faq_entry_capped; docs/retrieval.md, "
        "session 17)",
    )
    sentence_features: bool = Field(
        False,
        description="best-sentence cosine features from the sentence vectors stored at "
        "ingestion (migration 0008; docs/retrieval.md section 7)",
    )
    near_answer_review: bool = Field(
        True,
        description="no chunk usable, but a candidate's stored sentence is as close to the "
        "guest's question as near_answer_threshold (cosine): NEEDS_REVIEW (LOW_CONFIDENCE) "
        "instead of UNKNOWN, never a draft (near_answer.py; docs/retrieval.md, session 18)",
    )
    near_answer_threshold: float = Field(
        0.64,
        ge=0.0,
        description="the cosine a candidate sentence needs to send an e-mail with no usable "
        "chunk to a person (chosen leaving one operator out: bench/near_answer.py)",
    )

    @property
    def config_version(self) -> str:
        payload = json.dumps(self.model_dump(), sort_keys=True)
        return f"{CONFIG_SCHEMA}+{hashlib.sha256(payload.encode()).hexdigest()[:12]}"

    @classmethod
    def from_env(cls) -> RetrievalConfig:
        """Defaults overridden by KB_RETRIEVAL_<FIELD> variables (e.g. KB_RETRIEVAL_K_VECTOR=32)."""
        overrides = {}
        for name in cls.model_fields:
            raw = os.environ.get(ENV_PREFIX + name.upper())
            if raw is not None and name not in ("confidence", "relevance", "answerability"):
                overrides[name] = raw
        return cls(**overrides)
