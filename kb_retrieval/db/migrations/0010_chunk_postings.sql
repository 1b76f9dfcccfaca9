-- BM25 postings (issue 11): one row per (chunk, analyzer term) with the term frequency and the
-- chunk's length, so that the PostgreSQL path's lexical leg reads the query terms' postings
-- from a btree instead of every chunk of the tenant. Under row-level security `kb_app` can use
-- an index only for leakproof operators: text `=` (and `= ANY`) is, `tsvector @@ tsquery` is
-- not (docs/benchmarks.md, issue 11 sessions 7 and 8). The key leads with (tenant_id, term);
-- the columns BM25 and eligibility need are INCLUDEd, so a term's postings are an index-only
-- scan. Rows are a pure function of the chunk (its `term_freqs`), written in the transaction
-- that writes the chunks (ingestion's chunk step), or by `kb postings backfill` for chunks
-- stored before this migration; they go with their chunk (ON DELETE CASCADE).
-- Tenant table pattern of docs/security.md: composite tenant foreign key, RLS enabled and
-- forced, tenant_isolation on kb_current_tenant(), owner_access; kb_app gets SELECT, INSERT,
-- UPDATE, DELETE from the default privileges of migration 0006, as for chunks.

CREATE TABLE chunk_postings (
    tenant_id       text NOT NULL,
    term            text NOT NULL,
    chunk_pk        bigint NOT NULL,
    doc_version_id  text NOT NULL,
    parser_version  text NOT NULL,
    chunker_version text NOT NULL,
    tf              integer NOT NULL,
    term_count      integer NOT NULL,
    PRIMARY KEY (tenant_id, term, chunk_pk)
        INCLUDE (doc_version_id, parser_version, chunker_version, tf, term_count),
    FOREIGN KEY (chunk_pk, tenant_id) REFERENCES chunks (id, tenant_id) ON DELETE CASCADE
);
-- The cascade from chunks (a re-chunk, a discarded pipeline) finds a chunk's postings here.
CREATE INDEX chunk_postings_chunk ON chunk_postings (chunk_pk);

ALTER TABLE chunk_postings ENABLE ROW LEVEL SECURITY;
ALTER TABLE chunk_postings FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON chunk_postings
    USING (tenant_id = (SELECT kb_current_tenant()))
    WITH CHECK (tenant_id = (SELECT kb_current_tenant()));
DO $$
BEGIN
    EXECUTE format(
        'CREATE POLICY owner_access ON chunk_postings TO %I USING (true) WITH CHECK (true)',
        current_user);
END
$$;

-- The sum of the chunks' term counts per build, written with the postings: N (chunk_count)
-- and avgdl of the eligible versions come from one row per build, as the window count does.
-- NULL = the build's chunks have no postings yet (retrieval then reads the chunks instead).
ALTER TABLE doc_builds ADD COLUMN term_total bigint;
