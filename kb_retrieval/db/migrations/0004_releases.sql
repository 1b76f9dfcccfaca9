-- Releases (issue 4): an immutable combination of parser, chunker and embedding versions and the
-- retrieval configuration. Retrieval serves the rows of the active release; at most one release
-- is active (partial unique index). Not tenant-scoped: a release spans every tenant.

CREATE TABLE releases (
    release_id   text PRIMARY KEY,
    components   jsonb NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    promoted_at  timestamptz,
    active       boolean NOT NULL DEFAULT false,
    dropped_at   timestamptz,
    CHECK (NOT (active AND dropped_at IS NOT NULL))
);
CREATE UNIQUE INDEX releases_one_active ON releases (active) WHERE active;

CREATE INDEX eval_runs_release ON eval_runs (release_id, created_at);

GRANT SELECT ON releases TO kb_app;
