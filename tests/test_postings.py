"""BM25 postings in PostgreSQL (issue 11, migration 0010): kept by the tenants that opt in with
`kb index postings` (then written with the chunks), read by the PostgreSQL path's lexical leg
under row-level security, equal to the chunk-scan statements."""

from __future__ import annotations

import json
from dataclasses import asdict
from datetime import date
from typing import Any

import psycopg
import pytest

from kb_retrieval.embedding import FakeHashEmbedder
from kb_retrieval.ingestion import stored_state
from kb_retrieval.ingestion.pipeline import IngestionPipeline
from kb_retrieval.ingestion.postings_backfill import backfill_postings, pending_versions
from kb_retrieval.retrieval import candidates as legs
from kb_retrieval.retrieval import lexical_sql, sql
from kb_retrieval.retrieval.config import RetrievalConfig
from kb_retrieval.text.analyzer import analyze
from tests.conftest import copy_tenant

AS_OF = date(2026, 11, 15)
# Fresh questions (none is a golden e-mail), each read as the variants of one query.
QUESTIONS = [
    [
        "If we cancel three weeks ahead, how much of the deposit comes back?",
        "deposit refund cancellation",
    ],
    ["Is there a weight limit for the duffel the porters carry?", "luggage porter"],
    ["Where does the shuttle pick us up on the first morning?"],
    ["Do you cater for a guest who eats no gluten and no dairy?", "dietary kitchen meals"],
    ["zebra xylophone quokka"],
]


@pytest.fixture
def demo_postings(db, demo_index):
    """The demo tenants with their postings (the backfill is idempotent: once per session)."""
    for tenant_id in demo_index:
        backfill_postings(db, tenant_id)
    return demo_index


def _scope(conn: Any, pipeline: Any, tenant_id: str, as_of: date = AS_OF) -> legs.Scope:
    v = pipeline.versions
    base = {"tenant_id": tenant_id, **asdict(v), "as_of": as_of}
    assert legs.load_versions(conn, base, audit=False) or as_of < AS_OF
    return legs.Scope(
        tenant_id, v.parser_version, v.chunker_version, v.embedding_model_id, as_of=as_of
    )


def _eligible(conn: Any, scope: legs.Scope) -> list[str]:
    """The scope's eligible version ids (the reference rule, ELIGIBLE_VERSIONS)."""
    return sorted(legs.load_versions(conn, scope.params(), audit=scope.audit))


def _both_statements(conn: Any, scope: legs.Scope, variants: list[list[str]]) -> tuple[Any, Any]:
    """The lexical leg's rows from the chunks (session 7's statement) and from the postings."""
    params = legs._lexical_params(scope, variants, RetrievalConfig())
    lexical = lexical_sql.lexical_statement(conn, params)
    assert lexical.statement is sql.LEXICAL_BM25_POSTINGS
    from_chunks = conn.execute(sql.LEXICAL_BM25, params).fetchall()
    hits, _df = lexical_sql.split_rows(conn.execute(lexical.statement, lexical.params).fetchall())
    return sorted(from_chunks), sorted(hits)


def test_postings_are_one_per_chunk_term(db, real_pipeline, demo_postings):
    for tenant_id in demo_postings:
        with db.tenant(tenant_id) as conn:
            expected = conn.execute(
                "SELECT c.id, t.term, t.tf::int, c.term_count, c.doc_version_id "
                "FROM chunks c, jsonb_each_text(c.term_freqs) t(term, tf) "
                "WHERE c.tenant_id = %s ORDER BY 1, 2",
                (tenant_id,),
            ).fetchall()
            stored = conn.execute(
                "SELECT chunk_pk, term, tf, term_count, doc_version_id FROM chunk_postings "
                "WHERE tenant_id = %s ORDER BY 1, 2",
                (tenant_id,),
            ).fetchall()
            totals = conn.execute(
                "SELECT b.term_total, (SELECT sum(c.term_count) FROM chunks c "
                "WHERE c.tenant_id = b.tenant_id AND c.doc_version_id = b.doc_version_id "
                "AND c.parser_version = b.parser_version "
                "AND c.chunker_version = b.chunker_version) "
                "FROM doc_builds b WHERE b.tenant_id = %s AND b.state = 'indexed'",
                (tenant_id,),
            ).fetchall()
        assert expected and stored == expected, tenant_id
        assert totals and all(total == (chunks or 0) for total, chunks in totals), totals


@pytest.mark.parametrize("as_of", [AS_OF, date(2025, 3, 1)])
def test_the_postings_give_the_chunk_statements_ranking_and_statistics(
    db, real_pipeline, demo_postings, as_of
):
    compared = 0
    for tenant_id in demo_postings:
        with db.tenant(tenant_id) as conn:
            conn.execute(sql.FORCE_CUSTOM_PLANS)
            scope = _scope(conn, real_pipeline, tenant_id, as_of)
            for question in QUESTIONS:
                variants = [analyze(text) for text in question]
                old, new = _both_statements(conn, scope, variants)
                assert [r[:2] for r in new] == [r[:2] for r in old], (tenant_id, question)
                assert [r[2] for r in new] == pytest.approx([r[2] for r in old], rel=1e-12)
                compared += len(old)
                terms = sorted({t for v in variants for t in v})
                params = {**scope.params(), "terms": terms}
                params["any_term"] = lexical_sql.any_term_query(terms)
                n, avgdl = conn.execute(sql.COUNT_SCOPE, params).fetchone()
                old_df = sorted(conn.execute(sql.TERM_STATS, params).fetchall())
                new_n, new_avgdl, new_df = lexical_sql.term_stats(conn, scope.params(), terms)
                assert (new_n, new_avgdl, sorted(new_df)) == (n, avgdl, old_df)
    assert compared > 20 or as_of < AS_OF, compared


def test_a_build_without_postings_is_served_from_the_chunks(db, real_pipeline, demo_postings):
    variants = [analyze(QUESTIONS[0][0])]
    with db.tenant("alpine-treks") as conn:
        scope = _scope(conn, real_pipeline, "alpine-treks")
        served = legs.lexical_leg(conn, scope, variants, RetrievalConfig())
        idf = legs.term_idf(conn, scope, variants[0])
        with conn.transaction(force_rollback=True):
            conn.execute(
                "UPDATE doc_builds SET term_total = NULL WHERE doc_version_id = %s",
                (min(_eligible(conn, scope)),),
            )
            params = legs._lexical_params(scope, variants, RetrievalConfig())
            statement = lexical_sql.lexical_statement(conn, params).statement
            fallback = legs.lexical_leg(conn, scope, variants, RetrievalConfig())
            fallback_idf = legs.term_idf(conn, scope, variants[0])
    assert statement is sql.LEXICAL_BM25
    assert served and [r[:2] for r in fallback] == [r[:2] for r in served]
    assert [r[2] for r in fallback] == pytest.approx([r[2] for r in served], rel=1e-12)
    assert fallback_idf == idf


def test_deleting_chunks_deletes_their_postings(db, demo_postings):
    with db.tenant("coastal-kayak") as conn:
        version = conn.execute("SELECT min(doc_version_id) FROM chunks").fetchone()[0]
        with conn.transaction(force_rollback=True):
            before = conn.execute(
                "SELECT count(*) FROM chunk_postings WHERE doc_version_id = %s", (version,)
            ).fetchone()[0]
            conn.execute("DELETE FROM chunks WHERE doc_version_id = %s", (version,))
            after = conn.execute(
                "SELECT count(*) FROM chunk_postings WHERE doc_version_id = %s", (version,)
            ).fetchone()[0]
    assert before > 0 and after == 0


def test_postings_are_tenant_scoped_for_the_application_role(db, demo_postings):
    with db.admin() as conn:
        flags = conn.execute(
            "SELECT relrowsecurity, relforcerowsecurity FROM pg_class WHERE relname = %s",
            ("chunk_postings",),
        ).fetchone()
        policies = conn.execute(
            "SELECT policyname FROM pg_policies WHERE tablename = 'chunk_postings' ORDER BY 1"
        ).fetchall()
        per_tenant = dict(
            conn.execute("SELECT tenant_id, count(*) FROM chunk_postings GROUP BY 1").fetchall()
        )
    assert flags == (True, True)
    assert [p[0] for p in policies] == ["owner_access", "tenant_isolation"]
    assert per_tenant.get("alpine-treks") and per_tenant.get("coastal-kayak")
    with db.tenant("alpine-treks") as conn:
        foreign = conn.execute(
            "SELECT count(*) FROM chunk_postings WHERE tenant_id = 'coastal-kayak'"
        ).fetchone()[0]
        seen = conn.execute("SELECT DISTINCT tenant_id FROM chunk_postings").fetchall()
        # The lexical statement asked for the other tenant's id returns nothing either.
        scope = legs.Scope("coastal-kayak", "p", "c", "m", as_of=AS_OF)
        params = {
            **legs._lexical_params(scope, [["wetsuit", "kayak"]], RetrievalConfig()),
            "n": 1.0,
            "avgdl": 1.0,
            "unique_terms": ["kayak", "wetsuit"],
        }
        stolen = conn.execute(sql.TERM_STATS_POSTINGS, params).fetchall()
    assert foreign == 0 and seen == [("alpine-treks",)]
    assert all(df == 0 for _, df in stolen)
    with pytest.raises(psycopg.errors.InsufficientPrivilege), db.tenant("alpine-treks") as conn:
        pk = conn.execute("SELECT min(id) FROM chunks").fetchone()[0]
        conn.execute(
            "INSERT INTO chunk_postings VALUES ('coastal-kayak', 'zz', %s, 'v', 'p', 'c', 1, 1)",
            (pk,),
        )


def test_the_application_role_reads_postings_through_the_btree(db, real_pipeline, demo_postings):
    with db.tenant("alpine-treks") as conn:
        conn.execute(sql.FORCE_CUSTOM_PLANS)
        conn.execute("SET LOCAL enable_seqscan = off")  # the demo tables are tiny
        scope = _scope(conn, real_pipeline, "alpine-treks")
        params = legs._lexical_params(scope, [analyze(QUESTIONS[1][0])], RetrievalConfig())
        lexical = lexical_sql.lexical_statement(conn, params)
        plan = json.dumps(
            conn.execute(f"EXPLAIN (FORMAT JSON) {lexical.statement}", lexical.params).fetchone()
        )
    assert '"Index Name": "chunk_postings_pkey"' in plan
    assert "term = ANY" in plan and "Index Only Scan" in plan


NEW_DOCUMENT = """
  - doc_id: ferry-notes
    doc_version_id: docv_ferry_notes_v1
    title: Ferry Notes
    category: faq
    source: ferry-notes.md
    last_reviewed_at: 2026-10-01
"""


def test_ingestion_writes_postings_only_for_a_tenant_that_keeps_them(db, tmp_path):
    pipeline = IngestionPipeline(db, FakeHashEmbedder())
    folder = copy_tenant(tmp_path, "coastal-kayak", "postings-optin")
    registration = pipeline.register(folder)
    tenant = registration.tenant_id
    for version in registration.registered:
        pipeline.run_all(tenant, version)
    count = "SELECT count(*) FROM chunk_postings"
    with db.tenant(tenant) as conn:
        assert conn.execute(count).fetchone() == (0,)
        kept = conn.execute("SELECT count(*) FROM doc_builds WHERE term_total IS NOT NULL")
        assert kept.fetchone() == (0,)
    assert backfill_postings(db, tenant).postings > 0
    with db.tenant(tenant) as conn:
        before = conn.execute(count).fetchone()[0]
    (folder / "ferry-notes.md").write_text(
        "# Ferry Notes\n\nThe water taxi to the launch beach leaves the marina at seven.\n", "utf-8"
    )
    with (folder / "kb.yaml").open("a", encoding="utf-8") as manifest:
        manifest.write(NEW_DOCUMENT)
    assert pipeline.register(folder).registered == [*registration.registered, "docv_ferry_notes_v1"]
    pipeline.run_all(tenant, "docv_ferry_notes_v1")
    with db.tenant(tenant) as conn:
        new = conn.execute(
            "SELECT count(*) FROM chunk_postings WHERE doc_version_id = 'docv_ferry_notes_v1'"
        ).fetchone()[0]
        total = conn.execute(
            "SELECT term_total FROM doc_builds WHERE doc_version_id = 'docv_ferry_notes_v1'"
        ).fetchone()[0]
        assert conn.execute(count).fetchone()[0] == before + new
    assert new > 0 and total and total > 0


def test_backfill_writes_what_ingestion_writes_and_resumes(db, tmp_path):
    pipeline = IngestionPipeline(db, FakeHashEmbedder())
    registration = pipeline.register(copy_tenant(tmp_path, "coastal-kayak", "postings-fill"))
    tenant = registration.tenant_id
    for version in registration.registered:
        pipeline.run_all(tenant, version)
    backfill_postings(db, tenant)
    read = (
        "SELECT term, chunk_pk, doc_version_id, parser_version, chunker_version, tf, term_count "
        "FROM chunk_postings ORDER BY 1, 2"
    )
    with db.tenant(tenant) as conn:
        written = conn.execute(read).fetchall()
        totals = conn.execute("SELECT doc_version_id, term_total FROM doc_builds ORDER BY 1")
        totals = totals.fetchall()
        # As if stored before migration 0010.
        conn.execute("DELETE FROM chunk_postings")
        conn.execute("UPDATE doc_builds SET term_total = NULL")
    pending = pending_versions(db, tenant)
    assert written and len(pending) >= 3

    def stop_after_two(done: int, total: int) -> None:
        if done == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        backfill_postings(db, tenant, batch=1, progress=stop_after_two)
    assert len(pending_versions(db, tenant)) == len(pending) - 2
    report = backfill_postings(db, tenant, batch=2)
    assert report.versions == len(pending) - 2 and report.postings > 0
    assert backfill_postings(db, tenant).versions == 0
    with db.tenant(tenant) as conn:
        assert conn.execute(read).fetchall() == written
        again = conn.execute("SELECT doc_version_id, term_total FROM doc_builds ORDER BY 1")
        assert again.fetchall() == totals


def test_stored_state_names_the_tenant_even_without_row_level_security(
    db, real_pipeline, demo_index
):
    # The owner role's policy lets it see every tenant: the statements' own filter must scope.
    with db.admin() as conn:
        stored = stored_state.registered_versions(conn, "coastal-kayak", real_pipeline.versions)
        settled = stored_state.settled_builds(
            conn,
            "coastal-kayak",
            real_pipeline.versions,
            [*demo_index["alpine-treks"], *demo_index["coastal-kayak"]],
            sentence_vectors=False,
            failed_parse_hash="failed_parse_hash",
        )
    assert set(stored) == set(demo_index["coastal-kayak"])
    assert settled and set(settled) <= set(demo_index["coastal-kayak"])
