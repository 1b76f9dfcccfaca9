-- Bearer tokens of the HTTP/MCP service (`kb serve`): each bound to one tenant, stored only as
-- the sha256 of its secret (the secret is shown once, by `kb token create`), revocable.
-- A token is looked up before the tenant is known, so only the owner's session (Database.admin)
-- reads or writes it: kb_app's default grants are revoked. The table still follows the pattern of
-- every table with a tenant_id (docs/security.md): RLS forced, tenant_isolation, owner_access.
-- No foreign key to tenants: a token may be created before the tenant's first ingestion
-- (requests then answer 404 for the tenant until it is ingested).

CREATE TABLE api_tokens (
    token_id     text PRIMARY KEY CHECK (token_id ~ '^tok_[0-9a-f]{12}$'),
    tenant_id    text NOT NULL CHECK (tenant_id ~ '^[a-z0-9][a-z0-9_-]{1,62}$'),
    token_sha256 text NOT NULL UNIQUE CHECK (token_sha256 ~ '^[0-9a-f]{64}$'),
    label        text,
    created_at   timestamptz NOT NULL DEFAULT now(),
    revoked_at   timestamptz
);

CREATE INDEX api_tokens_tenant ON api_tokens (tenant_id);

REVOKE ALL ON api_tokens FROM kb_app;
ALTER TABLE api_tokens ENABLE ROW LEVEL SECURITY;
ALTER TABLE api_tokens FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON api_tokens USING (tenant_id = (SELECT kb_current_tenant()))
    WITH CHECK (tenant_id = (SELECT kb_current_tenant()));
DO $$
BEGIN
    EXECUTE format('CREATE POLICY owner_access ON api_tokens TO %I USING (true) WITH CHECK (true)',
                   current_user);
END
$$;
