-- Eligibility of indexed builds as of any date (issue 11): one row per indexed build with the
-- dates that decide whether retrieval may cite its version, so that the PostgreSQL path joins
-- this table in each statement instead of sending the eligible version ids (34k for a 100k-chunk
-- tenant) as an array. A version is eligible as of D for a pipeline when its build is indexed,
-- effective_from <= D, and (outside audit mode) D < superseded_from: the earliest effective date
-- of a version superseding it with an indexed build of the same pipeline ('-infinity' for one
-- without a date, 'infinity' when none), exactly as ELIGIBLE_VERSIONS decides it.
-- chunk_count, window_count and term_total are copied from the build: N, avgdl and the vector
-- leg's exact-or-index choice are one pass over this table.
-- Row triggers on doc_builds and doc_versions keep it, in the writer's transaction, whoever
-- writes (ingestion, backfill, benchmark builds, a hand-written UPDATE), as the generation
-- triggers of 0005 do. Tenant table pattern of docs/security.md.

CREATE TABLE build_eligibility (
    tenant_id          text NOT NULL,
    parser_version     text NOT NULL,
    chunker_version    text NOT NULL,
    embedding_model_id text NOT NULL,
    doc_version_id     text NOT NULL,
    effective_from     date NOT NULL,
    superseded_from    date NOT NULL,
    chunk_count        integer NOT NULL,
    window_count       integer NOT NULL,
    term_total         bigint,
    PRIMARY KEY (tenant_id, parser_version, chunker_version, embedding_model_id, doc_version_id),
    FOREIGN KEY (tenant_id, doc_version_id) REFERENCES doc_versions (tenant_id, doc_version_id)
        ON DELETE CASCADE
);
-- A version's rows, whatever the pipeline (the triggers' refresh).
CREATE INDEX build_eligibility_version ON build_eligibility (tenant_id, doc_version_id);

ALTER TABLE build_eligibility ENABLE ROW LEVEL SECURITY;
ALTER TABLE build_eligibility FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON build_eligibility
    USING (tenant_id = (SELECT kb_current_tenant()))
    WITH CHECK (tenant_id = (SELECT kb_current_tenant()));
DO $$
BEGIN
    EXECUTE format(
        'CREATE POLICY owner_access ON build_eligibility TO %I USING (true) WITH CHECK (true)',
        current_user);
END
$$;

-- The rows of one version (every pipeline), recomputed from doc_builds and doc_versions.
CREATE FUNCTION refresh_build_eligibility(tid text, vid text) RETURNS void
LANGUAGE sql AS $$
    DELETE FROM build_eligibility WHERE tenant_id = tid AND doc_version_id = vid;
    INSERT INTO build_eligibility
    SELECT b.tenant_id, b.parser_version, b.chunker_version, b.embedding_model_id,
           b.doc_version_id, coalesce(v.effective_date, '-infinity'::date),
           coalesce((
               SELECT min(coalesce(n.effective_date, '-infinity'::date))
               FROM doc_versions n
               JOIN doc_builds nb ON nb.tenant_id = n.tenant_id
                    AND nb.doc_version_id = n.doc_version_id
               WHERE n.tenant_id = tid AND n.supersedes_doc_version_id = vid
                 AND nb.state = 'indexed' AND nb.parser_version = b.parser_version
                 AND nb.chunker_version = b.chunker_version
                 AND nb.embedding_model_id = b.embedding_model_id
           ), 'infinity'::date),
           b.chunk_count, b.window_count, b.term_total
    FROM doc_builds b
    JOIN doc_versions v ON v.tenant_id = b.tenant_id AND v.doc_version_id = b.doc_version_id
    WHERE b.tenant_id = tid AND b.doc_version_id = vid AND b.state = 'indexed';
$$;

-- A build changed: its version's rows, and those of the version it supersedes.
CREATE FUNCTION build_eligibility_on_build() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    r record;
BEGIN
    FOR r IN
        SELECT DISTINCT x.tid, x.vid FROM (
            SELECT OLD.tenant_id, OLD.doc_version_id WHERE TG_OP <> 'INSERT'
            UNION ALL
            SELECT NEW.tenant_id, NEW.doc_version_id WHERE TG_OP <> 'DELETE'
        ) AS x (tid, vid)
    LOOP
        PERFORM refresh_build_eligibility(r.tid, r.vid);
        PERFORM refresh_build_eligibility(r.tid, v.supersedes_doc_version_id)
        FROM doc_versions v
        WHERE v.tenant_id = r.tid AND v.doc_version_id = r.vid
          AND v.supersedes_doc_version_id IS NOT NULL;
    END LOOP;
    RETURN NULL;
END
$$;

-- A version changed (dates, what it supersedes): its rows, and those of the versions it
-- superseded before and after.
CREATE FUNCTION build_eligibility_on_version() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    r record;
BEGIN
    FOR r IN
        SELECT DISTINCT x.tid, x.vid FROM (
            SELECT OLD.tenant_id, OLD.doc_version_id WHERE TG_OP = 'UPDATE'
            UNION ALL
            SELECT NEW.tenant_id, NEW.doc_version_id WHERE TG_OP <> 'DELETE'
            UNION ALL
            SELECT OLD.tenant_id, OLD.supersedes_doc_version_id WHERE TG_OP <> 'INSERT'
            UNION ALL
            SELECT NEW.tenant_id, NEW.supersedes_doc_version_id WHERE TG_OP <> 'DELETE'
        ) AS x (tid, vid)
        WHERE x.vid IS NOT NULL
    LOOP
        PERFORM refresh_build_eligibility(r.tid, r.vid);
    END LOOP;
    RETURN NULL;
END
$$;

CREATE TRIGGER doc_builds_eligibility
    AFTER INSERT OR DELETE OR UPDATE OF tenant_id, doc_version_id, parser_version,
        chunker_version, embedding_model_id, state, chunk_count, window_count, term_total
    ON doc_builds FOR EACH ROW EXECUTE FUNCTION build_eligibility_on_build();
CREATE TRIGGER doc_versions_eligibility
    AFTER INSERT OR DELETE OR UPDATE OF tenant_id, doc_version_id, effective_date,
        supersedes_doc_version_id
    ON doc_versions FOR EACH ROW EXECUTE FUNCTION build_eligibility_on_version();

-- The rows of the builds indexed before this migration, in one pass.
INSERT INTO build_eligibility
SELECT b.tenant_id, b.parser_version, b.chunker_version, b.embedding_model_id, b.doc_version_id,
       coalesce(v.effective_date, '-infinity'::date), coalesce(s.superseded_from, 'infinity'::date),
       b.chunk_count, b.window_count, b.term_total
FROM doc_builds b
JOIN doc_versions v ON v.tenant_id = b.tenant_id AND v.doc_version_id = b.doc_version_id
LEFT JOIN (
    SELECT n.tenant_id, n.supersedes_doc_version_id AS doc_version_id, nb.parser_version,
           nb.chunker_version, nb.embedding_model_id,
           min(coalesce(n.effective_date, '-infinity'::date)) AS superseded_from
    FROM doc_versions n
    JOIN doc_builds nb ON nb.tenant_id = n.tenant_id AND nb.doc_version_id = n.doc_version_id
    WHERE n.supersedes_doc_version_id IS NOT NULL AND nb.state = 'indexed'
    GROUP BY 1, 2, 3, 4, 5
) s ON s.tenant_id = b.tenant_id AND s.doc_version_id = b.doc_version_id
   AND s.parser_version = b.parser_version AND s.chunker_version = b.chunker_version
   AND s.embedding_model_id = b.embedding_model_id
WHERE b.state = 'indexed';
