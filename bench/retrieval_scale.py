"""Synthetic scale-up of the retrieval benchmark: copies of the demo documents, HNSW rebuild."""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from bench.common import DEMO_TENANTS
from bench.retrieval_build import (
    HNSW_DEFINITION,
    HNSW_INDEX,
    SYNTHETIC_VERSION,
    copy_blocks,
    deferred_definitions,
    drop_deferred,
    encode_vector_rows,
    hnsw_exists,
    hnsw_memory,
    load_triggers_off,
    recreate_deferred,
    synthetic_state,
    vector_copy_sql,
)

MEASURED = "alpine-treks"
OTHER_TENANTS = tuple(f"bench-t{i:02d}" for i in range(1, 10))
VECTOR_DIMS = 384
ANALYZED = ("doc_versions", "doc_builds", "chunks", "chunk_vectors")


@dataclass
class Template:
    """A real demo document: its version id, doc id and its chunks' ids and window vectors."""

    tenant_id: str
    doc_version_id: str
    doc_id: str
    supersedes: str | None
    chunks: list[tuple[int, str, np.ndarray]] = field(default_factory=list)


@dataclass
class Filler:
    """Where one tenant's synthetic copies stand: templates, next document, rows so far."""

    tenant_id: str
    templates: list[Template]
    chunks: int = 0
    vectors: int = 0
    versions: int = 0
    next_doc: int = 0


def ingest_demo(db: Any, pipeline: Any) -> dict[str, Any]:
    """Register and ingest every demo tenant with the real pipeline; versions per tenant."""
    out: dict[str, Any] = {}
    for folder in sorted(p.parent for p in DEMO_TENANTS.glob("*/kb.yaml")):
        registration = pipeline.register(folder)
        for version in registration.registered:
            pipeline.run_all(registration.tenant_id, version)
        out[registration.tenant_id] = len(registration.registered)
    return out


def open_demo_knowledge_base(
    home: Any, reuse: bool = False
) -> tuple[Any, Any, Any, dict[str, Any]]:
    """Database, warmed-up model and pipeline of the bench home with the demo tenants ingested and
    the other bench tenants registered; the setup timings. With `reuse` (a KB_HOME where a
    build was completed and recorded), nothing is ingested or registered."""
    from bench.common import open_database_and_model
    from kb_retrieval.ingestion.pipeline import IngestionPipeline

    db, embedder, setup = open_database_and_model(home)
    pipeline = IngestionPipeline(db, embedder)
    if reuse:
        setup["demo_versions"] = "reused"
        return db, embedder, pipeline, setup
    started = time.perf_counter()
    setup["demo_versions"] = ingest_demo(db, pipeline)
    setup["demo_ingest_s"] = round(time.perf_counter() - started, 2)
    for tenant in OTHER_TENANTS:
        db.ensure_tenant(tenant)
    return db, embedder, pipeline, setup


def tenant_counts(conn: Any, tenant: str) -> dict[str, int]:
    """Chunks, vectors and versions of one tenant, and chunks and vectors of all tenants."""
    row = conn.execute(
        "SELECT (SELECT count(*) FROM chunks WHERE tenant_id = %(t)s),"
        " (SELECT count(*) FROM chunk_vectors WHERE tenant_id = %(t)s),"
        " (SELECT count(*) FROM doc_versions WHERE tenant_id = %(t)s),"
        " (SELECT count(*) FROM chunks), (SELECT count(*) FROM chunk_vectors)",
        {"t": tenant},
    ).fetchone()
    keys = ("tenant_chunks", "tenant_vectors", "tenant_versions", "total_chunks", "total_vectors")
    return dict(zip(keys, (int(x) for x in row), strict=True))


def load_templates(conn: Any, tenants: Sequence[str]) -> dict[str, list[Template]]:
    """The real indexed documents of the tenants (never a synthetic copy, which a reused KB_HOME
    holds) with their chunks and window vectors."""
    out: dict[str, list[Template]] = {t: [] for t in tenants}
    by_key: dict[tuple[str, str], Template] = {}
    rows = conn.execute(
        "SELECT v.tenant_id, v.doc_version_id, v.doc_id, v.supersedes_doc_version_id "
        "FROM doc_versions v JOIN doc_builds b USING (tenant_id, doc_version_id) "
        "WHERE b.state = 'indexed' AND v.tenant_id = ANY(%s) AND v.doc_version_id !~ %s "
        "ORDER BY 1, 2",
        (list(tenants), SYNTHETIC_VERSION),
    ).fetchall()
    for tenant, version, doc_id, supersedes in rows:
        by_key[(tenant, version)] = Template(tenant, version, doc_id, supersedes)
        out[tenant].append(by_key[(tenant, version)])
    vectors: dict[int, list[np.ndarray]] = {}
    for pk, vec in conn.execute(
        "SELECT chunk_pk, embedding FROM chunk_vectors WHERE tenant_id = ANY(%s) "
        "AND doc_version_id !~ %s ORDER BY chunk_pk, window_index",
        (list(tenants), SYNTHETIC_VERSION),
    ):
        vectors.setdefault(pk, []).append(_array(vec))
    for pk, tenant, version, chunk_id in conn.execute(
        "SELECT id, tenant_id, doc_version_id, chunk_id FROM chunks WHERE tenant_id = ANY(%s) "
        "AND doc_version_id !~ %s ORDER BY tenant_id, doc_version_id, chunk_index",
        (list(tenants), SYNTHETIC_VERSION),
    ):
        if (tenant, version) in by_key:
            by_key[(tenant, version)].chunks.append((pk, chunk_id, np.stack(vectors[pk])))
    return out


def _array(vec: Any) -> np.ndarray:
    """A pgvector value (Vector object or array) as float32."""
    raw = vec.to_numpy() if hasattr(vec, "to_numpy") else vec
    return np.asarray(raw, dtype=np.float32)


@dataclass
class SyntheticCorpus:
    """The scale-up in progress: fillers per tenant, pool of real window vectors (y), generator."""

    fillers: list[Filler]
    pool: np.ndarray
    rng: np.random.Generator
    hnsw_definition: str


def prepare_corpus(conn: Any, seed: int) -> SyntheticCorpus:
    """Fillers of the measured tenant (its own documents) and of the nine others (both demos')."""
    templates = load_templates(conn, [MEASURED, "coastal-kayak"])
    everything = [t for group in templates.values() for t in group]
    pool = np.concatenate([ws for t in everything for _pk, _cid, ws in t.chunks])
    fillers = [Filler(MEASURED, templates[MEASURED])]
    fillers += [Filler(t, everything) for t in OTHER_TENANTS]
    state = synthetic_state(conn, [f.tenant_id for f in fillers])
    for filler in fillers:
        filler.chunks, filler.vectors, filler.versions = state[filler.tenant_id]
        filler.next_doc = filler.versions
    row = conn.execute(
        "SELECT indexdef FROM pg_indexes WHERE indexname = %s", (HNSW_INDEX,)
    ).fetchone()
    definition = row[0] if row else HNSW_DEFINITION
    return SyntheticCorpus(fillers, pool, np.random.default_rng(seed), definition)


def scale_to(
    conn: Any, corpus: SyntheticCorpus, size: int, args: Any, versions: Any
) -> dict[str, Any]:
    """Grow every tenant to a tenth of `size` chunks with the HNSW index and the other secondary
    indexes and constraints deferred, then build them again; only the HNSW build when the rows
    are there already (a reused KB_HOME)."""
    targets = dict.fromkeys([MEASURED, *OTHER_TENANTS], size // 10)
    needed = {f.tenant_id for f in corpus.fillers if f.chunks < targets[f.tenant_id]}
    if not needed and (hnsw_exists(conn) or args.no_hnsw):
        return {"reused": True, "hnsw": hnsw_exists(conn)}
    conn.execute(f"DROP INDEX IF EXISTS {HNSW_INDEX}")
    load_s: dict[str, float] = {}
    if needed:
        with conn.transaction():
            deferred = deferred_definitions(conn)
            drop_deferred(conn, deferred)
            with load_triggers_off(conn, sorted(needed)):
                load_s = grow(
                    conn, corpus.fillers, targets, corpus.pool, corpus.rng, args, versions
                )
            load_s |= recreate_deferred(conn, deferred, args.index_work_mem)
    if args.no_hnsw:
        return {k: round(v, 2) for k, v in load_s.items()} | {"hnsw": False}
    build = rebuild_hnsw(conn, corpus.hnsw_definition, args)
    return {k: round(v, 2) for k, v in load_s.items()} | build | {"hnsw": True}


def plan_documents(
    fillers: list[Filler], targets: dict[str, int]
) -> tuple[list[tuple[Any, ...]], list[tuple[str, str, int, str, np.ndarray]]]:
    """The synthetic documents to add (versions rows) and their chunks: tenant, version,
    template chunk pk, chunk id and the template's window vectors."""
    doc_rows, chunk_rows = [], []
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
                 template.tenant_id, template.doc_version_id, len(chunks),
                 sum(len(windows) for _pk, _cid, windows in chunks))
            )  # fmt: skip
            filler.versions += 1
            for template_pk, chunk_id, windows in chunks:
                chunk_rows.append((filler.tenant_id, version, template_pk, chunk_id, windows))
                filler.vectors += len(windows)
                filler.chunks += 1
    return doc_rows, chunk_rows


def vector_rows(
    first: int, chunk_rows: list[tuple[str, str, int, str, np.ndarray]], pool: np.ndarray,
    rng: np.random.Generator, args: Any, versions: Any,
) -> Iterator[bytes]:  # fmt: skip
    """Binary COPY tuples of every synthetic window vector: v = normalize(x + b*y + noise*g),
    one y and b per chunk, g per window, drawn in chunk order."""
    for offset, (tenant, version, _pk, chunk_id, windows) in enumerate(chunk_rows):
        y = pool[rng.integers(len(pool))]
        b = rng.uniform(0, args.mix)
        v = windows + b * y + args.noise * rng.standard_normal(windows.shape, dtype=np.float32)
        v /= np.linalg.norm(v, axis=1, keepdims=True)
        texts = (tenant, version, versions.chunker_version, chunk_id, versions.embedding_model_id)
        yield encode_vector_rows(first + offset, texts, v)


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
    doc_rows, chunk_rows = plan_documents(fillers, targets)
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
        "doc_id text, supersedes text, t_tenant text, t_version text, n_chunks int, "
        "n_windows int)"
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
        for offset, (tenant, version, template_pk, _cid, _w) in enumerate(chunk_rows):
            copy.write_row((first + offset, tenant, version, template_pk))
    conn.execute(INSERT_VERSIONS)
    conn.execute(INSERT_BUILDS, asdict(versions))
    conn.execute(INSERT_CHUNKS)
    timings["insert_rows_s"] = time.perf_counter() - started
    started = time.perf_counter()
    conn.execute(INSERT_SENTENCE_VECTORS)
    timings["copy_sentence_vectors_s"] = time.perf_counter() - started
    started = time.perf_counter()
    columns = (
        "chunk_pk, tenant_id, doc_version_id, chunker_version, chunk_id, embedding_model_id, "
        "window_index, embedding"
    )
    rows = vector_rows(first, chunk_rows, pool, rng, args, versions)
    with conn.cursor().copy(vector_copy_sql(columns)) as copy:
        for block in copy_blocks(rows):
            copy.write(block)
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
    %(embedding_model_id)s, 'indexed', m.n_chunks, m.n_windows, 0, now()
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

# A copy holds its template's text, so it gets the template's stored sentence vectors, as
# ingestion would store them (the near answer reads them: near_answer.py).
INSERT_SENTENCE_VECTORS = """
INSERT INTO chunk_sentence_vectors (tenant_id, chunk_pk, doc_version_id, chunker_version,
    chunk_id, embedding_model_id, units_version, sentence_index, embedding)
SELECT m.tenant_id, m.id, m.doc_version_id, s.chunker_version, s.chunk_id,
    s.embedding_model_id, s.units_version, s.sentence_index, s.embedding
FROM map_chunks m
JOIN chunk_sentence_vectors s ON s.chunk_pk = m.template_pk
"""


def rebuild_hnsw(conn: Any, definition: str, args: Any) -> dict[str, Any]:
    """Drop and build the HNSW index again, timed, with memory for the whole graph and the
    parallel maintenance workers set on the session; pgvector's notices are kept."""
    conn.execute(f"DROP INDEX IF EXISTS {HNSW_INDEX}")
    vectors = conn.execute("SELECT count(*) FROM chunk_vectors").fetchone()[0]
    memory = hnsw_memory(vectors, VECTOR_DIMS, args.maintenance_work_mem)
    conn.execute(f"SET maintenance_work_mem = '{memory}'")
    conn.execute(f"SET max_parallel_maintenance_workers = {int(args.parallel_workers)}")
    notices: list[str] = []

    def keep(diagnostic: Any) -> None:
        notices.append(str(diagnostic.message_primary))

    conn.add_notice_handler(keep)
    started = time.perf_counter()
    conn.execute(definition)
    build_s = time.perf_counter() - started
    conn.remove_notice_handler(keep)
    conn.execute("RESET maintenance_work_mem")
    conn.execute("RESET max_parallel_maintenance_workers")
    started = time.perf_counter()
    conn.execute(f"ANALYZE {', '.join(ANALYZED)}")
    return {
        "hnsw_build_s": round(build_s, 2),
        "hnsw_maintenance_work_mem": memory,
        "hnsw_parallel_workers": int(args.parallel_workers),
        "hnsw_notices": notices,
        "analyze_s": round(time.perf_counter() - started, 2),
        "hnsw_index_mb": round(relation_mb(conn, HNSW_INDEX), 1),
        "vectors_table_mb": round(relation_mb(conn, "chunk_vectors"), 1),
    }


def relation_mb(conn: Any, name: str) -> float:
    """Size of a table or index with its indexes and TOAST, in MiB."""
    return (
        conn.execute("SELECT pg_total_relation_size(%s::regclass)", (name,)).fetchone()[0] / 2**20
    )
