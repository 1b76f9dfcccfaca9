"""The PostgreSQL path at large tenants (issue 11, session 7): lexical statements that read the
tenant's chunks once without planning the version array, a tenant's own IVFFlat vector index,
the window count read from the builds."""

from __future__ import annotations

import json
from dataclasses import asdict
from datetime import date
from typing import Any

import pytest

from kb_retrieval.retrieval import candidates as legs
from kb_retrieval.retrieval import sql
from kb_retrieval.retrieval.config import RetrievalConfig
from kb_retrieval.retrieval.vector_index import (
    create_tenant_vector_index,
    drop_tenant_vector_index,
    index_name,
)

AS_OF = date(2026, 11, 15)
SCANS = "SELECT coalesce(pg_stat_get_xact_numscans(to_regclass(%s)), 0)"


def _scope(conn: Any, real_pipeline: Any, tenant_id: str) -> legs.Scope:
    v = real_pipeline.versions
    base = {"tenant_id": tenant_id, **asdict(v), "as_of": AS_OF}
    assert legs.load_versions(conn, base, audit=False)
    return legs.Scope(
        tenant_id, v.parser_version, v.chunker_version, v.embedding_model_id, as_of=AS_OF
    )


def _index_conditions(plan: Any) -> list[str]:
    """Every `Index Cond` of an EXPLAIN (FORMAT JSON) plan with the index it runs on."""
    found = []

    def walk(node: dict[str, Any]) -> None:
        if "Index Cond" in node:
            found.append(f"{node.get('Index Name')}: {node['Index Cond']}")
        for child in node.get("Plans", []):
            walk(child)

    walk(plan[0]["Plan"])
    return found


@pytest.mark.parametrize("statement", ["TERM_STATS", "LEXICAL_BM25", "COUNT_SCOPE"])
def test_lexical_statements_scan_the_tenant_without_the_version_array(
    db, real_pipeline, demo_index, statement
):
    with db.tenant("alpine-treks") as conn:
        conn.execute(sql.FORCE_CUSTOM_PLANS)
        # The demo tables are tiny: without this the planner reads them sequentially.
        conn.execute("SET LOCAL enable_seqscan = off")
        scope = _scope(conn, real_pipeline, "alpine-treks")
        params = legs._lexical_params(scope, [["refund", "deposit"]], RetrievalConfig())
        plan = conn.execute(f"EXPLAIN (FORMAT JSON) {getattr(sql, statement)}", params)
        conditions = _index_conditions(plan.fetchone()[0])
    on_chunks = [c for c in conditions if c.startswith("chunks_")]
    assert on_chunks, conditions
    # The eligible versions are checked on the rows, never planned as an index condition.
    assert not any("ANY" in c for c in on_chunks), on_chunks


@pytest.mark.parametrize(
    "term", ["refund", "o'neil", "back\\slash", "a:b", "x|y", "!not", "2026-05-01"]
)
def test_the_any_term_query_matches_every_chunk_a_single_term_matches(db, term):
    any_term = legs.any_term_query([term, "unrelated"])
    with db.admin() as conn:
        one, either = conn.execute(
            "SELECT array_to_tsvector(ARRAY[%(t)s]) @@ quote_literal(%(t)s)::tsquery, "
            "array_to_tsvector(ARRAY[%(t)s]) @@ %(q)s::tsquery",
            {"t": term, "q": any_term},
        ).fetchone()
    assert either, (term, any_term)
    assert one <= either


def test_window_count_from_the_builds_is_the_eligible_vector_rows(db, real_pipeline, demo_index):
    v = real_pipeline.versions
    for tenant_id in demo_index:
        for as_of in (date(2025, 1, 1), AS_OF):
            with db.tenant(tenant_id) as conn:
                key = {"tenant_id": tenant_id, **asdict(v)}
                eligible = sorted(legs.load_versions(conn, {**key, "as_of": as_of}, audit=False))
                params = {**key, "versions": eligible, "as_of": as_of, "audit": False}
                rows = conn.execute(sql.VECTOR_COUNT, params).fetchone()[0]
                from_builds = conn.execute(sql.VECTOR_COUNT_BUILDS, params).fetchone()[0]
            assert from_builds == rows, (tenant_id, as_of)
            assert rows > 0 or as_of < AS_OF, tenant_id


def test_index_names_are_stable_and_fit_postgresql():
    long_id = "a" + "-b" * 31
    assert index_name(long_id) == index_name(long_id) != index_name("alpine-treks")
    assert len(index_name(long_id)) <= 63


def test_a_tenant_index_serves_the_vector_leg_and_only_its_tenant(
    db, minilm, real_pipeline, demo_index
):
    tenant_id = "coastal-kayak"
    name = index_name(tenant_id)
    with db.admin() as conn:
        created = create_tenant_vector_index(conn, tenant_id)
    try:
        with db.admin() as conn:
            again = create_tenant_vector_index(conn, tenant_id)
            definition = conn.execute(
                "SELECT indexdef FROM pg_indexes WHERE indexname = %s", (name,)
            ).fetchone()[0]
        assert created.created and not again.created
        assert created.lists == again.lists == 1 and created.vectors > 0
        assert (
            "USING ivfflat (((l2_normalize(embedding))::vector(384)) vector_cosine_ops)"
            in definition
        )
        assert f"WHERE (tenant_id = '{tenant_id}'::text)" in definition
        vectors = minilm.embed(["can I rent a wetsuit on the day", "how cold is the water in May"])
        with db.tenant(tenant_id) as conn:
            conn.execute(sql.FORCE_CUSTOM_PLANS)
            scope = _scope(conn, real_pipeline, tenant_id)
            exact = legs.vector_leg(
                conn, scope, vectors, RetrievalConfig(exact_scan_max_vectors=10**9)
            )
            # A few dozen windows: unless told, the planner sorts them rather than use any index.
            for setting in ("enable_seqscan", "enable_bitmapscan", "enable_sort"):
                conn.execute("SELECT set_config(%s, 'off', true)", (setting,))
            before = conn.execute(SCANS, (name,)).fetchone()[0]
            indexed = legs.vector_leg(
                conn, scope, vectors, RetrievalConfig(exact_scan_max_vectors=0)
            )
            scanned = conn.execute(SCANS, (name,)).fetchone()[0] - before
        assert scanned >= 1, "the vector leg scanned the tenant's index"
        # One list: the index scan sees every window of the tenant, so it finds the exact top k.
        assert [(v, pk) for v, pk, _ in indexed] == [(v, pk) for v, pk, _ in exact]
        assert [s for *_, s in indexed] == pytest.approx([s for *_, s in exact], abs=1e-6)
        with db.tenant("alpine-treks") as conn:
            conn.execute(sql.FORCE_CUSTOM_PLANS)
            plan = conn.execute(
                "EXPLAIN (FORMAT JSON) SELECT id FROM chunk_vectors WHERE tenant_id = %s "
                "ORDER BY l2_normalize(embedding)::vector(384) <=> %s LIMIT 5",
                ("alpine-treks", vectors[0]),
            ).fetchone()[0]
        assert name not in json.dumps(plan), "another tenant's statements cannot use the index"
    finally:
        with db.admin() as conn:
            assert drop_tenant_vector_index(conn, tenant_id)
        with db.admin() as conn:
            assert not drop_tenant_vector_index(conn, tenant_id)


def test_a_tenant_index_needs_a_registered_tenant(db):
    with db.admin() as conn, pytest.raises(ValueError, match="unknown tenant 'no-such-tenant'"):
        create_tenant_vector_index(conn, "no-such-tenant")
