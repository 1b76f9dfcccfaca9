"""Retrieval latency and HNSW recall at 1k, 10k and 100k chunks, one tenant measured among ten.

Both demo tenants are ingested with the real pipeline and model. Then synthetic rows are added
directly with SQL and binary COPY until the table holds each target size: ten tenants of equal
size, the measured tenant (`alpine-treks`, keeping its real chunks) holding 10% of the rows.
A synthetic document is a copy of a real demo document (same text, title, dates, category and
lexical terms; new doc_version_id/doc_id); each window vector of its chunks is perturbed:

    v = normalize(x + b * y + noise * g)

x the real window vector, y a random real window vector of the demo corpus (one per chunk),
b ~ U(0, mix) per chunk, g ~ N(0, I) per window. `--mix 0` gives plain noisy replicas.
The measured tenant is filled with copies of its own documents, the nine others with copies of
both tenants' documents. The HNSW index is dropped before each load and rebuilt after it
(build time reported, maintenance_work_mem set for that session).

At each size, on fresh connections with a statement_timeout (--timeout-s):
- each database step of retrieval alone (versions, vector leg exact and HNSW, lexical leg,
  term statistics) on the first --leg-queries e-mails, plus a bench-only what-if of the lexical
  leg with its df/idf CTEs MATERIALIZED (the library is not changed);
- Retriever.retrieve latency (TTL cache off) for the alpine-treks e-mails of the golden set:
  audit off and on, default path and forced HNSW path, and the what-if; a run stops at its time
  budget (--budget-s) or first timeout, and is skipped when the lexical leg alone times out;
- the vector leg alone, exact scan vs HNSW: recall@k_vector of the chunk sets on the queries
  whose statement really scanned the HNSW index, for an ef_search/overfetch sweep.

    .venv/bin/python -m bench.retrieval [--quick] [--json] [--sizes 1000,10000,100000]
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from datetime import date
from typing import Any

import numpy as np

MEASURED = "alpine-treks"
OTHER_TENANTS = tuple(f"bench-t{i:02d}" for i in range(1, 10))
AS_OF = date(2026, 11, 15)
HNSW_INDEX = "chunk_vectors_hnsw"
HUGE = 10**9
SWEEP = ((40, 4), (200, 4), (1000, 4), (200, 16), (1000, 32))
QUICK_SWEEP = ((40, 4), (200, 4), (1000, 16))


@dataclass
class Template:
    """A real demo document: its version id, doc id and its chunks' ids and window vectors."""

    tenant_id: str
    doc_version_id: str
    doc_id: str
    supersedes: str | None
    chunks: list[tuple[int, str, list[np.ndarray]]] = field(default_factory=list)


@dataclass
class Filler:
    """Where one tenant's synthetic copies stand: templates, next document, rows so far."""

    tenant_id: str
    templates: list[Template]
    chunks: int = 0
    vectors: int = 0
    versions: int = 0
    next_doc: int = 0


# -- synthetic scale-up ------------------------------------------------------------------------
def load_templates(conn: Any, tenants: Sequence[str]) -> dict[str, list[Template]]:
    out: dict[str, list[Template]] = {t: [] for t in tenants}
    by_key: dict[tuple[str, str], Template] = {}
    rows = conn.execute(
        "SELECT v.tenant_id, v.doc_version_id, v.doc_id, v.supersedes_doc_version_id "
        "FROM doc_versions v JOIN doc_builds b USING (tenant_id, doc_version_id) "
        "WHERE b.state = 'indexed' AND v.tenant_id = ANY(%s) ORDER BY 1, 2",
        (list(tenants),),
    ).fetchall()
    for tenant, version, doc_id, supersedes in rows:
        by_key[(tenant, version)] = Template(tenant, version, doc_id, supersedes)
        out[tenant].append(by_key[(tenant, version)])
    vectors: dict[int, list[np.ndarray]] = {}
    for pk, vec in conn.execute(
        "SELECT chunk_pk, embedding FROM chunk_vectors WHERE tenant_id = ANY(%s) "
        "ORDER BY chunk_pk, window_index",
        (list(tenants),),
    ):
        vectors.setdefault(pk, []).append(_array(vec))
    for pk, tenant, version, chunk_id in conn.execute(
        "SELECT id, tenant_id, doc_version_id, chunk_id FROM chunks WHERE tenant_id = ANY(%s) "
        "ORDER BY tenant_id, doc_version_id, chunk_index",
        (list(tenants),),
    ):
        if (tenant, version) in by_key:
            by_key[(tenant, version)].chunks.append((pk, chunk_id, vectors[pk]))
    return out


def _array(vec: Any) -> np.ndarray:
    """A pgvector value (Vector object or array) as float32."""
    raw = vec.to_numpy() if hasattr(vec, "to_numpy") else vec
    return np.asarray(raw, dtype=np.float32)


def grow(
    conn: Any,
    fillers: list[Filler],
    targets: dict[str, int],
    pool: np.ndarray,
    rng: np.random.Generator,
    args: Any,
    versions: Any,
) -> dict[str, float]:
    """Add synthetic documents until every tenant holds its target number of chunks."""
    timings: dict[str, float] = {}
    started = time.perf_counter()
    doc_rows, chunk_rows, vector_rows = [], [], []
    for filler in fillers:
        while filler.chunks < targets[filler.tenant_id]:
            template = filler.templates[filler.next_doc % len(filler.templates)]
            copy = filler.next_doc // len(filler.templates)
            filler.next_doc += 1
            suffix = f"s{copy:05d}"
            version = f"{suffix}-{template.doc_version_id}"
            supersedes = f"{suffix}-{template.supersedes}" if template.supersedes else None
            room = targets[filler.tenant_id] - filler.chunks
            chunks = template.chunks[:room]
            doc_rows.append(
                (filler.tenant_id, version, f"{template.doc_id}-{suffix}", supersedes,
                 template.tenant_id, template.doc_version_id, len(chunks))
            )  # fmt: skip
            filler.versions += 1
            for template_pk, chunk_id, windows in chunks:
                chunk_rows.append((filler.tenant_id, version, template_pk))
                y = pool[rng.integers(len(pool))]
                b = rng.uniform(0, args.mix)
                for index, x in enumerate(windows):
                    v = x + b * y + args.noise * rng.standard_normal(x.shape[0]).astype(np.float32)
                    v /= np.linalg.norm(v)
                    vector_rows.append((len(chunk_rows) - 1, filler.tenant_id, version, chunk_id,
                                        index, v))  # fmt: skip
                filler.vectors += len(windows)
                filler.chunks += 1
    timings["generate_s"] = time.perf_counter() - started
    if not chunk_rows:
        return timings
    started = time.perf_counter()
    first = conn.execute(
        "SELECT setval('chunks_id_seq', nextval('chunks_id_seq') + %s - 1) - %s + 1",
        (len(chunk_rows), len(chunk_rows)),
    ).fetchone()[0]
    conn.execute(
        "CREATE TEMP TABLE IF NOT EXISTS map_versions (tenant_id text, doc_version_id text, "
        "doc_id text, supersedes text, t_tenant text, t_version text, n_chunks int)"
    )
    conn.execute(
        "CREATE TEMP TABLE IF NOT EXISTS map_chunks (id bigint, tenant_id text, "
        "doc_version_id text, template_pk bigint)"
    )
    conn.execute("TRUNCATE map_versions, map_chunks")
    with conn.cursor().copy("COPY map_versions FROM STDIN") as copy:
        for row in doc_rows:
            copy.write_row(row)
    with conn.cursor().copy("COPY map_chunks FROM STDIN") as copy:
        for offset, row in enumerate(chunk_rows):
            copy.write_row((first + offset, *row))
    conn.execute(INSERT_VERSIONS)
    conn.execute(INSERT_BUILDS, asdict(versions))
    conn.execute(INSERT_CHUNKS)
    timings["insert_rows_s"] = time.perf_counter() - started
    started = time.perf_counter()
    columns = "chunk_pk, tenant_id, doc_version_id, chunker_version, chunk_id, embedding_model_id"
    sql = f"COPY chunk_vectors ({columns}, window_index, embedding) FROM STDIN WITH (FORMAT BINARY)"
    with conn.cursor().copy(sql) as copy:
        copy.set_types(["int8", "text", "text", "text", "text", "text", "int4", "vector"])
        for offset, tenant, version, chunk_id, index, vec in vector_rows:
            copy.write_row((first + offset, tenant, version, versions.chunker_version, chunk_id,
                            versions.embedding_model_id, index, vec))  # fmt: skip
    timings["copy_vectors_s"] = time.perf_counter() - started
    return timings


INSERT_VERSIONS = """
INSERT INTO doc_versions (tenant_id, doc_version_id, doc_id, title, category, source, source_path,
    source_type, priority, effective_date, last_reviewed_at, supersedes_doc_version_id,
    content_hash, metadata)
SELECT m.tenant_id, m.doc_version_id, m.doc_id, t.title, t.category, t.source, t.source_path,
    t.source_type, t.priority, t.effective_date, t.last_reviewed_at, m.supersedes,
    t.content_hash, t.metadata
FROM map_versions m JOIN doc_versions t ON t.tenant_id = m.t_tenant AND t.doc_version_id = m.t_version
"""
INSERT_BUILDS = """
INSERT INTO doc_builds (tenant_id, doc_version_id, parser_version, chunker_version,
    embedding_model_id, state, chunk_count, window_count, embedded_count, indexed_at)
SELECT m.tenant_id, m.doc_version_id, %(parser_version)s, %(chunker_version)s,
    %(embedding_model_id)s, 'indexed', m.n_chunks, 0, 0, now()
FROM map_versions m
"""
INSERT_CHUNKS = """
INSERT INTO chunks (id, tenant_id, doc_version_id, doc_id, category, parser_version,
    chunker_version, chunk_id, chunk_index, section_title, page_start, page_end, source_locator,
    token_count, text, text_hash, policy_likeness_hint, term_count, term_freqs, tsv)
SELECT m.id, m.tenant_id, m.doc_version_id, v.doc_id, t.category, t.parser_version,
    t.chunker_version, t.chunk_id, t.chunk_index, t.section_title, t.page_start, t.page_end,
    t.source_locator, t.token_count, t.text, t.text_hash, t.policy_likeness_hint, t.term_count,
    t.term_freqs, t.tsv
FROM map_chunks m
JOIN chunks t ON t.id = m.template_pk
JOIN map_versions v ON v.tenant_id = m.tenant_id AND v.doc_version_id = m.doc_version_id
"""


def rebuild_hnsw(conn: Any, definition: str, maintenance_work_mem: str) -> dict[str, Any]:
    """Drop and build the HNSW index again, timed, with memory for the build set on the session."""
    conn.execute(f"DROP INDEX IF EXISTS {HNSW_INDEX}")
    conn.execute(f"SET maintenance_work_mem = '{maintenance_work_mem}'")
    conn.execute("SET max_parallel_maintenance_workers = 1")
    started = time.perf_counter()
    conn.execute(definition)
    build_s = time.perf_counter() - started
    conn.execute("RESET maintenance_work_mem")
    started = time.perf_counter()
    conn.execute("ANALYZE")
    return {
        "hnsw_build_s": round(build_s, 2),
        "analyze_s": round(time.perf_counter() - started, 2),
        "hnsw_index_mb": round(relation_mb(conn, HNSW_INDEX), 1),
        "vectors_table_mb": round(relation_mb(conn, "chunk_vectors"), 1),
    }


def relation_mb(conn: Any, name: str) -> float:
    return (
        conn.execute("SELECT pg_total_relation_size(%s::regclass)", (name,)).fetchone()[0] / 2**20
    )


def hnsw_scans(url: str) -> int:
    """idx_scan of the HNSW index (read after the measuring session closed, so stats are flushed)."""
    import psycopg

    time.sleep(0.6)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SELECT pg_stat_clear_snapshot()")
        row = conn.execute(
            "SELECT idx_scan FROM pg_stat_user_indexes WHERE indexrelname = %s", (HNSW_INDEX,)
        ).fetchone()
    return int(row[0]) if row else 0


# -- measurements ------------------------------------------------------------------------------
def golden_queries(limit: int) -> list[dict[str, Any]]:
    from bench.common import GOLDEN

    rows = [json.loads(line) for line in GOLDEN.read_text(encoding="utf-8").splitlines() if line]
    return [r for r in rows if r["tenant_id"] == MEASURED][:limit]


def with_timeout(url: str, seconds: float) -> str:
    """The URL with a server-side statement_timeout, so one runaway statement cannot stall us."""
    separator = "&" if "?" in url else "?"
    return f"{url}{separator}options=-c%20statement_timeout%3D{int(seconds * 1000)}"


def plans_for(db: Any, queries: list[dict[str, Any]]) -> list[Any]:
    """The query plans Retriever.retrieve builds (same known entities from itinerary titles)."""
    from kb_retrieval.query import build_query_plan
    from kb_retrieval.retrieval.config import RetrievalConfig
    from kb_retrieval.retrieval.retriever import trip_entities

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


def latency_run(
    url: str, kb: Any, queries: list[dict[str, Any]], overrides: dict[str, Any], audit: bool,
    args: Any,
) -> dict[str, Any]:  # fmt: skip
    """Queries in order through a fresh Retriever on a fresh connection (two warm-up calls).

    Stops at the first statement timeout or when the time budget is spent.
    """
    import psycopg

    from bench.common import summary
    from kb_retrieval.db import Database
    from kb_retrieval.retrieval.config import RetrievalConfig
    from kb_retrieval.retrieval.retriever import Retriever

    db = Database(with_timeout(url, args.timeout_s))
    config = RetrievalConfig(cache_ttl_seconds=0, **overrides)
    retriever = Retriever(db, kb.embedder, kb.versions, config, None, audit=audit)
    scans_before = hnsw_scans(url)
    samples: dict[str, list[float]] = {}
    real = searched = 0
    timed_out = False
    started_run = time.perf_counter()
    try:
        for case in queries[:2]:
            retriever.retrieve(
                MEASURED, case["email"], as_of=AS_OF, trip_context=case.get("trip_context")
            )
        for case in queries:
            if time.perf_counter() - started_run > args.budget_s:
                break
            started = time.perf_counter()
            result = retriever.retrieve(
                MEASURED, case["email"], as_of=AS_OF, trip_context=case.get("trip_context")
            )
            timings = {**result.timings_ms, "wall": (time.perf_counter() - started) * 1000}
            timings["other"] = timings["total"] - sum(
                timings.get(k, 0.0) for k in ("plan", "embed", "database", "ranking")
            )
            timings["after_total"] = timings["wall"] - timings["total"]
            for key, value in timings.items():
                samples.setdefault(key, []).append(value)
            searched += "embed" in result.timings_ms
            real += any(e["doc_version_id"].startswith("docv_") for e in result.pack["evidence"])
    except psycopg.errors.QueryCanceled:
        timed_out = True
    db.close()
    return {
        "timings_ms": {k: summary(v) for k, v in samples.items()},
        "samples_ms": {k: [round(x, 1) for x in samples.get(k, [])] for k in ("total", "wall")},
        "completed": len(samples.get("total", [])),
        "timed_out": timed_out,
        "searched": searched,
        "packs_with_real_evidence": real,
        "hnsw_index_scans": hnsw_scans(url) - scans_before,
    }


@contextmanager
def materialized_lexical() -> Iterator[None]:
    """Bench-only what-if: LEXICAL_BM25 with its df/idf CTEs MATERIALIZED (computed once)."""
    from kb_retrieval.retrieval import sql

    shipped = sql.LEXICAL_BM25
    patched = shipped.replace("), df AS (", "), df AS MATERIALIZED (")
    patched = patched.replace("), idf AS (", "), idf AS MATERIALIZED (")
    if patched == shipped:
        raise RuntimeError("LEXICAL_BM25 changed: the what-if patch no longer applies")
    sql.LEXICAL_BM25 = patched
    try:
        yield
    finally:
        sql.LEXICAL_BM25 = shipped


def leg_breakdown(
    url: str, kb: Any, plans: list[Any], vectors: list[np.ndarray], args: Any
) -> dict[str, Any]:
    """Each database step of retrieval alone (fresh connection each, timeout, time budget)."""
    import psycopg

    from bench.common import summary
    from kb_retrieval.analyzer import analyze
    from kb_retrieval.db import Database
    from kb_retrieval.retrieval import candidates as legs
    from kb_retrieval.retrieval.config import RetrievalConfig

    config = RetrievalConfig()
    forced = {
        "vector_exact": RetrievalConfig(exact_scan_max_vectors=HUGE),
        "vector_hnsw": RetrievalConfig(exact_scan_max_vectors=0),
    }
    steps = {
        "load_versions": lambda conn, scope, vecs, terms: scope_for(conn, kb, legs),
        "vector_exact": lambda conn, scope, vecs, terms: legs.vector_leg(
            conn, scope, vecs, forced["vector_exact"]
        ),
        "vector_hnsw": lambda conn, scope, vecs, terms: legs.vector_leg(
            conn, scope, vecs, forced["vector_hnsw"]
        ),
        "lexical": lambda conn, scope, vecs, terms: legs.lexical_leg(conn, scope, terms, config),
        "lexical_materialized_whatif": lambda conn, scope, vecs, terms: _whatif(
            legs, conn, scope, terms, config
        ),
        "term_idf": lambda conn, scope, vecs, terms: legs.term_idf(
            conn, scope, [t for variant in terms for t in variant]
        ),
    }
    out: dict[str, Any] = {}
    for name, step in steps.items():
        db = Database(with_timeout(url, args.timeout_s))
        times: list[float] = []
        timed_out = False
        for plan, vecs in zip(plans[: args.leg_queries], vectors, strict=False):
            if sum(times) / 1000 > args.budget_s / 2:
                break
            terms = [analyze(v.text) for v in plan.variants]
            try:
                with db.tenant(MEASURED) as conn:
                    scope = scope_for(conn, kb, legs)
                    started = time.perf_counter()
                    step(conn, scope, vecs, terms)
                    times.append((time.perf_counter() - started) * 1000)
            except psycopg.errors.QueryCanceled:
                timed_out = True
                break
        db.close()
        out[name] = {**summary(times), "timed_out": timed_out}
    return out


def _whatif(legs: Any, conn: Any, scope: Any, terms: Any, config: Any) -> Any:
    with materialized_lexical():
        return legs.lexical_leg(conn, scope, terms, config)


def embedding_threads(embedder: Any, plans: list[Any]) -> dict[str, Any]:
    """Query embedding time with torch's default thread count and with one thread."""
    import torch

    from bench.common import summary

    default = torch.get_num_threads()
    out: dict[str, Any] = {}
    for threads in (default, 1):
        torch.set_num_threads(threads)
        times = []
        for plan in plans:
            started = time.perf_counter()
            embedder.embed([v.text for v in plan.variants])
            times.append((time.perf_counter() - started) * 1000)
        out[f"threads_{threads}"] = summary(times)
    torch.set_num_threads(default)
    return out


def custom_plan_database(url: str) -> Any:
    """A Database whose connections never prepare statements (every call planned with its values)."""
    from kb_retrieval.db import Database

    class CustomPlanDatabase(Database):
        def connect(self, *, vector_types: bool = True) -> Any:
            conn = super().connect(vector_types=vector_types)
            conn.prepare_threshold = None
            return conn

    return CustomPlanDatabase(url)


HNSW_XACT_SCANS = "SELECT pg_stat_get_xact_numscans(%s::regclass)"


def timed_vector_leg(
    db: Any, kb: Any, query_vectors: list[np.ndarray], config: Any
) -> tuple[list[dict[int, list[tuple[int, float]]]], list[float], list[bool]]:
    """vector_leg per query: hits per variant, milliseconds, and whether the HNSW index ran."""
    from kb_retrieval.retrieval import candidates as legs

    hits, times, used = [], [], []
    for vectors in query_vectors:
        with db.tenant(MEASURED) as conn:
            scope = scope_for(conn, kb, legs)
            before = conn.execute(HNSW_XACT_SCANS, (HNSW_INDEX,)).fetchone()[0]
            started = time.perf_counter()
            rows = legs.vector_leg(conn, scope, vectors, config)
            times.append((time.perf_counter() - started) * 1000)
            used.append(conn.execute(HNSW_XACT_SCANS, (HNSW_INDEX,)).fetchone()[0] > before)
        per_variant: dict[int, list[tuple[int, float]]] = {}
        for vidx, pk, sim in rows:
            per_variant.setdefault(vidx, []).append((pk, float(sim)))
        hits.append(per_variant)
    db.close()
    return hits, times, used


def vector_leg_runs(
    url: str, kb: Any, query_vectors: list[np.ndarray], sweep: Sequence[tuple[int, int]]
) -> dict[str, Any]:
    """The vector leg alone: exact scan vs HNSW, each setting on a fresh connection.

    The sweep uses custom plans (no prepared statements), so the planner sees each query's
    values; `default_connection` repeats the default setting on an ordinary connection, where
    psycopg prepares the statement after 5 calls and PostgreSQL may then switch to a generic plan.
    Recall of a (query, variant) pair: |HNSW top-k ∩ exact top-k| / |exact top-k| of chunk ids,
    over the queries whose statement really scanned the HNSW index; `kth_gap`: cosine of the
    exact k-th chunk minus that of the HNSW k-th (0 when as good).
    """
    from bench.common import summary
    from kb_retrieval.db import Database
    from kb_retrieval.retrieval.config import RetrievalConfig

    exact_config = RetrievalConfig(exact_scan_max_vectors=HUGE)
    exact, exact_ms, _ = timed_vector_leg(
        custom_plan_database(url), kb, query_vectors, exact_config
    )
    _, exact_prepared_ms, _ = timed_vector_leg(Database(url), kb, query_vectors, exact_config)
    out: dict[str, Any] = {
        "exact_ms": summary(exact_ms),
        "exact_prepared_ms": summary(exact_prepared_ms),
        "hnsw": [],
    }
    default = RetrievalConfig()
    settings = [(ef, of, True) for ef, of in sweep]
    settings.append((default.hnsw_ef_search, default.hnsw_window_overfetch, False))
    for ef, overfetch, custom in settings:
        config = RetrievalConfig(
            exact_scan_max_vectors=0, hnsw_ef_search=ef, hnsw_window_overfetch=overfetch
        )
        db = custom_plan_database(url) if custom else Database(url)
        hits, times, used = timed_vector_leg(db, kb, query_vectors, config)
        row = {"ef_search": ef, "overfetch": overfetch, "custom_plans": custom}
        row |= recall_stats(hits, exact, used)
        row["ms"] = summary(times)
        out["hnsw" if custom else "default_connection"] = [*out["hnsw"], row] if custom else row
    return out


def recall_stats(
    hits: list[dict[int, list[tuple[int, float]]]],
    exact: list[dict[int, list[tuple[int, float]]]],
    used: list[bool],
) -> dict[str, Any]:
    recalls, gaps, short = [], [], 0
    for found, truth, hnsw in zip(hits, exact, used, strict=True):
        if not hnsw:
            continue
        for vidx, expected in truth.items():
            got = found.get(vidx, [])
            overlap = {pk for pk, _ in got} & {pk for pk, _ in expected}
            recalls.append(len(overlap) / len(expected))
            short += len(got) < len(expected)
            gaps.append(min(s for _, s in expected) - min((s for _, s in got), default=0.0))
    return {
        "queries_on_hnsw": sum(used),
        "queries": len(used),
        "pairs": len(recalls),
        "recall_mean": round(float(np.mean(recalls)), 4) if recalls else None,
        "recall_min": round(float(np.min(recalls)), 4) if recalls else None,
        "pairs_below_0_98": sum(r < 0.98 for r in recalls),
        "short_results": short,
        "kth_gap_mean": round(float(np.mean(gaps)), 4) if gaps else None,
    }


def scope_for(conn: Any, kb: Any, legs: Any) -> Any:
    """The Scope the retriever builds for the measured tenant (eligible versions as of AS_OF)."""
    base = {"tenant_id": MEASURED, **asdict(kb.versions), "as_of": AS_OF}
    versions = legs.load_versions(conn, base, audit=False)
    v = kb.versions
    return legs.Scope(
        MEASURED, v.parser_version, v.chunker_version, v.embedding_model_id, versions, True
    )


def explain_nodes(url: str, kb: Any, vectors: np.ndarray) -> dict[str, list[str]]:
    """Plan node types and index names of the HNSW and exact statements for one query."""
    from kb_retrieval.db import Database
    from kb_retrieval.retrieval import candidates as legs
    from kb_retrieval.retrieval import sql
    from kb_retrieval.retrieval.config import RetrievalConfig

    config = RetrievalConfig()
    db = Database(url)
    out = {}
    with db.tenant(MEASURED) as conn:
        scope = scope_for(conn, kb, legs)
        params = {**scope.params(), "vectors": list(vectors), "k": config.k_vector}
        params["k_windows"] = config.k_vector * config.hnsw_window_overfetch
        conn.execute(sql.SET_HNSW, (str(config.hnsw_ef_search),))
        for name, statement in (("hnsw", sql.VECTOR_HNSW), ("exact", sql.VECTOR_EXACT)):
            plan = conn.execute("EXPLAIN (FORMAT JSON) " + statement, params).fetchone()[0]
            out[name] = sorted(set(_plan_nodes(plan[0]["Plan"])))
    db.close()
    return out


def _plan_nodes(node: dict[str, Any]) -> list[str]:
    name = node["Node Type"] + (f" on {node['Index Name']}" if "Index Name" in node else "")
    found = [name]
    for child in node.get("Plans", []):
        found += _plan_nodes(child)
    return found


# -- driver ------------------------------------------------------------------------------------
def ingest_demo(db: Any, pipeline: Any) -> dict[str, Any]:
    from bench.common import DEMO_TENANTS

    out: dict[str, Any] = {}
    for folder in sorted(p.parent for p in DEMO_TENANTS.glob("*/kb.yaml")):
        registration = pipeline.register(folder)
        for version in registration.registered:
            pipeline.run_all(registration.tenant_id, version)
        out[registration.tenant_id] = len(registration.registered)
    return out


def tenant_counts(conn: Any, tenant: str) -> dict[str, int]:
    row = conn.execute(
        "SELECT (SELECT count(*) FROM chunks WHERE tenant_id = %(t)s),"
        " (SELECT count(*) FROM chunk_vectors WHERE tenant_id = %(t)s),"
        " (SELECT count(*) FROM doc_versions WHERE tenant_id = %(t)s),"
        " (SELECT count(*) FROM chunks), (SELECT count(*) FROM chunk_vectors)",
        {"t": tenant},
    ).fetchone()
    keys = ("tenant_chunks", "tenant_vectors", "tenant_versions", "total_chunks", "total_vectors")
    return dict(zip(keys, (int(x) for x in row), strict=True))


def measure_size(
    url: str, kb: Any, queries: list[dict[str, Any]], counts: dict[str, int], args: Any,
    vector_cache: dict[tuple[str, ...], np.ndarray],
) -> dict[str, Any]:  # fmt: skip
    from bench.common import log
    from kb_retrieval.db import Database
    from kb_retrieval.retrieval.config import RetrievalConfig

    threshold = RetrievalConfig().exact_scan_max_vectors
    default_path = "exact" if counts["tenant_vectors"] <= threshold else "hnsw"
    db = Database(url)
    plans = plans_for(db, queries)
    db.close()
    searched = [p for p in plans if p.quality_ok]
    for plan in searched:
        key = tuple(v.text for v in plan.variants)
        if key not in vector_cache:
            vector_cache[key] = kb.embedder.embed(list(key))
    vectors = [vector_cache[tuple(v.text for v in p.variants)] for p in searched]
    legs_out = leg_breakdown(url, kb, searched, vectors, args)
    log(f"  legs: { {k: (v.get('p50'), v['timed_out']) for k, v in legs_out.items()} }")
    runs: dict[str, Any] = {}
    configs = [
        ("default", {}, False),
        ("default+audit", {}, True),
        ("hnsw", {"exact_scan_max_vectors": 0}, False),
    ]
    if default_path == "hnsw":
        configs.append(("exact", {"exact_scan_max_vectors": HUGE}, False))
    for name, overrides, audit in configs:
        if legs_out["lexical"]["timed_out"]:
            runs[name] = {"skipped": f"the lexical leg alone exceeds {args.timeout_s} s"}
            continue
        runs[name] = latency_run(url, kb, queries, overrides, audit, args)
    with materialized_lexical():
        runs["default, lexical what-if"] = latency_run(url, kb, queries, {}, False, args)
    for name, run in runs.items():
        if "skipped" in run:
            continue
        t = run["timings_ms"].get("total", {})
        log(f"  {name}: {run['completed']} queries, total p50 {t.get('p50')} "
            f"p95 {t.get('p95')} ms, timed out {run['timed_out']}")  # fmt: skip
    recall = vector_leg_runs(url, kb, vectors, args.sweep)
    reaching = [h for h in recall["hnsw"] if h["pairs"] and h["recall_mean"] >= 0.98]
    recall["cheapest_reaching_0_98"] = (
        min(reaching, key=lambda h: h["ms"]["p50"]) if reaching else None
    )
    return {
        **counts,
        "default_path": default_path,
        "exact_scan_max_vectors": threshold,
        "queries_searched": len(searched),
        "legs_ms": legs_out,
        "latency": runs,
        "vector_leg": recall,
        "explain": explain_nodes(url, kb, vectors[0]),
    }


def run(args: Any, home: Any) -> dict[str, Any]:
    from bench.common import log
    from kb_retrieval.db import Database
    from kb_retrieval.ingestion.pipeline import IngestionPipeline
    from kb_retrieval.service import make_embedder

    setup: dict[str, Any] = {"server_start_s": home.startup_s}
    started = time.perf_counter()
    db = Database(home.url)
    db.migrate()
    embedder = make_embedder("minilm")
    embedder.embed(["warm-up"])
    setup["model_load_s"] = round(time.perf_counter() - started, 2)
    pipeline = IngestionPipeline(db, embedder)
    started = time.perf_counter()
    setup["demo_versions"] = ingest_demo(db, pipeline)
    setup["demo_ingest_s"] = round(time.perf_counter() - started, 2)
    for tenant in OTHER_TENANTS:
        db.ensure_tenant(tenant)
    queries = golden_queries(args.queries)
    setup["query_embedding_ms"] = embedding_threads(embedder, plans_for(db, queries))
    conn = db.connect()
    templates = load_templates(conn, [MEASURED, "coastal-kayak"])
    everything = [t for group in templates.values() for t in group]
    pool = np.stack([w for t in everything for _pk, _cid, ws in t.chunks for w in ws])
    measured = Filler(MEASURED, templates[MEASURED])
    measured.chunks = sum(len(t.chunks) for t in templates[MEASURED])
    fillers = [measured, *(Filler(t, everything) for t in OTHER_TENANTS)]
    definition = conn.execute(
        "SELECT indexdef FROM pg_indexes WHERE indexname = %s", (HNSW_INDEX,)
    ).fetchone()[0]
    rng = np.random.default_rng(args.seed)
    vector_cache: dict[tuple[str, ...], np.ndarray] = {}
    sizes = []
    for size in args.sizes:
        log(f"size {size:,}: loading synthetic rows")
        targets = dict.fromkeys([MEASURED, *OTHER_TENANTS], size // 10)
        conn.execute(f"DROP INDEX IF EXISTS {HNSW_INDEX}")
        with conn.transaction():
            load_s = grow(conn, fillers, targets, pool, rng, args, pipeline.versions)
        build = rebuild_hnsw(conn, definition, args.maintenance_work_mem)
        counts = tenant_counts(conn, MEASURED)
        log(f"size {size:,}: {counts}; HNSW build {build['hnsw_build_s']} s; measuring")
        result = measure_size(home.url, pipeline, queries, counts, args, vector_cache)
        result["target"] = size
        result["load"] = {k: round(v, 2) for k, v in load_s.items()} | build
        sizes.append(result)
    conn.close()
    db.close()
    return {"setup": setup, "queries": len(queries), "sizes": sizes}


def render(result: dict[str, Any]) -> str:
    from bench.common import table

    m, c = result["machine"], result["config"]
    lines = [
        f"retrieval benchmark: {m['nproc']} cores, load {m['loadavg_start']} -> "
        f"{m['loadavg_end']}; {result['queries']} queries of {MEASURED}; mix {c['mix']}, "
        f"noise {c['noise']}; statement timeout {c['timeout_s']} s",
        f"setup: {result['setup']}",
        "",
        table(
            ["size", "chunks", "vectors", "tenant chunks", "tenant vectors", "tenant versions",
             "path", "insert s", "copy s", "HNSW build s", "HNSW MB"],
            [[s["target"], s["total_chunks"], s["total_vectors"], s["tenant_chunks"],
              s["tenant_vectors"], s["tenant_versions"], s["default_path"],
              s["load"].get("insert_rows_s"), s["load"].get("copy_vectors_s"),
              s["load"]["hnsw_build_s"], s["load"]["hnsw_index_mb"]] for s in result["sizes"]],
        ),
        "",
        "Database steps alone (ms, p50 / p95, n; 'timeout' = statement timeout hit):",
        "",
    ]  # fmt: skip
    names = list(result["sizes"][0]["legs_ms"]) if result["sizes"] else []
    rows = [[s["target"], *(_leg_cell(s["legs_ms"][n]) for n in names)] for s in result["sizes"]]
    lines += [table(["size", *names], rows), "", "Retriever.retrieve (ms):", ""]
    rows = []
    keys = ("total", "embed", "database", "ranking", "plan", "other", "after_total")
    for s in result["sizes"]:
        for name, run in s["latency"].items():
            if "skipped" in run:
                rows.append([s["target"], name, *(["-"] * 14), "-", "-", run["skipped"]])
                continue
            t = run["timings_ms"]
            rows.append(
                [s["target"], name]
                + [t.get(k, {}).get(p) for k in keys for p in ("p50", "p95")]
                + [run["hnsw_index_scans"],
                   f"{run['packs_with_real_evidence']}/{run['completed']}",
                   "timeout" if run["timed_out"] else ""]
            )  # fmt: skip
    headers = ["size", "run", *(f"{k} {p}" for k in keys for p in ("p50", "p95"))]
    lines += [table([*headers, "HNSW scans", "real evidence", "note"], rows), ""]
    rows = []
    for s in result["sizes"]:
        leg = s["vector_leg"]
        for h in [*leg["hnsw"], leg["default_connection"]]:
            rows.append([s["target"], h["ef_search"], h["overfetch"],
                         "custom" if h["custom_plans"] else "prepared",
                         f"{h['queries_on_hnsw']}/{h['queries']}", h["recall_mean"],
                         h["recall_min"], f"{h['pairs_below_0_98']}/{h['pairs']}",
                         h["short_results"], h["kth_gap_mean"], h["ms"]["p50"], h["ms"]["p95"],
                         leg["exact_ms"]["p50"], leg["exact_ms"]["p95"],
                         leg["exact_prepared_ms"]["p50"], leg["exact_prepared_ms"]["p95"]])  # fmt: skip
    lines.append(
        table(
            ["size", "ef_search", "overfetch", "plans", "on HNSW", "recall mean", "recall min",
             "pairs < 0.98", "short", "k-th gap", "p50", "p95", "exact p50", "exact p95",
             "exact prepared p50", "exact prepared p95"],
            rows,
        )
    )  # fmt: skip
    for s in result["sizes"]:
        lines.append(f"plan nodes at {s['target']:,}: {s['explain']}")
    return "\n".join(lines)


def _leg_cell(leg: dict[str, Any]) -> str:
    if not leg.get("n"):
        return "timeout" if leg["timed_out"] else "-"
    text = f"{leg['p50']:,.1f} / {leg['p95']:,.1f} ({leg['n']})"
    return text + (" then timeout" if leg["timed_out"] else "")


def main(argv: Sequence[str] | None = None) -> None:
    from bench.common import base_parser, bench_home, emit, library_versions, log, machine

    parser = base_parser(__doc__.splitlines()[0])
    parser.add_argument("--sizes", help="total chunk counts, comma separated")
    parser.add_argument("--queries", type=int, help="golden e-mails of alpine-treks to use")
    parser.add_argument("--leg-queries", type=int, help="queries for the per-step breakdown")
    parser.add_argument("--mix", type=float, default=0.5, help="upper bound of b (see above)")
    parser.add_argument("--noise", type=float, default=0.02, help="std of g per dimension")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--timeout-s", type=float, default=10.0, help="statement_timeout")
    parser.add_argument("--budget-s", type=float, help="time budget of one latency run")
    parser.add_argument("--maintenance-work-mem", default="2GB")
    args = parser.parse_args(argv)
    sizes = args.sizes or ("1000,2000" if args.quick else "1000,10000,100000")
    args.sizes = [int(x) for x in sizes.split(",")]
    args.queries = args.queries or (8 if args.quick else 40)
    args.leg_queries = args.leg_queries or (4 if args.quick else 10)
    args.budget_s = args.budget_s or (6.0 if args.quick else 20.0)
    args.sweep = QUICK_SWEEP if args.quick else SWEEP
    info = machine()
    log(f"load {info['loadavg_start']}; sizes {args.sizes}")
    started = time.perf_counter()
    with bench_home("retrieval", keep=args.keep) as home:
        result = run(args, home)
    result["benchmark"] = "retrieval"
    result["config"] = {
        key: getattr(args, key)
        for key in ("sizes", "queries", "leg_queries", "mix", "noise", "seed", "timeout_s",
                    "budget_s", "maintenance_work_mem", "sweep", "quick")
    }  # fmt: skip
    result["machine"] = info
    result["libraries"] = library_versions()
    result["wall_s"] = round(time.perf_counter() - started, 1)
    emit(result, args.json, render)


if __name__ == "__main__":
    main()
