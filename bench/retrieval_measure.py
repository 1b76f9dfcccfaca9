"""Retrieval benchmark measurements: snapshot load, each step alone, query embedding threads."""

from __future__ import annotations

import copy
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from typing import Any

import numpy as np

from bench.common import GOLDEN, summary
from bench.retrieval_scale import MEASURED

AS_OF = date(2026, 11, 15)
HUGE = 10**9


def golden_queries(limit: int) -> list[dict[str, Any]]:
    """The first `limit` golden-set e-mails of the measured tenant."""
    rows = [json.loads(line) for line in GOLDEN.read_text(encoding="utf-8").splitlines() if line]
    return [r for r in rows if r["tenant_id"] == MEASURED][:limit]


def with_timeout(url: str, seconds: float) -> str:
    """The URL with a server-side statement_timeout, so one runaway statement cannot stall us."""
    separator = "&" if "?" in url else "?"
    return f"{url}{separator}options=-c%20statement_timeout%3D{int(seconds * 1000)}"


def plans_for(db: Any, queries: list[dict[str, Any]]) -> list[Any]:
    """The query plans Retriever.retrieve builds (same known entities from itinerary titles)."""
    from kb_retrieval.query.plan import build_query_plan
    from kb_retrieval.query.trips import trip_entities
    from kb_retrieval.retrieval.config import RetrievalConfig

    with db.tenant(MEASURED) as conn:
        titles = [
            row[0]
            for row in conn.execute(
                "SELECT title FROM doc_versions WHERE tenant_id = %s AND category = %s "
                "ORDER BY title",
                (MEASURED, "trip_itinerary"),
            )
        ]
    entities = trip_entities(titles)
    minimum = RetrievalConfig().min_content_tokens
    return [
        build_query_plan(
            case["email"],
            trip_context=case.get("trip_context"),
            known_entities=entities,
            min_content_tokens=minimum,
        )
        for case in queries
    ]


def snapshot_key(kb: Any) -> Any:
    """The SnapshotKey of the measured tenant under the pipeline's versions."""
    from kb_retrieval.retrieval.snapshot import SnapshotKey

    v = kb.versions
    return SnapshotKey(MEASURED, v.parser_version, v.chunker_version, v.embedding_model_id)


def scope_for(conn: Any, kb: Any, legs: Any, tenant: str = MEASURED) -> Any:
    """The Scope the retriever builds for a tenant (eligible versions as of AS_OF)."""
    v = kb.versions
    return legs.Scope(
        tenant, v.parser_version, v.chunker_version, v.embedding_model_id, as_of=AS_OF
    )


def snapshot_load(url: str, kb: Any, repeats: int) -> tuple[dict[str, Any], Any]:
    """`load_snapshot` of the measured tenant on fresh connections, then split into its phases.

    The split replays the statements `load_snapshot` runs (same parameters) and builds the
    `TenantSnapshot` from their rows, timing each; its sum is close to, not equal to, a load.
    """
    from kb_retrieval.db import Database
    from kb_retrieval.retrieval import sql
    from kb_retrieval.retrieval.snapshot import TenantSnapshot
    from kb_retrieval.retrieval.snapshot_store import load_snapshot, read_generation, unit_windows

    key = snapshot_key(kb)
    times, snapshot = [], None
    for _ in range(repeats):
        db = Database(url)
        with db.tenant(MEASURED) as conn:
            generation = read_generation(conn, MEASURED)
            started = time.perf_counter()
            snapshot = load_snapshot(conn, key, generation, HUGE)
            times.append((time.perf_counter() - started) * 1000)
        db.close()
    assert snapshot is not None
    phases: dict[str, float] = {}
    rows: dict[str, list[Any]] = {}
    db = Database(url)
    with db.tenant(MEASURED) as conn:
        params = {**key.params(), "versions": list(snapshot.version_ids)}
        for name, statement in (
            ("versions", sql.SNAPSHOT_VERSIONS),
            ("vector_count", sql.VECTOR_COUNT),
            ("chunks", sql.SNAPSHOT_CHUNKS),
            ("vectors", sql.SNAPSHOT_VECTORS),
            ("trip_titles", sql.TRIP_TITLES),
        ):
            started = time.perf_counter()
            cursor = conn.cursor(binary=True) if name == "vectors" else conn.cursor()
            rows[name] = cursor.execute(statement, params).fetchall()
            phases[f"sql_{name}_ms"] = round((time.perf_counter() - started) * 1000, 2)
    db.close()
    started = time.perf_counter()
    TenantSnapshot(
        key,
        snapshot.generation,
        snapshot.versions,
        rows["chunks"],
        unit_windows(rows["vectors"]),
        [r[0] for r in rows["trip_titles"]],
    )
    phases["build_ms"] = round((time.perf_counter() - started) * 1000, 2)
    reload_times = []
    for victim in snapshot.version_ids[:repeats]:
        # As if `victim` had just been published: its rows are read, the others reused.
        previous = copy.copy(snapshot)
        previous.builds = {v: b for v, b in snapshot.builds.items() if v != victim}
        db = Database(url)
        with db.tenant(MEASURED) as conn:
            started = time.perf_counter()
            reloaded = load_snapshot(conn, key, snapshot.generation, HUGE, previous)
            reload_times.append((time.perf_counter() - started) * 1000)
        db.close()
        assert reloaded is not None and reloaded.fetched_versions == (victim,)
    memory = snapshot_memory(url, key)
    out = {
        "load_ms": summary(times),
        "reload_one_version_ms": summary(reload_times),
        "memory": memory,
        "samples_ms": [round(t, 1) for t in times],
        "phases": phases,
        "nbytes": snapshot.nbytes,
        "vectors_nbytes": int(snapshot.vectors.nbytes),
        "vector_count": snapshot.vector_count,
        "chunk_count": len(snapshot.chunk_pk),
        "version_count": len(snapshot.version_ids),
        "term_count": len(snapshot.postings),
        "generation": snapshot.generation,
    }
    return out, snapshot


def snapshot_memory(url: str, key: Any) -> dict[str, Any]:
    """One more `load_snapshot` under tracemalloc: heap bytes the snapshot keeps (what is still
    allocated after the load, the snapshot alive), the load's peak, and the spill file's bytes
    (memory-mapped, in the page cache). Baseline: the same vectors as float32 (the layout that
    kept them on the heap), so `heap / float32 vectors` reads across machines."""
    import gc
    import tracemalloc

    from kb_retrieval.db import Database
    from kb_retrieval.retrieval.snapshot_store import load_snapshot, read_generation

    db = Database(url)
    gc.collect()
    tracemalloc.start()
    try:
        with db.tenant(MEASURED) as conn:
            generation = read_generation(conn, MEASURED)
            base = tracemalloc.get_traced_memory()[0]
            tracemalloc.reset_peak()
            snapshot = load_snapshot(conn, key, generation, HUGE)
            gc.collect()
            held, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        db.close()
    assert snapshot is not None
    chunks = max(len(snapshot.chunk_pk), 1)
    float32_vectors = int(snapshot.vectors.nbytes)
    heap = held - base
    return {
        "heap_bytes": heap,
        "peak_bytes": peak - base,
        "file_bytes": snapshot.file_nbytes,
        "arrays_bytes": snapshot.nbytes,
        "float32_vector_bytes": float32_vectors,
        "heap_mib_per_10k_chunks": round(heap / 2**20 * 10_000 / chunks, 2),
        "file_mib_per_10k_chunks": round(snapshot.file_nbytes / 2**20 * 10_000 / chunks, 2),
        "heap_over_float32_vectors": round(heap / float32_vectors, 3) if float32_vectors else None,
    }


@dataclass
class LegQuery:
    """One searched query as the legs see it: vectors, terms per variant, in-memory candidates."""

    plan: Any
    vectors: np.ndarray
    terms: list[list[str]]
    candidates: list[int] = field(default_factory=list)

    @property
    def all_terms(self) -> list[str]:
        return [t for variant in self.terms for t in variant]


def leg_queries(snapshot: Any, plans: list[Any], vectors: list[np.ndarray]) -> list[LegQuery]:
    """The searched queries with their in-memory candidates (what fetch_candidates receives)."""
    from kb_retrieval.retrieval import candidates as legs
    from kb_retrieval.retrieval.config import RetrievalConfig
    from kb_retrieval.text.analyzer import analyze

    config = RetrievalConfig()
    mask = snapshot.chunk_mask(snapshot.eligible_versions(AS_OF, audit=False))
    out = []
    for plan, vecs in zip(plans, vectors, strict=True):
        query = LegQuery(plan, vecs, [analyze(v.text) for v in plan.variants])
        vector_hits = snapshot.vector_leg(mask, vecs, config.k_vector)
        lexical_hits = snapshot.lexical_leg(
            mask, query.terms, config.k_lexical, config.bm25_k1, config.bm25_b
        )
        query.candidates = legs.merge_quota(plan, vector_hits, lexical_hits, config)[0]
        out.append(query)
    return out


def memory_steps(snapshot: Any, queries: list[LegQuery], args: Any) -> dict[str, Any]:
    """Each in-memory step of retrieval alone (one untimed call first, then one per query).

    `versions_mask` computes eligibility and the chunk mask from scratch; `scope_cached` is what
    `retrieve` calls (cached per date and mode); `candidate_sims` the cosines of the merged
    candidates that the in-memory path computes instead of pgvector.
    """
    from kb_retrieval.retrieval.config import RetrievalConfig

    config = RetrievalConfig()
    mask = snapshot.chunk_mask(snapshot.eligible_versions(AS_OF, audit=False))
    steps: dict[str, Callable[[LegQuery], Any]] = {
        "versions_mask": lambda q: snapshot.chunk_mask(
            snapshot.eligible_versions(AS_OF, audit=False)
        ),
        "scope_cached": lambda q: snapshot.scope(AS_OF, audit=False),
        "vector": lambda q: snapshot.vector_leg(mask, q.vectors, config.k_vector),
        "lexical": lambda q: snapshot.lexical_leg(
            mask, q.terms, config.k_lexical, config.bm25_k1, config.bm25_b
        ),
        "term_idf": lambda q: snapshot.term_idf(mask, q.all_terms),
        "candidate_sims": lambda q: snapshot.candidate_sims(q.candidates, q.vectors),
    }
    out: dict[str, Any] = {}
    for name, step in steps.items():
        step(queries[0])
        times = []
        for query in queries[: args.leg_queries]:
            started = time.perf_counter()
            step(query)
            times.append((time.perf_counter() - started) * 1000)
        out[name] = {**summary(times, 3), "timed_out": False}
    return out


def sql_steps(
    url: str, kb: Any, snapshot: Any, queries: list[LegQuery], args: Any
) -> dict[str, Any]:
    """Each database step of retrieval alone (fresh connection each, timeout, time budget)."""
    import psycopg

    from kb_retrieval.db import Database
    from kb_retrieval.retrieval import candidates as legs
    from kb_retrieval.retrieval import sql
    from kb_retrieval.retrieval.config import RetrievalConfig

    config = RetrievalConfig()
    exact = RetrievalConfig(exact_scan_max_vectors=HUGE)
    hnsw = RetrievalConfig(exact_scan_max_vectors=0)
    memory_scope = legs.Scope(
        MEASURED,
        kb.versions.parser_version,
        kb.versions.chunker_version,
        kb.versions.embedding_model_id,
        as_of=AS_OF,
    )
    steps: dict[str, Callable[[Any, Any, LegQuery], Any]] = {
        "fetch_candidates": lambda conn, scope, q: legs.fetch_candidates(
            conn, memory_scope, q.candidates, q.vectors
        ),
        "load_versions": lambda conn, scope, q: scope_for(conn, kb, legs),
        "vector_exact": lambda conn, scope, q: legs.vector_leg(conn, scope, q.vectors, exact),
        "vector_hnsw": lambda conn, scope, q: legs.vector_leg(conn, scope, q.vectors, hnsw),
        "lexical": lambda conn, scope, q: legs.lexical_leg(conn, scope, q.terms, config),
        "term_idf": lambda conn, scope, q: legs.term_idf(conn, scope, q.all_terms),
    }
    out: dict[str, Any] = {}
    for name, step in steps.items():
        db = Database(with_timeout(url, args.timeout_s))
        times: list[float] = []
        timed_out = False
        for query in queries[: args.leg_queries]:
            if sum(times) / 1000 > args.budget_s / 2:
                break
            try:
                with db.tenant(MEASURED) as conn:
                    conn.execute(sql.FORCE_CUSTOM_PLANS)
                    scope = scope_for(conn, kb, legs)
                    started = time.perf_counter()
                    step(conn, scope, query)
                    times.append((time.perf_counter() - started) * 1000)
            except psycopg.errors.QueryCanceled:
                timed_out = True
                break
        db.close()
        out[name] = {**summary(times), "timed_out": timed_out}
    return out


def embedding_threads(embedder: Any, plans: list[Any]) -> dict[str, Any]:
    """Query embedding time with torch's default thread count and with one thread."""
    import torch

    default = torch.get_num_threads()
    out: dict[str, Any] = {}
    for threads in (default, 1):
        torch.set_num_threads(threads)
        times = []
        for plan in plans:
            started = time.perf_counter()
            embedder.embed_query([v.text for v in plan.variants])
            times.append((time.perf_counter() - started) * 1000)
        out[f"threads_{threads}"] = summary(times)
    torch.set_num_threads(default)
    out |= onnx_query_embedding(embedder, plans, default)
    return out


def onnx_query_embedding(embedder: Any, plans: list[Any], threads: int) -> dict[str, Any]:
    """The same queries through the ONNX Runtime export of the same weights (KB_QUERY_ENCODER
    =onnx), with `threads` and with one intra-op thread, and its largest cosine distance from
    torch's vectors; torch's figures above are the in-run baseline."""
    from kb_retrieval.embedding_onnx import onnx_query_encoder

    model_dir = getattr(embedder, "model_dir", None)
    if model_dir is None:
        return {}
    out: dict[str, Any] = {}
    distance = 0.0
    for count in sorted({threads, 1}, reverse=True):
        encoder = onnx_query_encoder(model_dir, count)
        encoder.encode(["warm-up"])
        times = []
        for plan in plans:
            texts = [v.text for v in plan.variants]
            started = time.perf_counter()
            vectors = encoder.encode(texts)
            times.append((time.perf_counter() - started) * 1000)
            if count == 1:
                reference = embedder.embed_query(texts)
                distance = max(distance, float(1 - (vectors * reference).sum(axis=1).min()))
        out[f"onnx_threads_{count}"] = summary(times)
    out["onnx_max_cosine_distance"] = distance
    return out


def thread_pools() -> list[str]:
    """Native thread pools of the process (torch's OpenMP, numpy's BLAS) and their sizes."""
    from pathlib import Path

    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return ["threadpoolctl absent"]
    return [
        f"{i['internal_api']} {i['num_threads']} ({Path(i['filepath']).name})"
        for i in threadpool_info()
    ]
