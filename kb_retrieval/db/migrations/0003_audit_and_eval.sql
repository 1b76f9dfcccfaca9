-- Telemetry of every retrieval (002 item 6) and stored evaluation runs with per-case results.

CREATE TABLE retrieval_audit (
    id               bigserial PRIMARY KEY,
    tenant_id        text NOT NULL REFERENCES tenants (tenant_id),
    config_version   text NOT NULL,
    as_of            date NOT NULL,
    query_hash       text NOT NULL,
    email_text       text,
    outcome          text NOT NULL,
    reason_codes     text[] NOT NULL,
    flags            jsonb NOT NULL,
    vector_max       double precision,
    keyword_max      double precision,
    confidence_top   double precision,
    candidate_count  integer NOT NULL,
    pack_size        integer NOT NULL,
    floors           jsonb NOT NULL,
    used_rerank      boolean NOT NULL DEFAULT false,
    cache_hit        boolean NOT NULL DEFAULT false,
    timings_ms       jsonb NOT NULL,
    created_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX retrieval_audit_tenant_time ON retrieval_audit (tenant_id, created_at);

CREATE TABLE eval_runs (
    run_id          text PRIMARY KEY,
    kind            text NOT NULL,
    golden_path     text,
    golden_sha256   text,
    as_of           date,
    config_version  text,
    release_id      text,
    metrics         jsonb NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE eval_case_results (
    run_id      text NOT NULL REFERENCES eval_runs (run_id) ON DELETE CASCADE,
    case_id     text NOT NULL,
    tenant_id   text NOT NULL,
    result      jsonb NOT NULL,
    PRIMARY KEY (run_id, case_id)
);

GRANT SELECT, INSERT ON retrieval_audit TO kb_app;
GRANT USAGE, SELECT ON SEQUENCE retrieval_audit_id_seq TO kb_app;
ALTER TABLE retrieval_audit ENABLE ROW LEVEL SECURITY;
ALTER TABLE retrieval_audit FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON retrieval_audit
    USING (tenant_id = current_setting('kb.tenant_id', true))
    WITH CHECK (tenant_id = current_setting('kb.tenant_id', true));
