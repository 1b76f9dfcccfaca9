-- Leave-one-operator-out figures of a release (issue 12): the run is a row of eval_runs
-- (kind 'release_generalisation', metrics = the pooled figures, per-case results in
-- eval_case_results); this table holds one row per held-out operator: its golden file, the
-- date its cases were judged at, its figures and the model fitted without it.
-- Release-level evaluation data: only the owner's session (Database.admin) reads or writes it,
-- kb_app's default grants are revoked. It still follows the pattern of every table with a
-- tenant_id (docs/security.md): RLS forced, tenant_isolation, owner_access.

CREATE TABLE eval_operator_results (
    run_id       text NOT NULL REFERENCES eval_runs (run_id) ON DELETE CASCADE,
    tenant_id    text NOT NULL REFERENCES tenants (tenant_id),
    golden_path  text NOT NULL,
    as_of        date NOT NULL,
    figures      jsonb NOT NULL,
    model        jsonb,
    PRIMARY KEY (run_id, tenant_id)
);

REVOKE ALL ON eval_operator_results FROM kb_app;
ALTER TABLE eval_operator_results ENABLE ROW LEVEL SECURITY;
ALTER TABLE eval_operator_results FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON eval_operator_results
    USING (tenant_id = (SELECT kb_current_tenant()))
    WITH CHECK (tenant_id = (SELECT kb_current_tenant()));
DO $$
BEGIN
    EXECUTE format(
        'CREATE POLICY owner_access ON eval_operator_results TO %I USING (true) WITH CHECK (true)',
        current_user);
END
$$;
