"""Fast bulk load of the retrieval benchmark's synthetic rows, and reuse of a built KB_HOME.

The load defers the secondary indexes and constraints of `chunks` and `chunk_vectors` (dropped
before the rows go in, recreated from their saved definitions after, each built once in bulk),
writes the window vectors as one binary COPY stream encoded with numpy per chunk (no Python
object per window), and records what it built in `BUILD_FILE` inside KB_HOME so that a later run
with `--kb-home PATH --reuse` measures the same database without rebuilding it.
"""

from __future__ import annotations

import json
import struct
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

BUILD_FILE = "bench-retrieval-build.json"
DEFERRED_TABLES = ("chunks", "chunk_vectors")
HNSW_INDEX = "chunk_vectors_hnsw"
# Migration 0001's definition, used when a killed build left a reused KB_HOME without the index.
HNSW_DEFINITION = (
    "CREATE INDEX chunk_vectors_hnsw ON public.chunk_vectors USING hnsw "
    "(embedding vector_cosine_ops) WITH (m='16', ef_construction='64')"
)
SYNTHETIC_VERSION = r"^s[0-9]{5}-"
COPY_HEADER = b"PGCOPY\n\xff\r\n\x00" + struct.pack(">ii", 0, 0)
COPY_TRAILER = struct.pack(">h", -1)
COPY_BLOCK_BYTES = 8 << 20
# Per HNSW element in pgvector's in-memory build: the vector, two layers of neighbour lists at
# m = 16 and bookkeeping; a generous figure, so that the graph never spills to the on-disk build.
HNSW_BYTES_PER_DIM = 4
HNSW_BYTES_PER_ELEMENT_OVERHEAD = 1024

GENERATION_TRIGGERS = (
    ("doc_versions", "doc_versions_generation"),
    ("doc_builds", "doc_builds_generation"),
)
BUMP_GENERATIONS = """
INSERT INTO index_generations AS g (tenant_id) SELECT unnest(%s::text[])
ON CONFLICT (tenant_id) DO UPDATE SET generation = g.generation + 1
"""
ELIGIBILITY_TRIGGERS = (
    ("doc_versions", "doc_versions_eligibility"),
    ("doc_builds", "doc_builds_eligibility"),
)
# Migration 0011's own refresh, once per version of the loaded tenants (1.7 s for 40,626).
REFRESH_ELIGIBILITY = """
SELECT count(refresh_build_eligibility(tenant_id, doc_version_id))
FROM doc_versions WHERE tenant_id = ANY(%s)
"""
SAVED_CONSTRAINTS = """
SELECT conrelid::regclass::text, conname, pg_get_constraintdef(oid), contype
FROM pg_constraint
WHERE (conrelid::regclass::text = ANY(%(tables)s) AND contype IN ('u', 'f'))
   OR (confrelid::regclass::text = ANY(%(tables)s) AND contype = 'f')
ORDER BY contype DESC, conname
"""
SAVED_INDEXES = """
SELECT i.indexname, i.indexdef
FROM pg_indexes i
WHERE i.tablename = ANY(%s) AND i.schemaname = current_schema()
  AND i.indexname <> %s
  AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conname = i.indexname)
ORDER BY i.indexname
"""
SYNTHETIC_COUNTS = """
SELECT tenant_id, count(*) FILTER (WHERE doc_version_id ~ %(pattern)s)
FROM doc_versions WHERE tenant_id = ANY(%(tenants)s) GROUP BY tenant_id
"""
CHUNK_COUNTS = """
SELECT c.tenant_id, count(*), (SELECT count(*) FROM chunk_vectors v WHERE v.tenant_id = c.tenant_id)
FROM chunks c WHERE c.tenant_id = ANY(%s) GROUP BY c.tenant_id
"""


def deferred_definitions(conn: Any) -> dict[str, list[tuple[str, str]]]:
    """(drop, create) statements of the secondary indexes and UNIQUE/FK constraints of the two
    bulk-loaded tables and the foreign keys of other tables pointing at them (primary keys and
    the HNSW index stay apart)."""
    tables = list(DEFERRED_TABLES)
    constraints = conn.execute(SAVED_CONSTRAINTS, {"tables": tables}).fetchall()
    indexes = conn.execute(SAVED_INDEXES, (tables, HNSW_INDEX)).fetchall()
    return {
        "constraints": [
            (f"ALTER TABLE {table} DROP CONSTRAINT {name}",
             f"ALTER TABLE {table} ADD CONSTRAINT {name} {definition}")
            for table, name, definition, _kind in constraints
        ],
        "indexes": [(f"DROP INDEX {name}", definition) for name, definition in indexes],
    }  # fmt: skip


def drop_deferred(conn: Any, deferred: dict[str, list[tuple[str, str]]]) -> None:
    """Drop foreign keys first (they depend on the unique indexes), then the rest."""
    for drop, _create in reversed(deferred["constraints"]):
        conn.execute(drop)
    for drop, _create in deferred["indexes"]:
        conn.execute(drop)


def recreate_deferred(
    conn: Any, deferred: dict[str, list[tuple[str, str]]], maintenance_work_mem: str
) -> dict[str, float]:
    """Build the deferred constraints (unique before foreign keys) and indexes again, timed."""
    conn.execute(f"SET maintenance_work_mem = '{maintenance_work_mem}'")
    started = time.perf_counter()
    for _drop, create in deferred["constraints"]:
        conn.execute(create)
    constraints_s = time.perf_counter() - started
    started = time.perf_counter()
    for _drop, create in deferred["indexes"]:
        conn.execute(create)
    conn.execute("RESET maintenance_work_mem")
    return {"constraints_s": constraints_s, "indexes_s": time.perf_counter() - started}


@contextmanager
def _triggers_off(conn: Any, triggers: tuple[tuple[str, str], ...]) -> Iterator[None]:
    """`triggers` ((table, trigger) pairs) disabled inside the caller's transaction, then on."""
    for table, trigger in triggers:
        conn.execute(f"ALTER TABLE {table} DISABLE TRIGGER {trigger}")
    yield
    for table, trigger in triggers:
        conn.execute(f"ALTER TABLE {table} ENABLE TRIGGER {trigger}")


@contextmanager
def generation_triggers_off(conn: Any, tenants: list[str]) -> Iterator[None]:
    """Inside the load's transaction: migration 0005's row triggers off (each would upsert the
    tenant's one `index_generations` row once per inserted version and build, a chain of
    tens of thousands of row versions in one transaction), then one bump per loaded tenant,
    so retrieval still sees the generation move on."""
    with _triggers_off(conn, GENERATION_TRIGGERS):
        yield
    conn.execute(BUMP_GENERATIONS, (tenants,))


@contextmanager
def eligibility_triggers_off(conn: Any, tenants: list[str]) -> Iterator[None]:
    """Inside the load's transaction: migration 0011's row triggers off (each refreshes one
    version's `build_eligibility` rows; tens of thousands of them in one statement did not
    finish in 21 minutes, docs/benchmarks.md session 14), then every version of the loaded
    tenants refreshed once by the migration's own `refresh_build_eligibility`."""
    with _triggers_off(conn, ELIGIBILITY_TRIGGERS):
        yield
    conn.execute(REFRESH_ELIGIBILITY, (tenants,))


@contextmanager
def load_triggers_off(conn: Any, tenants: list[str]) -> Iterator[None]:
    """Both of the above around a bulk load of `tenants` (bench builds of synthetic versions)."""
    with generation_triggers_off(conn, tenants), eligibility_triggers_off(conn, tenants):
        yield


def hnsw_memory(vectors: int, dims: int, requested: str) -> str:
    """maintenance_work_mem for the HNSW build: `requested`, or with `auto` enough for the whole
    graph of `vectors` elements (at least 1GB)."""
    if requested != "auto":
        return requested
    needed = vectors * (dims * HNSW_BYTES_PER_DIM + HNSW_BYTES_PER_ELEMENT_OVERHEAD)
    return f"{max(1024, -(-needed // 2**20))}MB"


def vector_copy_sql(columns: str) -> str:
    return f"COPY chunk_vectors ({columns}) FROM STDIN WITH (FORMAT BINARY)"


def _text(value: str) -> bytes:
    raw = value.encode()
    return struct.pack(">i", len(raw)) + raw


def encode_vector_rows(pk: int, texts: tuple[str, ...], vectors: np.ndarray) -> bytes:
    """Binary COPY tuples (chunk_pk, texts..., window_index, embedding) of one chunk's windows;
    pgvector's binary input is int16 dims, int16 unused, float4 big-endian values."""
    count, dims = vectors.shape
    prefix = struct.pack(">hiq", len(texts) + 3, 8, pk) + b"".join(map(_text, texts))
    body = np.ascontiguousarray(vectors, dtype=">f4").tobytes()
    step = dims * 4
    head = struct.pack(">i", 4 + step) + struct.pack(">hh", dims, 0)
    return b"".join(
        prefix + struct.pack(">ii", 4, i) + head + body[i * step : (i + 1) * step]
        for i in range(count)
    )


def copy_blocks(rows: Iterator[bytes]) -> Iterator[bytes]:
    """The binary COPY stream (header, tuples, trailer) in blocks of about COPY_BLOCK_BYTES."""
    block = [COPY_HEADER]
    size = len(COPY_HEADER)
    for row in rows:
        block.append(row)
        size += len(row)
        if size >= COPY_BLOCK_BYTES:
            yield b"".join(block)
            block, size = [], 0
    block.append(COPY_TRAILER)
    yield b"".join(block)


def synthetic_state(conn: Any, tenants: list[str]) -> dict[str, tuple[int, int, int]]:
    """Per tenant: chunks, window vectors and synthetic versions already in the database."""
    versions = dict(
        conn.execute(SYNTHETIC_COUNTS, {"pattern": SYNTHETIC_VERSION, "tenants": tenants})
    )
    out = {t: (0, 0, int(versions.get(t, 0))) for t in tenants}
    for tenant, chunks, vectors in conn.execute(CHUNK_COUNTS, (tenants,)):
        out[tenant] = (int(chunks), int(vectors), int(versions.get(tenant, 0)))
    return out


def hnsw_exists(conn: Any) -> bool:
    return conn.execute("SELECT to_regclass(%s) IS NOT NULL", (HNSW_INDEX,)).fetchone()[0]


def read_build(home: Path) -> dict[str, Any]:
    """What earlier runs built in this KB_HOME (recipe and load timings per size)."""
    path = home / BUILD_FILE
    return json.loads(path.read_text()) if path.is_file() else {"recipe": None, "sizes": {}}


def write_build(home: Path, build: dict[str, Any]) -> None:
    (home / BUILD_FILE).write_text(json.dumps(build, indent=2, sort_keys=True) + "\n")


def write_measured(home: Path, size: int, result: dict[str, Any]) -> None:
    """One size's measurements, kept in KB_HOME as soon as they are taken (a run stopped at a
    later size keeps them)."""
    path = home / f"bench-retrieval-measured-{size}.json"
    path.write_text(json.dumps(result, indent=2, sort_keys=True, default=str) + "\n")


def check_recipe(build: dict[str, Any], recipe: dict[str, Any], home: Path) -> None:
    """A reused KB_HOME must have been built with the same synthetic recipe."""
    if build["recipe"] is not None and build["recipe"] != recipe:
        raise SystemExit(
            f"{home / BUILD_FILE}: built with {build['recipe']}, this run asks {recipe}; "
            "use the same --mix/--noise/--seed or a fresh --kb-home"
        )
