-- Core schema: tenants, document versions, builds (lifecycle), chunks, vectors, embedding cache.
-- Every tenant table carries tenant_id and is guarded by row-level security keyed on the
-- session setting kb.tenant_id (see 0002_row_level_security.sql).

CREATE EXTENSION IF NOT EXISTS vector;

CREATE TABLE tenants (
    tenant_id   text PRIMARY KEY CHECK (tenant_id ~ '^[a-z0-9][a-z0-9_-]{1,62}$'),
    created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE doc_versions (
    tenant_id                 text NOT NULL REFERENCES tenants (tenant_id),
    doc_version_id            text NOT NULL,
    doc_id                    text NOT NULL,
    title                     text NOT NULL,
    category                  text NOT NULL,
    source                    text,
    source_path               text,
    source_type               text NOT NULL,
    priority                  integer NOT NULL DEFAULT 0,
    effective_date            date,
    last_reviewed_at          date,
    supersedes_doc_version_id text,
    content_hash              text NOT NULL,
    metadata                  jsonb NOT NULL DEFAULT '{}'::jsonb,
    created_at                timestamptz NOT NULL DEFAULT now(),
    updated_at                timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, doc_version_id)
);
CREATE INDEX doc_versions_supersedes ON doc_versions (tenant_id, supersedes_doc_version_id);

-- One build per document version and pipeline (parser, chunker, embedding model): the
-- idempotency tuple of 001 item 4. `state` is the lifecycle state; retrieval only sees
-- chunks whose build is `indexed`, so flipping the state is the single visibility switch.
CREATE TABLE doc_builds (
    tenant_id          text NOT NULL,
    doc_version_id     text NOT NULL,
    parser_version     text NOT NULL,
    chunker_version    text NOT NULL,
    embedding_model_id text NOT NULL,
    state              text NOT NULL,
    reason_code        text,
    message            text,
    chunk_count        integer NOT NULL DEFAULT 0,
    window_count       integer NOT NULL DEFAULT 0,
    embedded_count     integer NOT NULL DEFAULT 0,
    stats              jsonb NOT NULL DEFAULT '{}'::jsonb,
    created_at         timestamptz NOT NULL DEFAULT now(),
    updated_at         timestamptz NOT NULL DEFAULT now(),
    indexed_at         timestamptz,
    PRIMARY KEY (tenant_id, doc_version_id, parser_version, chunker_version, embedding_model_id),
    FOREIGN KEY (tenant_id, doc_version_id) REFERENCES doc_versions (tenant_id, doc_version_id)
);

-- Parsed text per document version and parser version (input of chunking).
CREATE TABLE doc_parses (
    tenant_id       text NOT NULL,
    doc_version_id  text NOT NULL,
    parser_version  text NOT NULL,
    content_hash    text NOT NULL,
    page_count      integer,
    spans           jsonb NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, doc_version_id, parser_version),
    FOREIGN KEY (tenant_id, doc_version_id) REFERENCES doc_versions (tenant_id, doc_version_id)
);

CREATE TABLE chunks (
    id                   bigserial PRIMARY KEY,
    tenant_id            text NOT NULL,
    doc_version_id       text NOT NULL,
    doc_id               text NOT NULL,
    category             text NOT NULL,
    parser_version       text NOT NULL,
    chunker_version      text NOT NULL,
    chunk_id             text NOT NULL,
    chunk_index          integer NOT NULL,
    section_title        text,
    page_start           integer,
    page_end             integer,
    source_locator       text NOT NULL,
    token_count          integer NOT NULL,
    text                 text NOT NULL,
    text_hash            text NOT NULL,
    policy_likeness_hint text NOT NULL,
    term_count           integer NOT NULL,
    term_freqs           jsonb NOT NULL,
    tsv                  tsvector NOT NULL,
    created_at           timestamptz NOT NULL DEFAULT now(),
    UNIQUE (tenant_id, doc_version_id, parser_version, chunker_version, chunk_id),
    FOREIGN KEY (tenant_id, doc_version_id) REFERENCES doc_versions (tenant_id, doc_version_id)
);
CREATE INDEX chunks_tsv ON chunks USING gin (tsv);
CREATE INDEX chunks_tenant_version ON chunks (tenant_id, doc_version_id, parser_version, chunker_version);

-- Vectors: one row per window of a chunk (a chunk longer than the model's 256 word pieces is
-- embedded as several windows and matched by its best window).
CREATE TABLE chunk_vectors (
    id                 bigserial PRIMARY KEY,
    chunk_pk           bigint NOT NULL REFERENCES chunks (id) ON DELETE CASCADE,
    tenant_id          text NOT NULL,
    doc_version_id     text NOT NULL,
    chunker_version    text NOT NULL,
    chunk_id           text NOT NULL,
    embedding_model_id text NOT NULL,
    window_index       integer NOT NULL,
    embedding          vector(384) NOT NULL,
    UNIQUE (tenant_id, doc_version_id, chunker_version, chunk_id, embedding_model_id, window_index)
);
CREATE INDEX chunk_vectors_tenant_model ON chunk_vectors (tenant_id, embedding_model_id, chunk_pk);
CREATE INDEX chunk_vectors_hnsw ON chunk_vectors USING hnsw (embedding vector_cosine_ops)
    WITH (m = 16, ef_construction = 64);

-- Window embeddings by text hash, so a rebuild (new parser/chunker version, or a run killed
-- halfway) never embeds the same text twice.
CREATE TABLE embedding_cache (
    tenant_id          text NOT NULL,
    embedding_model_id text NOT NULL,
    text_hash          text NOT NULL,
    embedding          vector(384) NOT NULL,
    PRIMARY KEY (tenant_id, embedding_model_id, text_hash)
);
