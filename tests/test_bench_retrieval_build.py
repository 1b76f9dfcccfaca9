"""The retrieval benchmark's bulk load: binary COPY encoding of vectors, deferred indexes."""

from __future__ import annotations

import numpy as np
import pytest

from bench.retrieval_build import (
    copy_blocks,
    deferred_definitions,
    drop_deferred,
    eligibility_triggers_off,
    encode_vector_rows,
    generation_triggers_off,
    hnsw_memory,
    recreate_deferred,
    vector_copy_sql,
)

TEMP_TABLE = """
CREATE TEMP TABLE bench_vectors (chunk_pk bigint, tenant_id text, doc_version_id text,
    chunker_version text, chunk_id text, embedding_model_id text, window_index int,
    embedding vector(384))
"""
COLUMNS = (
    "chunk_pk, tenant_id, doc_version_id, chunker_version, chunk_id, embedding_model_id, "
    "window_index, embedding"
)
DEFINITIONS = """
SELECT conname || ' ' || pg_get_constraintdef(oid) FROM pg_constraint
WHERE conrelid::regclass::text IN ('chunks', 'chunk_vectors')
UNION ALL
SELECT indexname || ' ' || indexdef FROM pg_indexes WHERE tablename IN ('chunks', 'chunk_vectors')
ORDER BY 1
"""


def test_binary_copy_rows_read_back_as_written(db) -> None:
    rng = np.random.default_rng(3)
    chunks = [rng.standard_normal((n, 384)).astype(np.float32) for n in (1, 3, 2)]
    texts = [("t-é", f"v{i}", "chunker-1", f"chunk-{i}-ü", "model") for i in range(3)]
    rows = (encode_vector_rows(100 + i, texts[i], v) for i, v in enumerate(chunks))
    with db.connect() as conn:
        conn.execute(TEMP_TABLE)
        sql = vector_copy_sql(COLUMNS).replace("chunk_vectors", "bench_vectors")
        with conn.cursor().copy(sql) as copy:
            for block in copy_blocks(rows):
                copy.write(block)
        stored = conn.execute(
            f"SELECT {COLUMNS} FROM bench_vectors ORDER BY chunk_pk, window_index"
        ).fetchall()
    expected = [
        (100 + i, *texts[i], w, chunks[i][w]) for i in range(3) for w in range(len(chunks[i]))
    ]
    assert len(stored) == len(expected) == 6
    for got, want in zip(stored, expected, strict=True):
        assert got[:7] == want[:7]
        np.testing.assert_array_equal(np.asarray(got[7].to_numpy()), want[7])


def test_deferred_indexes_and_constraints_come_back_identical(db) -> None:
    with db.connect() as conn, conn.transaction(force_rollback=True):
        before = [r[0] for r in conn.execute(DEFINITIONS)]
        deferred = deferred_definitions(conn)
        assert any("chunks_tsv" in create for _drop, create in deferred["indexes"])
        assert any("FOREIGN KEY" in create for _drop, create in deferred["constraints"])
        assert not any("hnsw" in create for _drop, create in deferred["indexes"])
        drop_deferred(conn, deferred)
        dropped = [r[0] for r in conn.execute(DEFINITIONS)]
        assert not any(name.startswith("chunks_tsv ") for name in dropped)
        assert any("hnsw" in name for name in dropped)
        recreate_deferred(conn, deferred, "64MB")
        assert [r[0] for r in conn.execute(DEFINITIONS)] == before


@pytest.mark.parametrize(
    ("vectors", "requested", "expected"),
    [(1000, "auto", "1024MB"), (2_800_000, "auto", "6836MB"), (5, "2GB", "2GB")],
)
def test_hnsw_memory_covers_the_graph(vectors: int, requested: str, expected: str) -> None:
    assert hnsw_memory(vectors, 384, requested) == expected


def test_generation_triggers_off_bumps_each_loaded_tenant_once(db) -> None:
    db.ensure_tenant("bench-generation")
    read = (
        "SELECT coalesce((SELECT generation FROM index_generations"
        " WHERE tenant_id = 'bench-generation'), 0)"
    )
    enabled = "SELECT tgenabled FROM pg_trigger WHERE tgname LIKE '%%_generation' ORDER BY 1"
    with db.connect() as conn, conn.transaction(force_rollback=True):
        before = conn.execute(read).fetchone()[0]
        with generation_triggers_off(conn, ["bench-generation"]):
            assert {r[0] for r in conn.execute(enabled)} == {"D"}
            conn.execute(
                "INSERT INTO doc_versions (tenant_id, doc_version_id, doc_id, title, category,"
                " source, source_type, priority, effective_date, content_hash, metadata)"
                " VALUES ('bench-generation', 'v1', 'd1', 't', 'faq', 's', 'txt', 1,"
                " '2026-01-01', 'h', '{}')"
            )
            assert conn.execute(read).fetchone()[0] == before
        assert conn.execute(read).fetchone()[0] == before + 1
        assert {r[0] for r in conn.execute(enabled)} == {"O"}


def test_eligibility_triggers_off_fills_the_loaded_tenants_rows_as_the_triggers_would(db) -> None:
    db.ensure_tenant("bench-eligibility")
    version = (
        "INSERT INTO doc_versions (tenant_id, doc_version_id, doc_id, title, category, source,"
        " source_type, priority, effective_date, supersedes_doc_version_id, content_hash,"
        " metadata) VALUES ('bench-eligibility', %s, 'd1', 't', 'faq', 's', 'txt', 1, %s, %s,"
        " 'h', '{}')"
    )
    build = (
        "INSERT INTO doc_builds (tenant_id, doc_version_id, parser_version, chunker_version,"
        " embedding_model_id, state, chunk_count, window_count) VALUES"
        " ('bench-eligibility', %s, 'p1', 'c1', 'e1', 'indexed', 2, 3)"
    )
    rows = (
        "SELECT doc_version_id, effective_from::text, superseded_from::text, chunk_count,"
        " window_count"
        " FROM build_eligibility WHERE tenant_id = 'bench-eligibility' ORDER BY 1"
    )
    enabled = "SELECT tgenabled FROM pg_trigger WHERE tgname LIKE '%%_eligibility' ORDER BY 1"

    def load(conn) -> None:
        conn.execute(version, ("old", "2026-01-01", None))
        conn.execute(version, ("new", "2026-06-01", "old"))
        conn.execute(build, ("old",))
        conn.execute(build, ("new",))

    with db.connect() as conn, conn.transaction(force_rollback=True):
        load(conn)
        by_triggers = conn.execute(rows).fetchall()
    assert len(by_triggers) == 2
    assert str(by_triggers[1][2]) == "2026-06-01"  # "old" is superseded from the new date
    with db.connect() as conn, conn.transaction(force_rollback=True):
        with eligibility_triggers_off(conn, ["bench-eligibility"]):
            assert {r[0] for r in conn.execute(enabled)} == {"D"}
            load(conn)
            assert conn.execute(rows).fetchall() == []
        assert {r[0] for r in conn.execute(enabled)} == {"O"}
        assert conn.execute(rows).fetchall() == by_triggers
