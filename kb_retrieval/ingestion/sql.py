"""SQL of the ingestion pipeline (parameterised; run inside tenant-scoped transactions)."""

# Commits of parse, chunk and embed (and of the embedding cache) return before the WAL flush.
# WAL is flushed in order, so the synchronous commit of `publish` (which makes a version
# visible) also makes every earlier write of that version durable: a server crash can lose only
# unpublished progress, which the idempotent steps redo; a killed client loses nothing
# committed. Register, publish and the sentence backfill of an indexed build stay synchronous.
ASYNC_COMMIT = "SELECT set_config('synchronous_commit', 'off', true)"

SELECT_VERSION = """
SELECT doc_version_id, doc_id, title, category, source, source_path, source_type, priority,
       effective_date, last_reviewed_at, supersedes_doc_version_id, content_hash, metadata
FROM doc_versions WHERE doc_version_id = %(doc_version_id)s
"""

INSERT_VERSION = """
INSERT INTO doc_versions (tenant_id, doc_version_id, doc_id, title, category, source, source_path,
    source_type, priority, effective_date, last_reviewed_at, supersedes_doc_version_id,
    content_hash, metadata)
VALUES (%(tenant_id)s, %(doc_version_id)s, %(doc_id)s, %(title)s, %(category)s, %(source)s,
    %(source_path)s, %(source_type)s, %(priority)s, %(effective_date)s, %(last_reviewed_at)s,
    %(supersedes_doc_version_id)s, %(content_hash)s, %(metadata)s)
ON CONFLICT (tenant_id, doc_version_id) DO UPDATE SET
    title = EXCLUDED.title, source = EXCLUDED.source, source_path = EXCLUDED.source_path,
    priority = EXCLUDED.priority, effective_date = EXCLUDED.effective_date,
    last_reviewed_at = EXCLUDED.last_reviewed_at,
    supersedes_doc_version_id = EXCLUDED.supersedes_doc_version_id,
    metadata = EXCLUDED.metadata, updated_at = now()
WHERE (doc_versions.title, doc_versions.source, doc_versions.source_path, doc_versions.priority,
       doc_versions.effective_date, doc_versions.last_reviewed_at,
       doc_versions.supersedes_doc_version_id, doc_versions.metadata)
  IS DISTINCT FROM (EXCLUDED.title, EXCLUDED.source, EXCLUDED.source_path, EXCLUDED.priority,
       EXCLUDED.effective_date, EXCLUDED.last_reviewed_at, EXCLUDED.supersedes_doc_version_id,
       EXCLUDED.metadata)
"""

ENSURE_BUILD = """
INSERT INTO doc_builds (tenant_id, doc_version_id, parser_version, chunker_version,
    embedding_model_id, state)
VALUES (%(tenant_id)s, %(doc_version_id)s, %(parser_version)s, %(chunker_version)s,
    %(embedding_model_id)s, 'queued')
ON CONFLICT DO NOTHING
"""

BUILD_KEY = """doc_version_id = %(doc_version_id)s AND parser_version = %(parser_version)s
  AND chunker_version = %(chunker_version)s AND embedding_model_id = %(embedding_model_id)s"""

SELECT_BUILD = f"""
SELECT state, reason_code, message, chunk_count, window_count, embedded_count, stats
FROM doc_builds WHERE {BUILD_KEY}
"""

SET_BUILD_STATE = f"""
UPDATE doc_builds SET state = %(state)s, reason_code = %(reason_code)s, message = %(message)s,
    updated_at = now()
WHERE {BUILD_KEY}
"""

MERGE_BUILD_STATS = f"UPDATE doc_builds SET stats = stats || %(stats)s WHERE {BUILD_KEY}"

SET_BUILD_CHUNKED = f"""
UPDATE doc_builds SET state = 'chunked', reason_code = NULL, message = NULL,
    chunk_count = %(chunk_count)s, stats = stats || %(stats)s, updated_at = now()
WHERE {BUILD_KEY}
"""

SET_BUILD_EMBEDDED = f"""
UPDATE doc_builds SET state = 'embedding', window_count = %(window_count)s,
    embedded_count = %(embedded_count)s, updated_at = now()
WHERE {BUILD_KEY}
"""

PUBLISH_BUILD = f"""
UPDATE doc_builds SET state = 'indexed', reason_code = NULL, message = NULL,
    indexed_at = now(), updated_at = now()
WHERE {BUILD_KEY} AND state = 'embedding'
"""

SELECT_PARSE = """
SELECT content_hash, page_count, spans FROM doc_parses
WHERE doc_version_id = %(doc_version_id)s AND parser_version = %(parser_version)s
"""

UPSERT_PARSE = """
INSERT INTO doc_parses (tenant_id, doc_version_id, parser_version, content_hash, page_count, spans)
VALUES (%(tenant_id)s, %(doc_version_id)s, %(parser_version)s, %(content_hash)s, %(page_count)s,
    %(spans)s)
ON CONFLICT (tenant_id, doc_version_id, parser_version) DO UPDATE SET
    content_hash = EXCLUDED.content_hash, page_count = EXCLUDED.page_count, spans = EXCLUDED.spans
"""

CHUNK_KEY = """doc_version_id = %(doc_version_id)s AND parser_version = %(parser_version)s
  AND chunker_version = %(chunker_version)s"""

DELETE_CHUNKS = f"DELETE FROM chunks WHERE {CHUNK_KEY}"

COUNT_CHUNKS = f"SELECT count(*) FROM chunks WHERE {CHUNK_KEY}"

INSERT_CHUNK = """
INSERT INTO chunks (tenant_id, doc_version_id, doc_id, category, parser_version, chunker_version,
    chunk_id, chunk_index, section_title, page_start, page_end, source_locator, token_count, text,
    text_hash, policy_likeness_hint, term_count, term_freqs, tsv)
VALUES (%(tenant_id)s, %(doc_version_id)s, %(doc_id)s, %(category)s, %(parser_version)s,
    %(chunker_version)s, %(chunk_id)s, %(chunk_index)s, %(section_title)s, %(page_start)s,
    %(page_end)s, %(source_locator)s, %(token_count)s, %(text)s, %(text_hash)s,
    %(policy_likeness_hint)s, %(term_count)s, %(term_freqs)s, array_to_tsvector(%(terms)s::text[]))
"""

SELECT_CHUNKS_FOR_EMBEDDING = f"""
SELECT id, chunk_id, text FROM chunks WHERE {CHUNK_KEY} ORDER BY chunk_index
"""

SELECT_CACHED_EMBEDDINGS = """
SELECT text_hash, embedding FROM embedding_cache
WHERE embedding_model_id = %(embedding_model_id)s AND text_hash = ANY(%(hashes)s)
"""

INSERT_CACHED_EMBEDDING = """
INSERT INTO embedding_cache (tenant_id, embedding_model_id, text_hash, embedding)
VALUES (%s, %s, %s, %s) ON CONFLICT DO NOTHING
"""

INSERT_VECTOR = """
INSERT INTO chunk_vectors (chunk_pk, tenant_id, doc_version_id, chunker_version, chunk_id,
    embedding_model_id, window_index, embedding)
VALUES (%s, %s, %s, %s, %s, %s, %s, %s)
ON CONFLICT (tenant_id, doc_version_id, chunker_version, chunk_id, embedding_model_id, window_index)
DO NOTHING
"""

COUNT_EMBEDDED_CHUNKS = """
SELECT count(DISTINCT v.chunk_pk) FROM chunk_vectors v JOIN chunks c ON c.id = v.chunk_pk
WHERE c.doc_version_id = %(doc_version_id)s AND c.parser_version = %(parser_version)s
  AND c.chunker_version = %(chunker_version)s AND v.embedding_model_id = %(embedding_model_id)s
"""

# BM25 postings of a version's chunks (migration 0010), written in the transaction that writes
# the chunks: one row per (chunk, term of its term_freqs); a re-run inserts nothing twice.
# `term_total` on the version's builds (every embedding model's) marks them written and gives
# retrieval the length sum for avgdl. Also the backfill of chunks stored before 0010 (a batch
# of versions of one pipeline: `versions`).
_POSTINGS_SCOPE = """c.tenant_id = %(tenant_id)s AND c.doc_version_id = ANY(%(versions)s)
  AND c.parser_version = %(parser_version)s AND c.chunker_version = %(chunker_version)s"""
INSERT_POSTINGS = f"""
INSERT INTO chunk_postings (tenant_id, term, chunk_pk, doc_version_id, parser_version,
    chunker_version, tf, term_count)
SELECT c.tenant_id, t.term, c.id, c.doc_version_id, c.parser_version, c.chunker_version,
    t.tf::integer, c.term_count
FROM chunks c CROSS JOIN LATERAL jsonb_each_text(c.term_freqs) AS t(term, tf)
WHERE {_POSTINGS_SCOPE}
ON CONFLICT DO NOTHING
"""
SET_BUILD_TERM_TOTAL = f"""
UPDATE doc_builds b SET term_total = coalesce(s.total, 0)
FROM unnest(%(versions)s::text[]) AS u(doc_version_id)
LEFT JOIN (
    SELECT c.doc_version_id, sum(c.term_count) AS total FROM chunks c WHERE {_POSTINGS_SCOPE}
    GROUP BY c.doc_version_id
) s ON s.doc_version_id = u.doc_version_id
WHERE b.tenant_id = %(tenant_id)s AND b.doc_version_id = u.doc_version_id
  AND b.parser_version = %(parser_version)s AND b.chunker_version = %(chunker_version)s
"""
# A tenant keeps postings once `kb index postings` (or an earlier ingest) wrote any: only then does
# ingestion write a new version's postings (they cost ingestion time and storage).
TENANT_KEEPS_POSTINGS = """
SELECT EXISTS (
    SELECT 1 FROM doc_builds WHERE tenant_id = %(tenant_id)s AND term_total IS NOT NULL
)
"""
# Builds whose chunks exist but have no postings yet (stored before migration 0010), by pipeline.
SELECT_BUILDS_WITHOUT_POSTINGS = """
SELECT DISTINCT parser_version, chunker_version, doc_version_id FROM doc_builds
WHERE tenant_id = %(tenant_id)s AND term_total IS NULL
  AND state IN ('chunked', 'embedding', 'indexed')
ORDER BY parser_version, chunker_version, doc_version_id
"""
