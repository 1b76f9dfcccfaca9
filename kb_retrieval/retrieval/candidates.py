"""Hybrid candidates: per-variant vector and BM25 legs, quota-then-merge (spec 5.2), capped union."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any

import numpy as np

from kb_retrieval.models import Category
from kb_retrieval.query.plan import QueryPlan
from kb_retrieval.retrieval import sql
from kb_retrieval.retrieval.config import RetrievalConfig
from kb_retrieval.retrieval.lexical_sql import (
    any_term_query,
    lexical_statement,
    split_rows,
    term_stats,
)
from kb_retrieval.retrieval.vector_index import index_name


@dataclass(frozen=True)
class VersionInfo:
    doc_version_id: str
    doc_id: str
    title: str
    category: Category
    priority: int
    effective_date: date | None
    last_reviewed_at: date | None
    supersedes_doc_version_id: str | None
    superseded: bool


@dataclass
class Candidate:
    """One chunk in the candidate set, with every signal ranking needs."""

    chunk_pk: int
    version: VersionInfo
    chunk_id: str
    chunk_index: int
    section_title: str | None
    page_start: int | None
    page_end: int | None
    source_locator: str
    token_count: int
    text: str
    policy_likeness_hint: str
    term_count: int
    term_freqs: dict[str, int]
    sims: list[float] = field(default_factory=list)
    sentence_sims: list[float] = field(default_factory=list)
    features: dict[str, float] = field(default_factory=dict)
    seen_in_queries: set[str] = field(default_factory=set)
    lexical_top1: bool = False
    vector: float = 0.0
    coverage: float = 0.0
    passage: float = 0.0
    bm25: float = 0.0
    # (coverage, BM25) of the best entry a usable FAQ chunk's confidence was held to
    # (scoring.faq_entry_capped); None otherwise.
    answer_lexical: tuple[float, float] | None = None
    confidence: float = 0.0
    relevance: float = 0.0
    rank_score: float = 0.0
    stale: bool = False
    trip_match: bool = False

    @property
    def key(self) -> tuple[str, str]:
        return (self.version.doc_version_id, self.chunk_id)


@dataclass(frozen=True)
class PipelineKey:
    """A tenant and the pipeline (parser, chunker, embedding model) whose index is searched."""

    tenant_id: str
    parser_version: str
    chunker_version: str
    embedding_model_id: str

    def params(self) -> dict[str, Any]:
        return {
            "tenant_id": self.tenant_id,
            "parser_version": self.parser_version,
            "chunker_version": self.chunker_version,
            "embedding_model_id": self.embedding_model_id,
        }


@dataclass(frozen=True, kw_only=True)
class Scope(PipelineKey):
    """What one retrieval may see: tenant, pipeline versions, and the versions eligible as of
    `as_of` (superseded ones too in audit mode), decided in PostgreSQL by `build_eligibility`."""

    as_of: date
    audit: bool = False
    all_windows: bool = True

    def params(self) -> dict[str, Any]:
        return {
            **super().params(),
            "as_of": self.as_of,
            "audit": self.audit,
            "all_windows": self.all_windows,
        }


def load_versions(conn: Any, params: dict[str, Any], *, audit: bool) -> dict[str, VersionInfo]:
    """Eligible versions; superseded ones only in audit mode (and then marked). The reference
    definition of eligibility (tests, evaluation runs); the PostgreSQL path's statements join
    `build_eligibility` instead of sending these ids."""
    out = {}
    for row in conn.execute(sql.ELIGIBLE_VERSIONS, params):
        info = VersionInfo(
            row[0], row[1], row[2], Category(row[3]), row[4], row[5], row[6], row[7], row[8]
        )
        if audit or not info.superseded:
            out[info.doc_version_id] = info
    return out


def _vector_statement(
    conn: Any, scope: Scope, vectors: np.ndarray, config: RetrievalConfig
) -> tuple[str, dict[str, Any]]:
    """Exact scan while the eligible versions hold at most `exact_scan_max_vectors` windows, else
    an index scan (the tenant's IVFFlat index if it has one, else the global HNSW index)."""
    params = {**scope.params(), "vectors": list(vectors), "k": config.k_vector}
    if conn.execute(sql.VECTOR_COUNT_BUILDS, params).fetchone()[0] <= config.exact_scan_max_vectors:
        return sql.VECTOR_EXACT, params
    params["k_windows"] = config.k_vector * config.hnsw_window_overfetch
    if conn.execute(sql.INDEX_OPTIONS, (index_name(scope.tenant_id),)).fetchone() is not None:
        conn.execute(sql.SET_IVFFLAT, (str(sql.IVFFLAT_PROBES),))
        return sql.VECTOR_TENANT_INDEX, params
    conn.execute(sql.SET_HNSW, (str(config.hnsw_ef_search),))
    return sql.VECTOR_HNSW, params


def _lexical_params(
    scope: Scope, variant_terms: Sequence[Sequence[str]], config: RetrievalConfig
) -> dict[str, Any]:
    vidx, terms = [], []
    for index, words in enumerate(variant_terms, start=1):
        for term in sorted(set(words)):
            vidx.append(index)
            terms.append(term)
    return {
        **scope.params(),
        "vidx": vidx,
        "terms": terms,
        "any_term": any_term_query(terms),
        "k": config.k_lexical,
        "k1": config.bm25_k1,
        "b": config.bm25_b,
    }


def vector_leg(
    conn: Any, scope: Scope, vectors: np.ndarray, config: RetrievalConfig
) -> list[tuple[int, int, float]]:
    """(variant index from 1, chunk_pk, cosine) of the top K_v chunks per variant."""
    statement, params = _vector_statement(conn, scope, vectors, config)
    return conn.execute(statement, params).fetchall()


def lexical_leg(
    conn: Any, scope: Scope, variant_terms: Sequence[Sequence[str]], config: RetrievalConfig
) -> list[tuple[int, int, float]]:
    """(variant index from 1, chunk_pk, BM25) of the top K_l chunks per variant."""
    params = _lexical_params(scope, variant_terms, config)
    if not params["terms"]:
        return []
    lexical = lexical_statement(conn, params)
    return split_rows(conn.execute(lexical.statement, lexical.params).fetchall())[0]


Hits = list[tuple[int, int, float]]


def search_legs(
    conn: Any,
    scope: Scope,
    vectors: np.ndarray,
    variant_terms: Sequence[Sequence[str]],
    config: RetrievalConfig,
) -> tuple[Hits, Hits, tuple[dict[str, float], float]]:
    """Both legs for every variant, sent together in one pipelined round trip, and what
    `term_idf` returns for every variant's terms: from the lexical statement's df when it reads
    the postings, else from `term_idf`'s own statements."""
    statement, params = _vector_statement(conn, scope, vectors, config)
    lexical_params = _lexical_params(scope, variant_terms, config)
    lexical = lexical_statement(conn, lexical_params) if lexical_params["terms"] else None
    with conn.pipeline():
        vector_cursor = conn.execute(statement, params)
        lexical_cursor = (
            conn.execute(lexical.statement, lexical.params) if lexical is not None else None
        )
        vector_rows = vector_cursor.fetchall()
        lexical_rows = lexical_cursor.fetchall() if lexical_cursor is not None else []
    lexical_hits, df = split_rows(lexical_rows)
    terms = sorted(set(lexical_params["terms"]))
    if lexical is None or lexical.stats is None:
        return vector_rows, lexical_hits, term_idf(conn, scope, terms)
    n, avgdl = lexical.stats
    return vector_rows, lexical_hits, (_idf(n, [(t, df.get(t, 0)) for t in terms]), avgdl)


def merge_quota(
    plan: QueryPlan,
    vector_hits: list[tuple[int, int, float]],
    lexical_hits: list[tuple[int, int, float]],
    config: RetrievalConfig,
) -> tuple[list[int], dict[int, set[str]], int | None]:
    """Quota then merge: the direct variant keeps all its hits, others their quota; capped union.

    Returns the candidate chunk ids in merge order, where each was seen, and the lexical top-1
    of the direct query (for the keyword top-1 override of spec 6.4).
    """
    seen: dict[int, set[str]] = {}
    best: dict[int, float] = {}
    kinds = [v.kind for v in plan.variants]
    for leg, hits, quota in (
        ("vector", vector_hits, config.expansion_quota_vector),
        ("lexical", lexical_hits, config.expansion_quota_lexical),
    ):
        per_variant: dict[int, list[tuple[float, int]]] = {}
        for vidx, pk, score in hits:
            per_variant.setdefault(vidx, []).append((score, pk))
        for vidx, rows in sorted(per_variant.items()):
            rows.sort(key=lambda r: (-r[0], r[1]))
            keep = rows if vidx == 1 else rows[:quota]
            for rank, (_score, pk) in enumerate(keep):
                seen.setdefault(pk, set()).add(f"{kinds[vidx - 1]}:{leg}")
                reciprocal = 1.0 / (60 + rank) * plan.variants[vidx - 1].weight
                best[pk] = best.get(pk, 0.0) + reciprocal
    ordered = sorted(best, key=lambda pk: (-best[pk], pk))[: config.candidate_cap]
    direct_lexical = sorted((r for r in lexical_hits if r[0] == 1), key=lambda r: (-r[2], r[1]))
    top1 = direct_lexical[0][1] if direct_lexical else None
    if top1 is not None and top1 not in ordered:
        ordered = [*ordered[: config.candidate_cap - 1], top1]
    return ordered, {pk: seen[pk] for pk in ordered}, top1


def fetch_candidates(
    conn: Any, scope: Scope, ids: list[int], vectors: np.ndarray
) -> dict[int, Candidate]:
    """The candidates' rows with each one's best-window cosine per variant and their versions
    (PostgreSQL path); chunks of versions not eligible in `scope` are left out."""
    params = {**scope.params(), "ids": ids, "vectors": list(vectors)}
    out = {}
    versions: dict[str, VersionInfo] = {}
    for row in conn.execute(sql.CANDIDATE_DETAILS, params):
        version = versions.get(row[1])
        if version is None:
            version = VersionInfo(
                row[1], row[14], row[15], Category(row[16]), *row[17:21], bool(row[21])
            )
            versions[row[1]] = version
        out[row[0]] = candidate_from_row(row, version)
    return out


def candidate_from_row(row: Sequence[Any], version: VersionInfo) -> Candidate:
    """A Candidate from a CANDIDATE_DETAILS row (term_freqs parsed, sims in column 13) or a
    snapshot's SNAPSHOT_CHUNKS row (term_freqs parsed or JSON text, no sims: the snapshot
    fills them)."""
    freqs = row[12]
    sims = row[13] if len(row) > 13 else None
    return Candidate(
        chunk_pk=row[0],
        version=version,
        chunk_id=row[2],
        chunk_index=row[3],
        section_title=row[4],
        page_start=row[5],
        page_end=row[6],
        source_locator=row[7],
        token_count=row[8],
        text=row[9],
        policy_likeness_hint=row[10],
        term_count=row[11],
        term_freqs=json.loads(freqs) if isinstance(freqs, str) else freqs,
        sims=[float(s) for s in (sims or [])],
    )


def term_idf(conn: Any, scope: Scope, terms: Sequence[str]) -> tuple[dict[str, float], float]:
    """BM25 idf of each query term over the eligible chunks, and their mean length."""
    n, avgdl, rows = term_stats(conn, scope.params(), terms)
    return _idf(n, sorted(rows)), float(avgdl)


def _idf(n: float, df: Sequence[tuple[str, int]]) -> dict[str, float]:
    """BM25 idf of each (term, df) over `n` eligible chunks."""
    return {term: math.log(1 + (n - count + 0.5) / (count + 0.5)) for term, count in df}
