"""Least-privilege roles on the real embedded server: the application role cannot escape its tenant."""

from __future__ import annotations

import psycopg
import pytest

SERVER_ESCAPES = [
    "SET ROLE postgres",
    "SET ROLE kb_owner",
    "SET SESSION AUTHORIZATION postgres",
    "SET SESSION AUTHORIZATION kb_owner",
    "COPY (SELECT 1) TO PROGRAM 'true'",
    "SELECT pg_read_file('postgresql.conf')",
    "SELECT pg_ls_dir('.')",
    "SELECT key FROM tenant_scope_key",
    "CREATE TABLE public.planted (x int)",
    "ALTER TABLE chunks DISABLE ROW LEVEL SECURITY",
    "DROP POLICY tenant_isolation ON chunks",
    "INSERT INTO tenants (tenant_id) VALUES ('planted-co')",
    "SELECT * FROM eval_case_results",
]


@pytest.fixture(scope="module")
def two_tenants(db) -> tuple[str, str]:
    db.ensure_tenant("sec-alpha")
    db.ensure_tenant("sec-beta")
    with db.tenant("sec-beta") as conn:
        conn.execute(
            "INSERT INTO doc_versions (tenant_id, doc_version_id, doc_id, title, category, "
            "source_type, content_hash) VALUES ('sec-beta', 'beta_secret_v1', 'beta_secret', "
            "'Beta secret', 'faq', 'entries', 'sha256:beta') ON CONFLICT DO NOTHING"
        )
    return "sec-alpha", "sec-beta"


def test_roles_are_least_privilege(db):
    with db.admin() as conn:
        rows = conn.execute(
            "SELECT rolname, rolsuper, rolbypassrls, rolcreaterole, rolcreatedb, rolcanlogin "
            "FROM pg_roles WHERE rolname IN ('kb_owner', 'kb_app') ORDER BY rolname"
        ).fetchall()
        assert rows == [
            ("kb_app", False, False, False, False, True),
            ("kb_owner", False, True, False, True, True),
        ]
        owners = {
            row[0]
            for row in conn.execute(
                "SELECT DISTINCT pg_get_userbyid(c.relowner) FROM pg_class c "
                "JOIN pg_namespace n ON n.oid = c.relnamespace "
                "WHERE n.nspname = 'public' AND c.relkind IN ('r', 'S')"
            )
        }
        assert owners == {"kb_owner"}
        memberships = conn.execute(
            "SELECT pg_has_role('kb_app', 'kb_owner', 'MEMBER'), "
            "pg_has_role('kb_app', 'postgres', 'MEMBER')"
        ).fetchone()
        assert memberships == (False, False)
        assert conn.execute("SELECT current_user").fetchone()[0] == "kb_owner"
    db.ensure_tenant("sec-alpha")
    with db.tenant("sec-alpha") as conn:
        assert conn.execute("SELECT current_user, session_user").fetchone() == ("kb_app", "kb_app")


@pytest.mark.parametrize("statement", SERVER_ESCAPES)
def test_application_role_cannot_escape(db, two_tenants, statement):
    with pytest.raises(psycopg.errors.InsufficientPrivilege), db.tenant(two_tenants[0]) as conn:
        conn.execute(statement)


def test_reset_role_stays_the_application_role(db, two_tenants):
    alpha = two_tenants[0]
    with db.tenant(alpha) as conn:
        conn.execute("RESET ROLE")
        conn.execute("RESET SESSION AUTHORIZATION")
        assert conn.execute("SELECT current_user").fetchone()[0] == "kb_app"
        assert conn.execute("SELECT tenant_id FROM tenants").fetchall() == [(alpha,)]
        assert conn.execute("SELECT count(*) FROM doc_versions").fetchone()[0] == 0


def test_naming_another_tenant_without_its_proof_sees_nothing(db, two_tenants):
    alpha, beta = two_tenants
    with db.tenant(alpha) as conn:
        own_proof = conn.execute("SELECT current_setting('kb.tenant_proof')").fetchone()[0]
        conn.execute("SELECT set_config('kb.tenant_id', %s, true)", (beta,))
        assert conn.execute("SELECT kb_current_tenant()").fetchone()[0] is None
        assert conn.execute("SELECT count(*) FROM doc_versions").fetchone()[0] == 0
        assert conn.execute("SELECT count(*) FROM tenants").fetchone()[0] == 0
        conn.execute("SELECT set_config('kb.tenant_proof', %s, true)", (own_proof,))
        assert conn.execute("SELECT count(*) FROM doc_versions").fetchone()[0] == 0
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute(
                "INSERT INTO doc_versions (tenant_id, doc_version_id, doc_id, title, category, "
                "source_type, content_hash) VALUES ('sec-beta', 'planted_v1', 'p', 'p', 'faq', "
                "'entries', 'sha256:p')"
            )
    with db.tenant(beta) as conn:
        assert conn.execute("SELECT count(*) FROM doc_versions").fetchone()[0] == 1
    app = db.connect(app=True)
    try:
        assert app.execute("SELECT count(*) FROM doc_versions").fetchone()[0] == 0
    finally:
        app.close()


def test_foreign_keys_cannot_point_at_another_tenant(db, two_tenants):
    with db.admin() as conn:
        conn.execute(
            "INSERT INTO chunks (tenant_id, doc_version_id, doc_id, category, parser_version, "
            "chunker_version, chunk_id, chunk_index, source_locator, token_count, text, text_hash, "
            "policy_likeness_hint, term_count, term_freqs, tsv) VALUES ('sec-beta', "
            "'beta_secret_v1', 'beta_secret', 'faq', 'p', 'c', 'beta_secret_v1_000', 0, 'x', 1, "
            "'t', 'h', 'none', 1, '{}', ''::tsvector) ON CONFLICT DO NOTHING"
        )
        beta_chunk = conn.execute(
            "SELECT id FROM chunks WHERE tenant_id = 'sec-beta' AND chunk_id = 'beta_secret_v1_000'"
        ).fetchone()[0]
    with pytest.raises(psycopg.errors.ForeignKeyViolation), db.admin() as conn:
        conn.execute(
            "INSERT INTO chunk_vectors (chunk_pk, tenant_id, doc_version_id, chunker_version, "
            "chunk_id, embedding_model_id, window_index, embedding) VALUES "
            "(%s, 'sec-alpha', 'beta_secret_v1', 'c', 'beta_secret_v1_000', 'm', 0, %s)",
            (beta_chunk, "[" + ",".join(["0"] * 384) + "]"),
        )


def test_every_tenant_table_follows_the_pattern(db):
    """A table with a tenant_id column: RLS enabled and forced, tenant policy on the proof."""
    with db.admin() as conn:
        tables = conn.execute(
            "SELECT c.relname, c.relrowsecurity, c.relforcerowsecurity, "
            "(SELECT array_agg(p.polname::text ORDER BY p.polname) FROM pg_policy p "
            " WHERE p.polrelid = c.oid), "
            "(SELECT bool_and(pg_get_expr(p.polqual, p.polrelid) LIKE '%kb_current_tenant()%' "
            "                 AND pg_get_expr(p.polwithcheck, p.polrelid) LIKE '%kb_current_tenant()%') "
            " FROM pg_policy p WHERE p.polrelid = c.oid AND p.polname = 'tenant_isolation') "
            "FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = 'tenant_id' "
            "WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') ORDER BY c.relname"
        ).fetchall()
    names = {row[0] for row in tables}
    assert {
        "tenants",
        "chunks",
        "chunk_vectors",
        "chunk_postings",
        "build_eligibility",
        "eval_case_results",
        "retrieval_audit",
    } <= names
    for name, enabled, forced, policies, keyed in tables:
        assert enabled and forced, name
        assert policies == ["owner_access", "tenant_isolation"], (name, policies)
        assert keyed, name


def test_new_tables_are_granted_to_the_application_role(db):
    with db.admin() as conn:
        defaults = conn.execute(
            "SELECT defaclobjtype, array_to_string(defaclacl, ',') FROM pg_default_acl "
            "WHERE pg_get_userbyid(defaclrole) = 'kb_owner' ORDER BY defaclobjtype"
        ).fetchall()
    kinds = {kind: acl for kind, acl in defaults}
    assert "kb_app=arwd/kb_owner" in kinds["r"]
    assert "kb_app=rU/kb_owner" in kinds["S"]
