"""Eligibility on the PostgreSQL path (issue 11 session 9, migration 0011): `build_eligibility`,
kept by triggers, decides which versions the statements may read as of a date, in place of the
eligible version ids sent as an array; it gives ELIGIBLE_VERSIONS' answer, follows supersession
and dates, and is tenant-scoped."""

from __future__ import annotations

from dataclasses import asdict
from datetime import date, timedelta
from importlib import resources
from typing import Any

import numpy as np
import psycopg
import pytest

from kb_retrieval.retrieval import candidates as legs
from kb_retrieval.retrieval import sql
from kb_retrieval.retrieval.config import RetrievalConfig
from kb_retrieval.text.analyzer import analyze

AS_OF = date(2026, 11, 15)
DATES = [date(2024, 1, 1), date(2026, 3, 1), AS_OF, date(2027, 6, 1)]
EXACT = RetrievalConfig(exact_scan_max_vectors=10**9)
NEW_VERSION = "docv_session9_successor"


def _scope(pipeline: Any, tenant_id: str, as_of: date, audit: bool = False) -> legs.Scope:
    v = pipeline.versions
    return legs.Scope(
        tenant_id,
        v.parser_version,
        v.chunker_version,
        v.embedding_model_id,
        as_of=as_of,
        audit=audit,
    )


def _eligible(conn: Any, scope: legs.Scope) -> set[str]:
    return {row[0] for row in conn.execute(sql.ELIGIBLE_BUILDS, scope.params())}


def _reference(conn: Any, scope: legs.Scope) -> set[str]:
    """ELIGIBLE_VERSIONS' answer (the rule the snapshot path also implements)."""
    return set(legs.load_versions(conn, scope.params(), audit=scope.audit))


def test_the_table_gives_the_eligible_versions_rule(db, real_pipeline, demo_index):
    for tenant_id in demo_index:
        with db.tenant(tenant_id) as conn:
            for as_of in DATES:
                for audit in (False, True):
                    scope = _scope(real_pipeline, tenant_id, as_of, audit)
                    assert _eligible(conn, scope) == _reference(conn, scope), (as_of, audit)
            assert _eligible(conn, _scope(real_pipeline, tenant_id, AS_OF))


def test_the_migration_backfill_writes_what_the_triggers_keep(db, demo_index):
    migration = (
        resources.files("kb_retrieval.db.migrations")
        .joinpath("0011_build_eligibility.sql")
        .read_text(encoding="utf-8")
    )
    backfill = migration[migration.rindex("INSERT INTO build_eligibility") :]
    every_row = "SELECT e::text FROM build_eligibility e ORDER BY 1"
    with db.admin() as conn, conn.transaction(force_rollback=True):
        kept = conn.execute(every_row).fetchall()
        conn.execute("DELETE FROM build_eligibility")
        conn.execute(backfill)
        rebuilt = conn.execute(every_row).fetchall()
    assert kept and rebuilt == kept


def _a_version_and_chunk(conn: Any, pipeline: Any, tenant_id: str, before: date) -> Any:
    """A version eligible both the day before `before` and on AS_OF, and one of its chunks."""
    early = _reference(conn, _scope(pipeline, tenant_id, before - timedelta(days=1)))
    late = _reference(conn, _scope(pipeline, tenant_id, AS_OF))
    version = min(early & late)
    return conn.execute(
        "SELECT c.id, c.text, v.embedding, d.doc_id, d.category FROM chunks c "
        "JOIN chunk_vectors v ON v.chunk_pk = c.id AND v.window_index = 0 "
        "JOIN doc_versions d ON d.tenant_id = c.tenant_id AND d.doc_version_id = c.doc_version_id "
        "WHERE c.doc_version_id = %s AND c.parser_version = %s ORDER BY c.id LIMIT 1",
        (version, pipeline.versions.parser_version),
    ).fetchone(), version


def _found(conn: Any, scope: legs.Scope, pk: int, vector: Any, words: list[str]) -> dict:
    """Where chunk `pk` shows up on the PostgreSQL path: vector leg, lexical leg, candidates."""
    vectors = np.array([vector.to_numpy()], dtype=np.float32)
    vector_hits, lexical_hits, _ = legs.search_legs(conn, scope, vectors, [words], EXACT)
    candidates = legs.fetch_candidates(conn, scope, [pk], vectors)
    return {
        "vector": any(hit[1] == pk for hit in vector_hits),
        "lexical": any(hit[1] == pk for hit in lexical_hits),
        "candidate": candidates.get(pk),
    }


def test_a_superseded_version_is_never_a_candidate(db, real_pipeline, demo_index):
    """A successor published with an indexed build takes its predecessor out of every statement
    from its effective date on (in audit mode it stays, marked superseded); a failed or
    removed successor build gives it back."""
    takes_over = date(2026, 11, 1)
    v = real_pipeline.versions
    with db.tenant("alpine-treks") as conn, conn.transaction(force_rollback=True):
        conn.execute(sql.FORCE_CUSTOM_PLANS)
        (pk, text, vector, doc_id, category), old = _a_version_and_chunk(
            conn, real_pipeline, "alpine-treks", takes_over
        )
        words = sorted(set(analyze(text)))[:12]
        before = _scope(real_pipeline, "alpine-treks", takes_over - timedelta(days=1))
        after = _scope(real_pipeline, "alpine-treks", AS_OF)
        audit = _scope(real_pipeline, "alpine-treks", AS_OF, audit=True)
        assert _found(conn, after, pk, vector, words) == {
            "vector": True,
            "lexical": True,
            "candidate": _found(conn, before, pk, vector, words)["candidate"],
        }
        conn.execute(
            "INSERT INTO doc_versions (tenant_id, doc_version_id, doc_id, title, category, "
            "source_type, effective_date, supersedes_doc_version_id, content_hash) "
            "VALUES ('alpine-treks', %s, %s, 'Successor', %s, 'md', %s, %s, 'h')",
            (NEW_VERSION, doc_id, category, takes_over, old),
        )
        conn.execute(
            "INSERT INTO doc_builds (tenant_id, doc_version_id, parser_version, "
            "chunker_version, embedding_model_id, state) "
            "VALUES ('alpine-treks', %s, %s, %s, %s, 'indexed')",
            (NEW_VERSION, v.parser_version, v.chunker_version, v.embedding_model_id),
        )
        for scope in (before, after, audit):
            assert _eligible(conn, scope) == _reference(conn, scope)
        gone = _found(conn, after, pk, vector, words)
        kept = _found(conn, before, pk, vector, words)
        marked = _found(conn, audit, pk, vector, words)
        assert gone == {"vector": False, "lexical": False, "candidate": None}
        assert kept["vector"] and kept["lexical"] and not kept["candidate"].version.superseded
        assert marked["vector"] and marked["lexical"] and marked["candidate"].version.superseded
        conn.execute(
            "UPDATE doc_builds SET state = 'failed' WHERE doc_version_id = %s", (NEW_VERSION,)
        )
        assert old in _eligible(conn, after) and _found(conn, after, pk, vector, words)["lexical"]
        conn.execute(
            "UPDATE doc_builds SET state = 'indexed' WHERE doc_version_id = %s", (NEW_VERSION,)
        )
        assert old not in _eligible(conn, after)
        conn.execute(
            "UPDATE doc_versions SET effective_date = %s WHERE doc_version_id = %s",
            (AS_OF + timedelta(days=1), NEW_VERSION),
        )
        assert old in _eligible(conn, after) and NEW_VERSION not in _eligible(conn, after)
        conn.execute("DELETE FROM doc_builds WHERE doc_version_id = %s", (NEW_VERSION,))
        conn.execute("DELETE FROM doc_versions WHERE doc_version_id = %s", (NEW_VERSION,))
        assert _eligible(conn, after) == _reference(conn, after)
        assert conn.execute(
            "SELECT count(*) FROM build_eligibility WHERE doc_version_id = %s", (NEW_VERSION,)
        ).fetchone() == (0,)


def test_eligibility_is_tenant_scoped(db, real_pipeline, demo_index):
    # RLS enabled and forced with the two policies: test_security_roles checks every tenant table.
    with db.admin() as conn:
        tenants = {row[0] for row in conn.execute("SELECT tenant_id FROM build_eligibility")}
    assert {"alpine-treks", "coastal-kayak"} <= tenants
    foreign = _scope(real_pipeline, "coastal-kayak", AS_OF)
    with db.tenant("alpine-treks") as conn:
        conn.execute(sql.FORCE_CUSTOM_PLANS)
        seen = conn.execute("SELECT DISTINCT tenant_id FROM build_eligibility").fetchall()
        assert seen == [("alpine-treks",)]
        # Statements naming the other tenant find nothing of it.
        assert _eligible(conn, foreign) == set()
        assert conn.execute(sql.VECTOR_COUNT_BUILDS, foreign.params()).fetchone() == (0,)
        assert legs.lexical_leg(conn, foreign, [["kayak", "wetsuit"]], EXACT) == []
    with pytest.raises(psycopg.errors.InsufficientPrivilege), db.tenant("alpine-treks") as conn:
        v = asdict(real_pipeline.versions)
        version = conn.execute("SELECT min(doc_version_id) FROM doc_versions").fetchone()[0]
        conn.execute(
            "INSERT INTO build_eligibility VALUES ('coastal-kayak', %s, %s, %s, %s, "
            "'-infinity', 'infinity', 1, 1, 1)",
            (v["parser_version"], v["chunker_version"], v["embedding_model_id"], version),
        )


def test_the_lexical_statement_returns_the_term_statistics(db, real_pipeline, demo_index):
    """`search_legs` takes df from the lexical statement (postings) or from `term_idf`'s own
    statements (chunks): both give `term_idf`'s answer, every variant's terms included."""
    from kb_retrieval.ingestion.postings_backfill import backfill_postings

    variants = [
        analyze("Can my teenager join the glacier walk, and what boots should she bring?"),
        analyze("minimum age glacier boots"),
        ["quokka"],
    ]
    vectors = np.eye(3, 384, dtype=np.float32)
    for tenant_id in demo_index:
        backfill_postings(db, tenant_id)
        for as_of in (date(2026, 3, 1), AS_OF):
            scope = _scope(real_pipeline, tenant_id, as_of)
            with db.tenant(tenant_id) as conn:
                conn.execute(sql.FORCE_CUSTOM_PLANS)
                _, hits, stats = legs.search_legs(conn, scope, vectors, variants, EXACT)
                expected = legs.term_idf(conn, scope, sorted({t for v in variants for t in v}))
            assert stats[1] == expected[1] and stats[0] == expected[0], (tenant_id, as_of)
            assert sorted(stats[0]) == sorted({t for v in variants for t in v})
            assert stats[0]["quokka"] == max(stats[0].values())
            assert hits or as_of < AS_OF
