-- Sentence vectors (issue 12 item 3): each chunk's sentence units (text/sentence_units.py)
-- embedded at ingestion with the model of its windows, so that retrieval reads the
-- best-matching sentence's cosine of a candidate instead of embedding its sentences on first use.
-- Keyed like chunk_vectors plus `units_version` (how the chunk was cut into sentences): a re-run
-- inserts nothing twice, another model or another cut is another set of rows. Rows are written
-- in the transaction that moves the build to `embedding`; `publish` refuses a build whose chunks
-- lack them. Not searched by similarity (read for ~40 candidates per retrieval): no HNSW index.
-- Tenant table pattern of docs/security.md: composite tenant foreign key, RLS enabled and
-- forced, tenant_isolation on kb_current_tenant(), owner_access; kb_app gets SELECT, INSERT,
-- UPDATE, DELETE from the default privileges of migration 0006.

CREATE TABLE chunk_sentence_vectors (
    tenant_id          text NOT NULL,
    chunk_pk           bigint NOT NULL,
    doc_version_id     text NOT NULL,
    chunker_version    text NOT NULL,
    chunk_id           text NOT NULL,
    embedding_model_id text NOT NULL,
    units_version      text NOT NULL,
    sentence_index     integer NOT NULL,
    embedding          vector(384) NOT NULL,
    PRIMARY KEY (tenant_id, doc_version_id, chunker_version, chunk_id, embedding_model_id,
                 units_version, sentence_index),
    FOREIGN KEY (chunk_pk, tenant_id) REFERENCES chunks (id, tenant_id) ON DELETE CASCADE
);
CREATE INDEX chunk_sentence_vectors_chunk
    ON chunk_sentence_vectors (chunk_pk, embedding_model_id, units_version);

ALTER TABLE chunk_sentence_vectors ENABLE ROW LEVEL SECURITY;
ALTER TABLE chunk_sentence_vectors FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON chunk_sentence_vectors
    USING (tenant_id = (SELECT kb_current_tenant()))
    WITH CHECK (tenant_id = (SELECT kb_current_tenant()));
DO $$
BEGIN
    EXECUTE format(
        'CREATE POLICY owner_access ON chunk_sentence_vectors TO %I USING (true) WITH CHECK (true)',
        current_user);
END
$$;
