"""`Retriever.retrieve`: guest email in, evidence pack and verdict out (one call for every user)."""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date
from functools import lru_cache
from typing import Any

from psycopg.types.json import Jsonb

from kb_retrieval.db.connection import Database
from kb_retrieval.embedding import Embedder
from kb_retrieval.models import Outcome, PipelineVersions
from kb_retrieval.query.plan import QueryPlan, build_query_plan
from kb_retrieval.query.trips import known_trip_entities
from kb_retrieval.retrieval import candidates as legs
from kb_retrieval.retrieval import snapshot_sentences, sql
from kb_retrieval.retrieval.cache import TTLCache
from kb_retrieval.retrieval.config import RetrievalConfig
from kb_retrieval.retrieval.near_answer import (
    NearAnswer,
    admit_near_answer,
    nearest_sentence,
    question_texts,
    readable,
)
from kb_retrieval.retrieval.pack import build_pack
from kb_retrieval.retrieval.pool_features import set_pool_features
from kb_retrieval.retrieval.rerank import Reranker, maybe_rerank
from kb_retrieval.retrieval.scoring import is_stale, score_pool, vector_feature
from kb_retrieval.retrieval.selection import select_pack
from kb_retrieval.retrieval.sentence_vectors import (
    SentenceVectorCache,
    best_sentence_sims,
    fetch_sentence_vectors,
    nearest_stored_sentences,
)
from kb_retrieval.retrieval.snapshot import SnapshotKey, TenantSnapshot
from kb_retrieval.retrieval.snapshot_store import SNAPSHOTS, read_generation
from kb_retrieval.retrieval.verdict import admit_conflicting, decide, review_near_answer
from kb_retrieval.text.analyzer import analyze, canonicalize_dates, find_dates

INSERT_AUDIT = """
INSERT INTO retrieval_audit (tenant_id, config_version, as_of, query_hash, email_text, outcome,
    reason_codes, flags, vector_max, keyword_max, confidence_top, candidate_count, pack_size,
    floors, used_rerank, cache_hit, timings_ms)
VALUES (%(tenant_id)s, %(config_version)s, %(as_of)s, %(query_hash)s, %(email_text)s, %(outcome)s,
    %(reason_codes)s, %(flags)s, %(vector_max)s, %(keyword_max)s, %(confidence_top)s,
    %(candidate_count)s, %(pack_size)s, %(floors)s, %(used_rerank)s, %(cache_hit)s, %(timings_ms)s)
"""


@dataclass
class SearchOutput:
    """Merged candidates (in merge order) with their rows and the direct query's term statistics."""

    order: list[int] = field(default_factory=list)
    seen: dict[int, set[str]] = field(default_factory=dict)
    top1: int | None = None
    found: dict[int, legs.Candidate] = field(default_factory=dict)
    idf: dict[str, float] = field(default_factory=dict)
    avgdl: float = 1.0
    sentences: dict[int, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class SearchRequest:
    """What both candidate paths (in-memory snapshot, PostgreSQL) need for one retrieval."""

    plan: QueryPlan
    base: dict[str, Any]
    vectors: Any
    variant_terms: list[list[str]]
    audit_mode: bool
    all_windows: bool


@dataclass
class RetrievalResult:
    pack: dict[str, Any]
    candidates: list[legs.Candidate] = field(default_factory=list)
    plan: QueryPlan | None = None
    timings_ms: dict[str, float] = field(default_factory=dict)
    cache_hit: bool = False
    floors: dict[str, int] = field(default_factory=dict)
    used_rerank: bool = False


class Retriever:
    """Tenant-scoped hybrid retrieval over the index built by the ingestion pipeline."""

    def __init__(
        self,
        db: Database,
        embedder: Embedder,
        versions: PipelineVersions,
        config: RetrievalConfig | None = None,
        reranker: Reranker | None = None,
        audit: bool = True,
    ) -> None:
        self.db = db
        self.embedder = embedder
        self.versions = versions
        self.config = config or RetrievalConfig()
        self.reranker = reranker
        self.audit = audit
        self.cache: TTLCache[RetrievalResult] = TTLCache(self.config.cache_ttl_seconds)
        self.sentences = SentenceVectorCache(embedder)

    def retrieve(
        self,
        tenant_id: str,
        email: str | dict[str, Any],
        *,
        as_of: date,
        trip_context: dict[str, Any] | None = None,
        sensitivity: Sequence[str] | None = None,
        audit_mode: bool = False,
        all_windows: bool = True,
    ) -> RetrievalResult:
        started = time.perf_counter()
        timings: dict[str, float] = {}
        key = SnapshotKey(
            tenant_id,
            self.versions.parser_version,
            self.versions.chunker_version,
            self.versions.embedding_model_id,
        )
        with self.db.tenant(tenant_id) as conn:
            generation = read_generation(conn, tenant_id)
            snapshot = SNAPSHOTS.get(
                conn,
                self.db.url,
                key,
                generation,
                max_vectors=self.config.in_memory_max_vectors,
                max_bytes=self.config.snapshot_cache_mb * 1024**2,
            )
            if snapshot is not None:
                # An older snapshot may be served while another thread loads the new one.
                generation = snapshot.generation
                titles = snapshot.trip_titles
                if self.config.sentence_features:
                    snapshot_sentences.ensure_loaded(conn, snapshot)
            else:
                rows = conn.execute(sql.TRIP_TITLES, {"tenant_id": tenant_id})
                titles = tuple(row[0] for row in rows)
        plan = build_query_plan(
            email,
            sensitivity=sensitivity,
            trip_context=trip_context,
            known_entities=known_trip_entities(titles),
            min_content_tokens=self.config.min_content_tokens,
            follow_up_max_terms=self.config.follow_up_max_terms,
        )
        timings["plan"] = _ms(started)
        cache_key = json.dumps(
            [
                tenant_id,
                str(generation),
                plan.normalized_text,
                [v.text for v in plan.variants],
                as_of.isoformat(),
                list(plan.sensitivity),
                trip_context,
                audit_mode,
                all_windows,
                self.config.config_version,
            ],
            sort_keys=True,
            default=str,
        )
        cached = self.cache.get(cache_key)
        if cached is not None:
            self._audit(tenant_id, email, as_of, cached, True)
            return RetrievalResult(
                cached.pack,
                cached.candidates,
                plan,
                {"total": _ms(started)},
                True,
                cached.floors,
                cached.used_rerank,
            )
        if not plan.quality_ok:
            result = self._finish(
                tenant_id, plan, [], [], as_of, audit_mode, trip_context, timings, started
            )
        else:
            result = self._search(
                tenant_id,
                plan,
                as_of,
                trip_context,
                audit_mode,
                all_windows,
                timings,
                started,
                snapshot,
            )
        self.cache.put(cache_key, result)
        self._audit(tenant_id, email, as_of, result, False)
        return result

    def _search(
        self,
        tenant_id: str,
        plan: QueryPlan,
        as_of: date,
        trip_context: dict[str, Any] | None,
        audit_mode: bool,
        all_windows: bool,
        timings: dict[str, float],
        started: float,
        snapshot: TenantSnapshot | None = None,
    ) -> RetrievalResult:
        t0 = time.perf_counter()
        vectors = self.embedder.embed_query([v.text for v in plan.variants])
        timings["embed"] = _ms(t0)
        t0 = time.perf_counter()
        variant_terms = [analyze(v.text) for v in plan.variants]
        base = {
            "tenant_id": tenant_id,
            "parser_version": self.versions.parser_version,
            "chunker_version": self.versions.chunker_version,
            "embedding_model_id": self.versions.embedding_model_id,
            "as_of": as_of,
        }
        request = SearchRequest(plan, base, vectors, variant_terms, audit_mode, all_windows)
        if snapshot is not None:
            out = self._search_snapshot(snapshot, request)
        else:
            out = self._search_database(request)
        timings["database"] = _ms(t0)
        t0 = time.perf_counter()
        dates = set(plan.dates)
        if trip_context and trip_context.get("trip_date"):
            dates |= set(analyze_dates(str(trip_context["trip_date"])))
        pool = []
        for pk in out.order:
            cand = out.found.get(pk)
            if cand is None:
                continue
            cand.seen_in_queries = out.seen.get(pk, set())
            cand.lexical_top1 = pk == out.top1
            cand.vector = vector_feature(cand.sims)
            cand.stale = is_stale(cand.version.last_reviewed_at, as_of, self.config)
            cand.trip_match = bool(dates) and _mentions_date(cand, dates)
            if self.config.sentence_features:
                stored = out.sentences.get(pk)
                sentences = stored if stored is not None else self.sentences.vectors(cand.text)
                cand.sentence_sims = best_sentence_sims(sentences, vectors)
            pool.append(cand)
        set_pool_features(pool, plan, variant_terms, out.idf, out.avgdl, self.config)
        score_pool(
            pool,
            variant_terms[0],
            out.idf,
            as_of,
            self.config,
            policy_like=plan.policy_like,
            intents=plan.intents,
            avgdl=out.avgdl,
        )
        pool, used_rerank = maybe_rerank(self.reranker, plan, pool, self.config)
        pool.sort(key=lambda c: (-c.rank_score, c.key))
        timings["ranking"] = _ms(t0)
        result = self._finish(
            tenant_id, plan, pool, pool, as_of, audit_mode, trip_context, timings, started
        )
        result.used_rerank = used_rerank
        return result

    def _search_snapshot(self, snapshot: TenantSnapshot, request: SearchRequest) -> SearchOutput:
        """Both legs and the candidates' rows in memory: no round trip."""
        cfg = self.config
        versions, mask = snapshot.scope(request.base["as_of"], audit=request.audit_mode)
        if not versions:
            return SearchOutput()
        vector_hits = snapshot.vector_leg(
            mask, request.vectors, cfg.k_vector, all_windows=request.all_windows
        )
        lexical_hits, idf, avgdl = snapshot.lexical_search(
            mask, request.variant_terms, cfg.k_lexical, cfg.bm25_k1, cfg.bm25_b
        )
        order, seen, top1 = legs.merge_quota(request.plan, vector_hits, lexical_hits, cfg)
        if not order:
            return SearchOutput(order, seen, top1)
        found = snapshot.candidates(order, versions)
        sims = snapshot.candidate_sims(
            list(found), request.vectors, all_windows=request.all_windows
        )
        for pk, cand in found.items():
            cand.sims = sims.get(pk, [])
        # The leg's idf covers every variant's terms (`term_idf(mask, _all_terms(...))`).
        idf, avgdl = (idf, avgdl) if found else ({}, 1.0)
        sentences = (
            snapshot_sentences.loaded(snapshot).lookup(found)
            if self.config.sentence_features
            else {}
        )
        return SearchOutput(order, seen, top1, found, idf, avgdl, sentences)

    def _search_database(self, request: SearchRequest) -> SearchOutput:
        """Both legs in PostgreSQL (tenants above `in_memory_max_vectors`)."""
        with self.db.tenant(request.base["tenant_id"]) as conn:
            # Plan each statement for its values (tenant, dates, pipeline): the planner then
            # uses the tenant's partial index and the postings' btree (sql.py).
            conn.execute(sql.FORCE_CUSTOM_PLANS)
            scope = legs.Scope(
                tenant_id=request.base["tenant_id"],
                parser_version=self.versions.parser_version,
                chunker_version=self.versions.chunker_version,
                embedding_model_id=self.versions.embedding_model_id,
                as_of=request.base["as_of"],
                audit=request.audit_mode,
                all_windows=request.all_windows,
            )
            vector_hits, lexical_hits, (idf, avgdl) = legs.search_legs(
                conn, scope, request.vectors, request.variant_terms, self.config
            )
            order, seen, top1 = legs.merge_quota(
                request.plan, vector_hits, lexical_hits, self.config
            )
            if not order:
                return SearchOutput(order, seen, top1)
            found = legs.fetch_candidates(conn, scope, order, request.vectors)
            idf, avgdl = (idf, avgdl) if found else ({}, 1.0)
            sentences = (
                fetch_sentence_vectors(conn, scope.params(), list(found))
                if self.config.sentence_features
                else {}
            )
        return SearchOutput(order, seen, top1, found, idf, avgdl, sentences)

    def _finish(
        self,
        tenant_id: str,
        plan: QueryPlan,
        pool: list[legs.Candidate],
        candidates: list[legs.Candidate],
        as_of: date,
        audit_mode: bool,
        trip_context: dict[str, Any] | None,
        timings: dict[str, float],
        started: float,
    ) -> RetrievalResult:
        evidence, floors = select_pack(pool, self.config, tiered=plan.policy_like)
        chosen = {id(c) for c in evidence}
        outside = [c for c in pool if id(c) not in chosen]
        verdict = decide(
            plan, evidence, self.config, has_trip_context=bool(trip_context), outside=outside
        )
        near = None
        if self.config.near_answer_review and verdict.outcome is Outcome.UNKNOWN and pool:
            # Read only when it can change the verdict: 16 % of the e-mails at 100k chunks,
            # about 11 ms each (docs/benchmarks.md, session 18).
            t0 = time.perf_counter()
            near = self._near_answer(tenant_id, plan, pool)
            timings["near_answer"] = _ms(t0)
            verdict = review_near_answer(verdict, near, self.config)
        evidence = admit_conflicting(evidence, outside, verdict, self.config.pack_max)
        if near is not None and verdict.outcome is Outcome.NEEDS_REVIEW:
            evidence = admit_near_answer(evidence, outside, near, self.config.pack_max)
        pack = build_pack(
            tenant_id,
            plan,
            verdict,
            evidence,
            candidates,
            config_version=self.config.config_version,
            as_of=as_of.isoformat(),
            audit_mode=audit_mode,
            low_relevance_line=self.config.score_floor,
            near_answer=near,
        )
        timings["total"] = _ms(started)
        return RetrievalResult(pack, candidates, plan, timings, floors=floors)

    def _near_answer(
        self, tenant_id: str, plan: QueryPlan, pool: Sequence[legs.Candidate]
    ) -> NearAnswer | None:
        """The candidates' sentence nearest the guest's question (near_answer.py), computed in
        PostgreSQL over their stored sentence vectors. A chunk without them (an index built
        before migration 0008, until `kb ingest` backfills it) is not read: embedding its
        sentences here would cost hundreds of milliseconds per e-mail (docs/benchmarks.md,
        session 18)."""
        candidates = [c for c in pool if readable(c)]
        questions = question_texts(plan.question_text)
        if not candidates or not questions:
            return None
        params = {
            "tenant_id": tenant_id,
            "embedding_model_id": self.versions.embedding_model_id,
            "chunker_version": self.versions.chunker_version,
        }
        queries = self.embedder.embed_query(questions)
        with self.db.tenant(tenant_id) as conn:
            nearest = nearest_stored_sentences(
                conn, params, [c.chunk_pk for c in candidates], queries
            )
        return nearest_sentence(candidates, nearest)

    def _audit(
        self, tenant_id: str, email: Any, as_of: date, result: RetrievalResult, cache_hit: bool
    ) -> None:
        if not self.audit:
            return
        pack = result.pack
        text = email if isinstance(email, str) else json.dumps(email, sort_keys=True)
        row = {
            "tenant_id": tenant_id,
            "config_version": pack["config_version"],
            "as_of": as_of,
            "query_hash": hashlib.sha256(text.encode()).hexdigest(),
            "email_text": text if self.config.audit_store_email else None,
            "outcome": pack["outcome"],
            "reason_codes": pack["reason_codes"],
            "flags": Jsonb(pack["flags"]),
            "vector_max": max((c.vector for c in result.candidates), default=None),
            "keyword_max": max((c.bm25 for c in result.candidates), default=None),
            "confidence_top": max((c.confidence for c in result.candidates), default=None),
            "candidate_count": len(result.candidates),
            "pack_size": len(pack["evidence"]),
            "floors": Jsonb(result.floors),
            "used_rerank": result.used_rerank,
            "cache_hit": cache_hit,
            "timings_ms": Jsonb(result.timings_ms),
        }
        with self.db.tenant(tenant_id) as conn:
            conn.execute(INSERT_AUDIT, row)


def _all_terms(variant_terms: Sequence[Sequence[str]]) -> list[str]:
    """Every variant's terms (idf for the per-variant features)."""
    return sorted({term for terms in variant_terms for term in terms})


def analyze_dates(text: str) -> list[str]:
    """Canonical forms ("jun 14") of the dates in `text`; ISO dates included."""
    return [match.canonical for match in find_dates(text)]


def _mentions_date(candidate: legs.Candidate, dates: set[str]) -> bool:
    """Whether the chunk or its document title names one of the dates ("jun 1" is not "jun 14")."""
    haystack = _date_haystack(candidate.version.title, candidate.text)
    return any(re.search(rf"(?<!\w){re.escape(d)}(?!\w)", haystack) for d in dates)


@lru_cache(maxsize=8192)
def _date_haystack(title: str, text: str) -> str:
    """Title and text with canonical dates (cached: date parsing was most of the ranking time)."""
    return canonicalize_dates(f"{title}\n{text}".casefold())


def _ms(start: float) -> float:
    return round((time.perf_counter() - start) * 1000, 2)
