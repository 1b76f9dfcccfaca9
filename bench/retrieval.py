"""Retrieval latency and vector recall at 1k, 10k and 100k chunks, one tenant measured among ten.

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
(build time reported, maintenance_work_mem set for that session). The inserts move the
tenants' index generation (triggers of migration 0005), so retrieval reloads its snapshot.

At each size:
- the in-memory snapshot of the measured tenant: `load_snapshot` on a fresh connection
  (--snapshot-repeats times), once more split into its SQL reads and the Python/numpy build;
  its nbytes, window vectors, chunks, versions and terms;
- each step of retrieval alone on the first --leg-queries e-mails: in memory (eligible versions
  + chunk mask, vector leg, the same with one BLAS thread, lexical leg, term_idf) and in
  PostgreSQL (fetch_candidates of the in-memory legs' candidates; the SQL legs load_versions,
  vector exact, vector HNSW, lexical, term_idf), each SQL step on a fresh connection with a
  statement_timeout (--timeout-s) and plan_cache_mode = force_custom_plan as in retrieval;
  term_idf gets all variants' terms;
- Retriever.retrieve latency (TTL cache off) for the alpine-treks e-mails of the golden set:
  `default` (in-memory snapshot, audit off), `audit on`, `database exact`
  (in_memory_max_vectors=0, exact_scan_max_vectors huge) and `database HNSW`
  (in_memory_max_vectors=0, exact_scan_max_vectors=0). The snapshot store is cleared before
  each series and two warm-up calls load (or decline) the snapshot before the timed calls; a
  series stops at its time budget (--budget-s) or first timeout, and the database series are
  skipped when the SQL lexical leg alone times out;
- the vector leg alone for every searched query: in memory vs the SQL exact scan (recall@k_vector
  of chunk sets per variant, expected 1.0), and HNSW vs exact scan on the queries whose statement
  really scanned the HNSW index, for an ef_search/overfetch sweep (why HNSW is not the default).
Query embedding with torch's default thread count and with one thread is measured once.

    .venv/bin/python -m bench.retrieval [--quick] [--json] [--sizes 1000,10000,100000]
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import date
from typing import Any

import numpy as np

MEASURED = "alpine-treks"
OTHER_TENANTS = tuple(f"bench-t{i:02d}" for i in range(1, 10))
AS_OF = date(2026, 11, 15)
HNSW_INDEX = "chunk_vectors_hnsw"
HUGE = 10**9
SWEEP = ((40, 4), (200, 4), (200, 16), (1000, 32))
QUICK_SWEEP = ((40, 4), (200, 4), (1000, 16))
SERIES = (
    ("default", {}, False),
    ("audit on", {}, True),
    ("database exact", {"in_memory_max_vectors": 0, "exact_scan_max_vectors": HUGE}, False),
    ("database HNSW", {"in_memory_max_vectors": 0, "exact_scan_max_vectors": 0}, False),
)
BASELINE = "default"
GOAL_P95_MS = 100.0
Hits = dict[int, list[tuple[int, float]]]


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


def snapshot_key(kb: Any) -> Any:
    from kb_retrieval.retrieval.snapshot import SnapshotKey

    v = kb.versions
    return SnapshotKey(MEASURED, v.parser_version, v.chunker_version, v.embedding_model_id)


def snapshot_load(url: str, kb: Any, repeats: int) -> tuple[dict[str, Any], Any]:
    """`load_snapshot` of the measured tenant on fresh connections, then split into its phases.

    The split replays the statements `load_snapshot` runs (same parameters) and builds the
    `TenantSnapshot` from their rows, timing each; its sum is close to, not equal to, a load.
    """
    from bench.common import summary
    from kb_retrieval.db import Database
    from kb_retrieval.retrieval import sql
    from kb_retrieval.retrieval.snapshot import TenantSnapshot, load_snapshot, read_generation

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
            ("vector_count", sql.SNAPSHOT_VECTOR_COUNT),
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
        rows["vectors"],
        [r[0] for r in rows["trip_titles"]],
    )
    phases["build_ms"] = round((time.perf_counter() - started) * 1000, 2)
    out = {
        "load_ms": summary(times),
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


def latency_run(
    url: str, kb: Any, queries: list[dict[str, Any]], overrides: dict[str, Any], audit: bool,
    args: Any,
) -> dict[str, Any]:  # fmt: skip
    """Queries in order through a fresh Retriever on a fresh connection (two warm-up calls).

    The process-wide snapshot store keeps one slot per (database URL, tenant, pipeline) whatever
    `in_memory_max_vectors` is, so it is cleared first: the warm-up calls then load this
    series' snapshot (or record that the tenant is searched in PostgreSQL). `snapshot_loads`
    counts loads during the timed calls (expected 0). Stops at the first statement timeout or
    when the time budget is spent.
    """
    import psycopg

    from bench.common import summary
    from kb_retrieval.db import Database
    from kb_retrieval.retrieval.config import RetrievalConfig
    from kb_retrieval.retrieval.retriever import Retriever
    from kb_retrieval.retrieval.snapshot import SNAPSHOTS, read_generation

    db = Database(with_timeout(url, args.timeout_s))
    config = RetrievalConfig(cache_ttl_seconds=0, **overrides)
    retriever = Retriever(db, kb.embedder, kb.versions, config, None, audit=audit)
    SNAPSHOTS.clear()
    scans_before = hnsw_scans(url)
    samples: dict[str, list[float]] = {}
    warmup: list[float] = []
    real = searched = 0
    loads_before = loads_after = SNAPSHOTS.loads
    timed_out = False
    started_run = time.perf_counter()
    try:
        for case in queries[:2]:
            started = time.perf_counter()
            retriever.retrieve(
                MEASURED, case["email"], as_of=AS_OF, trip_context=case.get("trip_context")
            )
            warmup.append(round((time.perf_counter() - started) * 1000, 1))
        loads_before = SNAPSHOTS.loads
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
        loads_after = SNAPSHOTS.loads
    except psycopg.errors.QueryCanceled:
        timed_out = True
    with db.tenant(MEASURED) as conn:
        generation = read_generation(conn, MEASURED)
        in_memory = SNAPSHOTS.get(
            conn, db.url, snapshot_key(kb), generation, max_vectors=config.in_memory_max_vectors
        )
    db.close()
    return {
        "timings_ms": {k: summary(v) for k, v in samples.items()},
        "samples_ms": {k: [round(x, 1) for x in samples.get(k, [])] for k in ("total", "wall")},
        "warmup_ms": warmup,
        "completed": len(samples.get("total", [])),
        "timed_out": timed_out,
        "searched": searched,
        "packs_with_real_evidence": real,
        "path": "memory" if in_memory is not None else "database",
        "snapshot_loads": loads_after - loads_before,
        "hnsw_index_scans": hnsw_scans(url) - scans_before,
    }


def leg_queries(snapshot: Any, plans: list[Any], vectors: list[np.ndarray]) -> list[LegQuery]:
    """The searched queries with their in-memory candidates (what fetch_candidates receives)."""
    from kb_retrieval.analyzer import analyze
    from kb_retrieval.retrieval import candidates as legs
    from kb_retrieval.retrieval.config import RetrievalConfig

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
    from bench.common import summary
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
    limits: dict[str, Callable[[], Any]] = dict.fromkeys(steps, contextlib.nullcontext)
    out: dict[str, Any] = {}
    for name, step in steps.items():
        with limits[name]():
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

    from bench.common import summary
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
        snapshot.eligible_versions(AS_OF, audit=False),
    )
    steps: dict[str, Callable[[Any, Any, LegQuery], Any]] = {
        "fetch_rows": lambda conn, scope, q: legs.fetch_candidates(
            conn, memory_scope, q.candidates, None
        ),
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


def _per_variant(rows: Sequence[tuple[int, int, float]]) -> Hits:
    out: Hits = {}
    for vidx, pk, sim in rows:
        out.setdefault(int(vidx), []).append((int(pk), float(sim)))
    return out


def timed_vector_leg(
    db: Any, kb: Any, query_vectors: list[np.ndarray], config: Any
) -> tuple[list[Hits], list[float], list[bool]]:
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
        hits.append(_per_variant(rows))
    db.close()
    return hits, times, used


def memory_vector_leg(
    snapshot: Any, query_vectors: list[np.ndarray]
) -> tuple[list[Hits], list[float]]:
    """The in-memory vector leg per query (same eligible scope as retrieval, audit off)."""
    from kb_retrieval.retrieval.config import RetrievalConfig

    k = RetrievalConfig().k_vector
    mask = snapshot.chunk_mask(snapshot.eligible_versions(AS_OF, audit=False))
    snapshot.vector_leg(mask, query_vectors[0], k)
    hits, times = [], []
    for vectors in query_vectors:
        started = time.perf_counter()
        rows = snapshot.vector_leg(mask, vectors, k)
        times.append((time.perf_counter() - started) * 1000)
        hits.append(_per_variant(rows))
    return hits, times


def vector_leg_runs(
    url: str, kb: Any, snapshot: Any, query_vectors: list[np.ndarray],
    sweep: Sequence[tuple[int, int]],
) -> dict[str, Any]:  # fmt: skip
    """The vector leg alone: in memory and HNSW against the SQL exact scan.

    The exact scan and the sweep use custom plans (no prepared statements), so the planner sees
    each query's values; `exact_prepared_ms` and `default_connection` repeat the exact scan and
    the default HNSW setting on an ordinary connection (psycopg prepares after 5 calls and
    PostgreSQL may then switch to a generic plan; retrieval itself forces custom plans).
    Recall of a (query, variant) pair: |top-k ∩ exact top-k| / |exact top-k| of chunk ids;
    for HNSW over the queries whose statement really scanned the HNSW index. `kth_gap`: cosine
    of the exact k-th chunk minus that of the k-th found (0 when as good).
    """
    from bench.common import summary
    from kb_retrieval.db import Database
    from kb_retrieval.retrieval.config import RetrievalConfig

    exact_config = RetrievalConfig(exact_scan_max_vectors=HUGE)
    exact, exact_ms, _ = timed_vector_leg(
        custom_plan_database(url), kb, query_vectors, exact_config
    )
    _, exact_prepared_ms, _ = timed_vector_leg(Database(url), kb, query_vectors, exact_config)
    memory, memory_ms = memory_vector_leg(snapshot, query_vectors)
    out: dict[str, Any] = {
        "exact_ms": summary(exact_ms),
        "exact_prepared_ms": summary(exact_prepared_ms),
        "memory": {
            **without(recall_stats(memory, exact, [True] * len(memory)), "queries_on_hnsw"),
            **identity_stats(memory, exact),
            "ms": summary(memory_ms, 3),
        },
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
    reaching = [h for h in out["hnsw"] if h["pairs"] and h["recall_mean"] >= 0.98]
    out["cheapest_reaching_0_98"] = (
        min(reaching, key=lambda h: h["ms"]["p50"]) if reaching else None
    )
    return out


def without(stats: dict[str, Any], *keys: str) -> dict[str, Any]:
    return {k: v for k, v in stats.items() if k not in keys}


def recall_stats(hits: list[Hits], exact: list[Hits], used: list[bool]) -> dict[str, Any]:
    recalls, gaps, short = [], [], 0
    for found, truth, counted in zip(hits, exact, used, strict=True):
        if not counted:
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
        "pairs_below_1": sum(r < 1 for r in recalls),
        "short_results": short,
        "kth_gap_mean": round(float(np.mean(gaps)), 4) if gaps else None,
    }


def identity_stats(hits: list[Hits], exact: list[Hits]) -> dict[str, Any]:
    """Pairs whose ranked chunk list equals the exact scan's, and the largest cosine difference."""
    same, pairs, diff = 0, 0, 0.0
    for found, truth in zip(hits, exact, strict=True):
        for vidx, expected in truth.items():
            got = found.get(vidx, [])
            pairs += 1
            same += [pk for pk, _ in got] == [pk for pk, _ in expected]
            scores = dict(got)
            diff = max([diff, *(abs(scores[pk] - s) for pk, s in expected if pk in scores)])
        pairs += len(set(found) - set(truth))
    return {"same_order_pairs": same, "all_pairs": pairs, "max_cosine_diff": float(f"{diff:.2e}")}


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
    from bench.common import log, ratio
    from kb_retrieval.db import Database
    from kb_retrieval.retrieval.config import RetrievalConfig

    defaults = RetrievalConfig()
    if counts["tenant_vectors"] <= defaults.in_memory_max_vectors:
        default_path = "memory"
    elif counts["tenant_vectors"] <= defaults.exact_scan_max_vectors:
        default_path = "database exact"
    else:
        default_path = "database HNSW"
    db = Database(url)
    plans = plans_for(db, queries)
    db.close()
    searched = [p for p in plans if p.quality_ok]
    for plan in searched:
        key = tuple(v.text for v in plan.variants)
        if key not in vector_cache:
            vector_cache[key] = kb.embedder.embed(list(key))
    vectors = [vector_cache[tuple(v.text for v in p.variants)] for p in searched]
    snapshot_out, snapshot = snapshot_load(url, kb, args.snapshot_repeats)
    log(f"  snapshot: load {snapshot_out['load_ms']}, {snapshot_out['nbytes'] / 2**20:.1f} MiB")
    leg_inputs = leg_queries(snapshot, searched, vectors)
    steps = {
        "memory": memory_steps(snapshot, leg_inputs, args),
        "sql": sql_steps(url, kb, snapshot, leg_inputs, args),
    }
    for where, group in steps.items():
        log(f"  {where} steps: { {k: (v.get('p50'), v['timed_out']) for k, v in group.items()} }")
    runs: dict[str, Any] = {}
    for name, overrides, audit in SERIES:
        if overrides.get("in_memory_max_vectors") == 0 and steps["sql"]["lexical"]["timed_out"]:
            runs[name] = {"skipped": f"the SQL lexical leg alone exceeds {args.timeout_s} s"}
            continue
        runs[name] = latency_run(url, kb, queries, overrides, audit, args)
    base = runs.get(BASELINE, {}).get("timings_ms", {}).get("total", {})
    for name, run in runs.items():
        if "skipped" in run:
            continue
        t = run["timings_ms"].get("total", {})
        run["total_over_default"] = {
            p: ratio(t.get(p, 0.0), base.get(p, 0.0)) for p in ("p50", "p95")
        }
        log(f"  {name}: {run['completed']} queries on {run['path']}, total p50 {t.get('p50')} "
            f"p95 {t.get('p95')} ms, timed out {run['timed_out']}")  # fmt: skip
    recall = vector_leg_runs(url, kb, snapshot, vectors, args.sweep)
    return {
        **counts,
        "default_path": default_path,
        "in_memory_max_vectors": defaults.in_memory_max_vectors,
        "exact_scan_max_vectors": defaults.exact_scan_max_vectors,
        "queries_searched": len(searched),
        "snapshot": snapshot_out,
        "steps_ms": steps,
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
    query_embedding = embedding_threads(embedder, plans_for(db, queries))
    setup["thread_pools"] = thread_pools()
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
    return {
        "setup": setup,
        "query_embedding_ms": query_embedding,
        "queries": len(queries),
        "sizes": sizes,
    }


# -- rendering ---------------------------------------------------------------------------------
def render(result: dict[str, Any]) -> str:
    from bench.common import header, pair, table

    c, sizes = result["config"], result["sizes"]
    lines = header(
        result,
        f"{result['queries']} queries of {MEASURED}; mix {c['mix']}, noise {c['noise']}; "
        f"statement timeout {c['timeout_s']} s; budget {c['budget_s']} s per series",
    )
    embedding = ", ".join(
        f"{k.replace('_', ' ')}: {pair(v)} ms (n {v['n']})"
        for k, v in result["query_embedding_ms"].items()
    )
    lines += [
        f"query embedding (torch, p50 / p95): {embedding}",
        "",
        table(
            ["size", "chunks", "vectors", "tenant chunks", "tenant vectors", "tenant versions",
             "default path", "insert s", "copy s", "HNSW build s", "HNSW MB"],
            [[s["target"], s["total_chunks"], s["total_vectors"], s["tenant_chunks"],
              s["tenant_vectors"], s["tenant_versions"], s["default_path"],
              s["load"].get("insert_rows_s"), s["load"].get("copy_vectors_s"),
              s["load"]["hnsw_build_s"], s["load"]["hnsw_index_mb"]] for s in sizes],
        ),
        "",
        "Snapshot of the measured tenant (`load_snapshot`, fresh connection; ms p50 / p95, n; "
        "phases of one more load):",
        "",
        table(
            ["size", "vectors", "chunks", "versions", "terms", "MiB", "load ms", "n",
             "SQL chunks ms", "SQL vectors ms", "SQL other ms", "build ms"],
            [_snapshot_row(s) for s in sizes],
        ),
        "",
    ]  # fmt: skip
    for where, title in (("memory", "In-memory steps alone"), ("sql", "PostgreSQL steps alone")):
        names = list(sizes[0]["steps_ms"][where]) if sizes else []
        rows = [[s["target"], *(_leg_cell(s["steps_ms"][where][n]) for n in names)] for s in sizes]
        lines += [
            f"{title} (ms, p50 / p95 (n); 'timeout' = statement timeout hit):",
            "",
            table(["size", *names], rows),
            "",
        ]
    lines += ["`Retriever.retrieve` (ms, p50 / p95):", "", _latency_table(sizes), ""]
    lines += _goal_lines(sizes)
    lines += [
        "",
        "Vector leg alone, in memory vs SQL exact scan (recall@k of chunk ids per variant):",
        "",
        table(
            ["size", "queries", "variants", "recall mean", "recall min", "pairs < 1",
             "same order", "max cosine diff", "memory ms", "exact ms", "exact prepared ms"],
            [[s["target"], v["memory"]["queries"], v["memory"]["pairs"],
              v["memory"]["recall_mean"], v["memory"]["recall_min"], v["memory"]["pairs_below_1"],
              f"{v['memory']['same_order_pairs']}/{v['memory']['all_pairs']}",
              f"{v['memory']['max_cosine_diff']:.1e}", pair(v["memory"]["ms"]),
              pair(v["exact_ms"]), pair(v["exact_prepared_ms"])]
             for s in sizes for v in [s["vector_leg"]]],
        ),
        "",
        "Vector leg alone, HNSW vs SQL exact scan (recall over the calls that scanned HNSW):",
        "",
    ]  # fmt: skip
    rows = []
    for s in sizes:
        leg = s["vector_leg"]
        for h in [*leg["hnsw"], leg["default_connection"]]:
            rows.append([s["target"], h["ef_search"], h["overfetch"],
                         "custom" if h["custom_plans"] else "prepared",
                         f"{h['queries_on_hnsw']}/{h['queries']}", h["recall_mean"],
                         h["recall_min"], f"{h['pairs_below_0_98']}/{h['pairs']}",
                         h["short_results"], h["kth_gap_mean"], pair(h["ms"]),
                         pair(leg["exact_ms"])])  # fmt: skip
    lines.append(
        table(
            ["size", "ef_search", "overfetch", "plans", "on HNSW", "recall mean", "recall min",
             "pairs < 0.98", "short", "k-th gap", "HNSW ms", "exact ms"],
            rows,
        )
    )  # fmt: skip
    for s in sizes:
        lines.append(f"plan nodes at {s['target']:,}: {s['explain']}")
    return "\n".join(lines)


def _snapshot_row(s: dict[str, Any]) -> list[Any]:
    from bench.common import pair

    snap, phases = s["snapshot"], s["snapshot"]["phases"]
    other = sum(v for k, v in phases.items() if k.startswith("sql_")) - (
        phases["sql_chunks_ms"] + phases["sql_vectors_ms"]
    )
    return [s["target"], snap["vector_count"], snap["chunk_count"], snap["version_count"],
            snap["term_count"], round(snap["nbytes"] / 2**20, 2), pair(snap["load_ms"]),
            snap["load_ms"]["n"], phases["sql_chunks_ms"], phases["sql_vectors_ms"],
            round(other, 2), phases["build_ms"]]  # fmt: skip


def _latency_table(sizes: list[dict[str, Any]]) -> str:
    from bench.common import pair, table

    keys = ("total", "embed", "database", "ranking", "plan", "other", "after_total")
    rows = []
    for s in sizes:
        for name, run in s["latency"].items():
            if "skipped" in run:
                rows.append([s["target"], name, "-", *(["-"] * len(keys)), "-", "-", "-", "-",
                             "-", run["skipped"]])  # fmt: skip
                continue
            t, r = run["timings_ms"], run["total_over_default"]
            rows.append(
                [s["target"], name, run["completed"], *(pair(t.get(k, {})) for k in keys),
                 f"{_num(r['p50'])} / {_num(r['p95'])}", run["path"], run["snapshot_loads"],
                 " / ".join(f"{x:,.0f}" for x in run["warmup_ms"]), run["hnsw_index_scans"],
                 f"{run['packs_with_real_evidence']}/{run['completed']}"
                 + (" timeout" if run["timed_out"] else "")]
            )  # fmt: skip
    headers = ["size", "series", "n", *(k.replace("_", " ") for k in keys), "total x default",
               "path", "loads (timed)", "warm-up ms", "HNSW scans", "real evidence"]  # fmt: skip
    return table(headers, rows)


def _goal_lines(sizes: list[dict[str, Any]]) -> list[str]:
    out = []
    for s in sizes:
        run = s["latency"].get(BASELINE, {})
        total = run.get("timings_ms", {}).get("total", {})
        if total.get("n"):
            out.append(
                f"goal at {s['target']:,} chunks: `{BASELINE}` total p95 {total['p95']:,.1f} ms "
                f"(embed p95 {run['timings_ms']['embed']['p95']:,.1f} ms) vs {GOAL_P95_MS:.0f} ms"
            )
    return out


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _leg_cell(leg: dict[str, Any]) -> str:
    from bench.common import pair

    if not leg.get("n"):
        return "timeout" if leg["timed_out"] else "-"
    text = f"{pair(leg)} ({leg['n']})"
    return text + (" then timeout" if leg["timed_out"] else "")


def main(argv: Sequence[str] | None = None) -> None:
    from bench.common import base_parser, bench_home, emit, library_versions, log, machine

    parser = base_parser(__doc__.splitlines()[0])
    parser.add_argument("--sizes", help="total chunk counts, comma separated")
    parser.add_argument("--queries", type=int, help="golden e-mails of alpine-treks to use")
    parser.add_argument("--leg-queries", type=int, help="queries for the per-step breakdown")
    parser.add_argument("--snapshot-repeats", type=int, help="load_snapshot calls per size")
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
    args.snapshot_repeats = args.snapshot_repeats or (2 if args.quick else 3)
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
        for key in ("sizes", "queries", "leg_queries", "snapshot_repeats", "mix", "noise", "seed",
                    "timeout_s", "budget_s", "maintenance_work_mem", "sweep", "quick")
    }  # fmt: skip
    result["config"]["series"] = {name: overrides for name, overrides, _ in SERIES}
    result["machine"] = info
    result["libraries"] = library_versions()
    result["wall_s"] = round(time.perf_counter() - started, 1)
    emit(result, args.json, render)


if __name__ == "__main__":
    main()
