-- Bearer tokens of the HTTP/MCP service (`kb serve`): each bound to one tenant, stored only as
-- the sha256 of its secret (the secret is shown once, by `kb token create`), revocable.
-- A token is looked up before the tenant is known, so this table has no row-level security
-- and no grant to kb_app: only the owner's session (Database.admin) reads or writes it.
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
