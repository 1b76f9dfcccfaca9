-- Least privilege (issue 9): this migration runs as the owner role (kb_owner, which owns every
-- table); application sessions log in as kb_app, which is neither superuser, nor owner, nor
-- BYPASSRLS. A tenant session proves its tenant with kb.tenant_id plus kb.tenant_proof, a keyed
-- hash of the tenant id; the key is readable only by the owner, so SQL run as kb_app cannot
-- name another tenant. Every table with a tenant_id column follows the same pattern (RLS
-- ENABLE + FORCE, policy tenant_isolation on kb_current_tenant(), policy owner_access).

CREATE TABLE tenant_scope_key (
    singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    key       bytea NOT NULL CHECK (length(key) = 32)
);
INSERT INTO tenant_scope_key (key)
VALUES (decode(replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''), 'hex'));
REVOKE ALL ON tenant_scope_key FROM PUBLIC;

-- The tenant of this transaction, or NULL when the proof is missing or wrong.
CREATE FUNCTION kb_current_tenant() RETURNS text
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, public, pg_temp
AS $$
    SELECT s.tenant
    FROM (SELECT current_setting('kb.tenant_id', true) AS tenant,
                 current_setting('kb.tenant_proof', true) AS proof) AS s,
         tenant_scope_key AS k
    WHERE s.tenant IS NOT NULL AND s.proof IS NOT NULL
      AND encode(sha256(k.key || sha256(k.key || convert_to(s.tenant, 'UTF8'))), 'hex') = s.proof
$$;
REVOKE ALL ON FUNCTION kb_current_tenant() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION kb_current_tenant() TO kb_app;

-- Foreign keys that cannot cross tenants.
ALTER TABLE chunks ADD CONSTRAINT chunks_id_tenant UNIQUE (id, tenant_id);
ALTER TABLE chunk_vectors DROP CONSTRAINT chunk_vectors_chunk_pk_fkey;
ALTER TABLE chunk_vectors ADD CONSTRAINT chunk_vectors_chunk_tenant_fkey
    FOREIGN KEY (chunk_pk, tenant_id) REFERENCES chunks (id, tenant_id) ON DELETE CASCADE;
ALTER TABLE embedding_cache ADD CONSTRAINT embedding_cache_tenant_fkey
    FOREIGN KEY (tenant_id) REFERENCES tenants (tenant_id);

-- Every table with a tenant_id column: row-level security keyed on the proven tenant.
DO $$
DECLARE
    t text;
BEGIN
    FOR t IN
        SELECT c.relname FROM pg_class c
        JOIN pg_namespace n ON n.oid = c.relnamespace
        JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = 'tenant_id' AND NOT a.attisdropped
        WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p')
        ORDER BY c.relname
    LOOP
        EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t);
        EXECUTE format('DROP POLICY IF EXISTS tenant_isolation ON %I', t);
        EXECUTE format(
            'CREATE POLICY tenant_isolation ON %I USING (tenant_id = (SELECT kb_current_tenant())) '
            'WITH CHECK (tenant_id = (SELECT kb_current_tenant()))', t);
        EXECUTE format('CREATE POLICY owner_access ON %I TO %I USING (true) WITH CHECK (true)',
                       t, current_user);
    END LOOP;
END
$$;

-- The application role: only what tenant sessions need.
REVOKE ALL ON eval_runs, eval_case_results, schema_migrations FROM kb_app;
REVOKE INSERT, UPDATE, DELETE ON tenants, releases FROM kb_app;
REVOKE CREATE ON SCHEMA public FROM PUBLIC;

-- Tables and sequences the owner creates later are granted to the application role; their
-- rows stay guarded only if the new table follows the pattern above (docs/security.md).
ALTER DEFAULT PRIVILEGES IN SCHEMA public
    GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO kb_app;
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT USAGE, SELECT ON SEQUENCES TO kb_app;
