"""`kb index build | status | drop | postings` on the test server (issue 11)."""

from __future__ import annotations

import json

from kb_retrieval.retrieval.vector_index import index_name


def _status(kb_cli, tenant: str) -> dict:
    result = kb_cli("index", "status", "--tenant", tenant, "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_kb_index_builds_reports_and_drops_a_tenant_vector_index(kb_cli, db):
    tenant = "coastal-kayak"
    name = index_name(tenant)
    assert kb_cli("index", "postings", "--tenant", tenant).exit_code == 0  # opt in
    assert _status(kb_cli, tenant)["vector_index"] is None
    built = kb_cli("index", "build", "--tenant", tenant, "--lists", "2")
    try:
        assert built.exit_code == 0, built.output
        assert built.stdout.startswith(f"created: {name} on {tenant} (lists 2, ")
        again = kb_cli("index", "build", "--tenant", tenant)
        assert again.stdout.startswith(f"exists: {name} on {tenant} (lists 2, ")
        status = _status(kb_cli, tenant)
        assert status["vector_index"] == name and status["lists"] == 2 and status["vectors"] > 0
        assert status["versions_without_postings"] == 0
        with db.admin() as conn:
            definition = conn.execute(
                "SELECT indexdef FROM pg_indexes WHERE indexname = %s", (name,)
            ).fetchone()
        assert definition and f"WHERE (tenant_id = '{tenant}'::text)" in definition[0]
        # The other tenant's status is its own.
        assert _status(kb_cli, "alpine-treks")["vector_index"] is None
    finally:
        dropped = kb_cli("index", "drop", "--tenant", tenant)
    assert dropped.stdout.strip() == f"dropped the vector index of {tenant}"
    assert _status(kb_cli, tenant)["vector_index"] is None
    assert kb_cli("index", "drop", "--tenant", tenant).stdout.strip() == f"{tenant} had no index"


def test_kb_index_refuses_an_unknown_tenant(kb_cli):
    for command in ("build", "status", "drop", "postings"):
        result = kb_cli("index", command, "--tenant", "no-such-tenant")
        assert result.exit_code == 2, (command, result.output)
        assert "unknown tenant 'no-such-tenant'" in result.output


def test_kb_index_postings_backfills_a_tenant_that_lacks_them(kb_cli, db):
    tenant = "alpine-treks"
    assert kb_cli("index", "postings", "--tenant", tenant).exit_code == 0  # opt in
    with db.tenant(tenant) as conn:
        version = conn.execute("SELECT min(doc_version_id) FROM chunks").fetchone()[0]
        before = conn.execute(
            "SELECT term, chunk_pk, tf, term_count FROM chunk_postings "
            "WHERE doc_version_id = %s ORDER BY 1, 2",
            (version,),
        ).fetchall()
        conn.execute("DELETE FROM chunk_postings WHERE doc_version_id = %s", (version,))
        conn.execute(
            "UPDATE doc_builds SET term_total = NULL WHERE doc_version_id = %s", (version,)
        )
    assert _status(kb_cli, tenant)["versions_without_postings"] == 1
    result = kb_cli("index", "postings", "--tenant", tenant)
    assert result.exit_code == 0, result.output
    assert f"{tenant}: 1 versions backfilled, {len(before)} postings" in result.stdout
    assert _status(kb_cli, tenant)["versions_without_postings"] == 0
    with db.tenant(tenant) as conn:
        after = conn.execute(
            "SELECT term, chunk_pk, tf, term_count FROM chunk_postings "
            "WHERE doc_version_id = %s ORDER BY 1, 2",
            (version,),
        ).fetchall()
    assert before and after == before
