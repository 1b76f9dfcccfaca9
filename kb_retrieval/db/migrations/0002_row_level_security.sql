-- Tenant isolation enforced by the database: application sessions run as role kb_app with
-- kb.tenant_id set for the transaction; a query that forgets its WHERE clause still only sees
-- that tenant's rows. FORCE makes the policies apply to the tables' owner as well.

DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'kb_app') THEN
        CREATE ROLE kb_app NOLOGIN;
    END IF;
END
$$;

DO $$
BEGIN
    EXECUTE format('GRANT kb_app TO %I', current_user);
EXCEPTION WHEN others THEN
    RAISE NOTICE 'could not grant kb_app to %: %', current_user, SQLERRM;
END
$$;

GRANT USAGE ON SCHEMA public TO kb_app;
GRANT SELECT ON tenants TO kb_app;
GRANT SELECT, INSERT, UPDATE, DELETE
    ON doc_versions, doc_builds, doc_parses, chunks, chunk_vectors, embedding_cache TO kb_app;
GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO kb_app;

DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['doc_versions', 'doc_builds', 'doc_parses', 'chunks',
                             'chunk_vectors', 'embedding_cache']
    LOOP
        EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t);
        EXECUTE format(
            'CREATE POLICY tenant_isolation ON %I USING (tenant_id = current_setting(''kb.tenant_id'', true)) '
            'WITH CHECK (tenant_id = current_setting(''kb.tenant_id'', true))', t);
    END LOOP;
END
$$;
