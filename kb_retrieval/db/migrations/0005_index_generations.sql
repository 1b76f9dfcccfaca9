-- A per-tenant counter that changes whenever anything retrieval can see may have changed:
-- a document version registered or edited, a build changing state (published, failed,
-- rebuilt) or removed. Row triggers keep it, so every writer (pipeline, backfill, benchmark,
-- a hand-written UPDATE) bumps it inside its own transaction. Retrieval keeps in-memory
-- search snapshots per tenant and reloads one when the tenant's generation moves on.

CREATE TABLE index_generations (
    tenant_id  text PRIMARY KEY REFERENCES tenants (tenant_id),
    generation bigint NOT NULL DEFAULT 1
);

GRANT SELECT, INSERT, UPDATE ON index_generations TO kb_app;
ALTER TABLE index_generations ENABLE ROW LEVEL SECURITY;
ALTER TABLE index_generations FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON index_generations
    USING (tenant_id = current_setting('kb.tenant_id', true))
    WITH CHECK (tenant_id = current_setting('kb.tenant_id', true));

CREATE FUNCTION bump_index_generation() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    tid text;
BEGIN
    IF TG_OP = 'DELETE' THEN
        tid := OLD.tenant_id;
    ELSE
        tid := NEW.tenant_id;
    END IF;
    INSERT INTO index_generations AS g (tenant_id) VALUES (tid)
    ON CONFLICT (tenant_id) DO UPDATE SET generation = g.generation + 1;
    IF TG_OP = 'UPDATE' AND OLD.tenant_id IS DISTINCT FROM NEW.tenant_id THEN
        INSERT INTO index_generations AS g (tenant_id) VALUES (OLD.tenant_id)
        ON CONFLICT (tenant_id) DO UPDATE SET generation = g.generation + 1;
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER doc_versions_generation AFTER INSERT OR UPDATE OR DELETE ON doc_versions
    FOR EACH ROW EXECUTE FUNCTION bump_index_generation();
CREATE TRIGGER doc_builds_generation AFTER INSERT OR UPDATE OR DELETE ON doc_builds
    FOR EACH ROW EXECUTE FUNCTION bump_index_generation();

INSERT INTO index_generations (tenant_id) SELECT tenant_id FROM tenants ON CONFLICT DO NOTHING;
