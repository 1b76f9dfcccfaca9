"""SQL of retrieval. Every statement runs in a tenant-scoped transaction (row-level security)
and also names the tenant explicitly, so both the policy and the planner's indexes apply."""

# Versions retrieval may cite as of a date: indexed for the active pipeline, already effective,
# and not superseded by another indexed, effective version (unless audit mode asks for those).
ELIGIBLE_VERSIONS = """
SELECT v.doc_version_id, v.doc_id, v.title, v.category, v.priority, v.effective_date,
       v.last_reviewed_at, v.supersedes_doc_version_id,
       EXISTS (
           SELECT 1 FROM doc_versions n
           JOIN doc_builds nb ON nb.tenant_id = n.tenant_id AND nb.doc_version_id = n.doc_version_id
           WHERE n.tenant_id = v.tenant_id AND n.supersedes_doc_version_id = v.doc_version_id
             AND nb.state = 'indexed' AND nb.parser_version = %(parser_version)s
             AND nb.chunker_version = %(chunker_version)s
             AND nb.embedding_model_id = %(embedding_model_id)s
             AND (n.effective_date IS NULL OR n.effective_date <= %(as_of)s)
       ) AS superseded
FROM doc_versions v
JOIN doc_builds b ON b.tenant_id = v.tenant_id AND b.doc_version_id = v.doc_version_id
WHERE v.tenant_id = %(tenant_id)s AND b.state = 'indexed'
  AND b.parser_version = %(parser_version)s AND b.chunker_version = %(chunker_version)s
  AND b.embedding_model_id = %(embedding_model_id)s
  AND (v.effective_date IS NULL OR v.effective_date <= %(as_of)s)
ORDER BY v.doc_version_id
"""

# Window vectors of the eligible versions: decides in-memory vs PostgreSQL (snapshot.py) and,
# in PostgreSQL, exact scan vs HNSW (candidates.py).
_VECTOR_SCOPE = """v.tenant_id = %(tenant_id)s AND v.embedding_model_id = %(embedding_model_id)s
  AND v.chunker_version = %(chunker_version)s AND v.doc_version_id = ANY(%(versions)s)"""
VECTOR_COUNT = f"SELECT count(*) FROM chunk_vectors v WHERE {_VECTOR_SCOPE}"

# Exact nearest chunks per query variant (best window per chunk): recall 1.0, used while the
# tenant's vector count is below `exact_scan_max_vectors`.
VECTOR_EXACT = """
SELECT q.vidx, r.chunk_pk, r.sim
FROM unnest(%(vectors)s::vector[]) WITH ORDINALITY AS q(vec, vidx)
CROSS JOIN LATERAL (
    SELECT v.chunk_pk, max(1 - (v.embedding <=> q.vec)) AS sim
    FROM chunk_vectors v
    WHERE v.tenant_id = %(tenant_id)s AND v.embedding_model_id = %(embedding_model_id)s
      AND v.chunker_version = %(chunker_version)s AND v.doc_version_id = ANY(%(versions)s)
      AND (%(all_windows)s OR v.window_index = 0)
    GROUP BY v.chunk_pk
    ORDER BY sim DESC, v.chunk_pk
    LIMIT %(k)s
) r
"""

# HNSW with iterative scan for large tenants: windows are over-fetched, then folded per chunk.
FORCE_CUSTOM_PLANS = "SELECT set_config('plan_cache_mode', 'force_custom_plan', true)"
SET_HNSW = "SELECT set_config('hnsw.ef_search', %s, true), set_config('hnsw.iterative_scan', 'relaxed_order', true)"
VECTOR_HNSW = """
SELECT q.vidx, r.chunk_pk, r.sim
FROM unnest(%(vectors)s::vector[]) WITH ORDINALITY AS q(vec, vidx)
CROSS JOIN LATERAL (
    SELECT w.chunk_pk, max(w.sim) AS sim
    FROM (
        SELECT v.chunk_pk, 1 - (v.embedding <=> q.vec) AS sim
        FROM chunk_vectors v
        WHERE v.tenant_id = %(tenant_id)s AND v.embedding_model_id = %(embedding_model_id)s
          AND v.chunker_version = %(chunker_version)s AND v.doc_version_id = ANY(%(versions)s)
          AND (%(all_windows)s OR v.window_index = 0)
        ORDER BY v.embedding <=> q.vec
        LIMIT %(k_windows)s
    ) w
    GROUP BY w.chunk_pk
    ORDER BY sim DESC, w.chunk_pk
    LIMIT %(k)s
) r
"""

CHUNK_SCOPE = """c.tenant_id = %(tenant_id)s AND c.parser_version = %(parser_version)s
      AND c.chunker_version = %(chunker_version)s AND c.doc_version_id = ANY(%(versions)s)"""

# BM25 (k1, b) over the analyzer's terms: the GIN index on tsv finds the chunks holding a term,
# term_freqs gives its frequency, df/N/avgdl come from the eligible chunks of the tenant.
# The statistics CTEs are MATERIALIZED: inlined, the correlated df count ran once per matching
# (term, chunk) row, quadratic in the tenant's size (bench/retrieval.py: 15 s at 500 chunks).
LEXICAL_BM25 = f"""
WITH q AS (
    SELECT * FROM unnest(%(vidx)s::int[], %(terms)s::text[]) AS q(vidx, term)
), stats AS MATERIALIZED (
    SELECT count(*)::float8 AS n, coalesce(avg(c.term_count), 1)::float8 AS avgdl
    FROM chunks c WHERE {CHUNK_SCOPE}
), df AS MATERIALIZED (
    SELECT t.term, (
        SELECT count(*) FROM chunks c
        WHERE {CHUNK_SCOPE} AND c.tsv @@ quote_literal(t.term)::tsquery
    )::float8 AS df
    FROM (SELECT DISTINCT term FROM q) t
), idf AS MATERIALIZED (
    SELECT df.term, ln(1 + (stats.n - df.df + 0.5) / (df.df + 0.5)) AS idf FROM df, stats
), scored AS (
    SELECT q.vidx, c.id AS chunk_pk,
           sum(idf.idf * f.tf * (%(k1)s + 1)
               / (f.tf + %(k1)s * (1 - %(b)s + %(b)s * c.term_count / stats.avgdl))) AS score
    FROM q
    JOIN idf ON idf.term = q.term
    CROSS JOIN stats
    JOIN chunks c ON {CHUNK_SCOPE} AND c.tsv @@ quote_literal(q.term)::tsquery
    CROSS JOIN LATERAL (SELECT (c.term_freqs ->> q.term)::float8 AS tf) f
    GROUP BY q.vidx, c.id
)
SELECT vidx, chunk_pk, score FROM (
    SELECT scored.*, row_number() OVER (PARTITION BY vidx ORDER BY score DESC, chunk_pk) AS rn
    FROM scored
) ranked WHERE rn <= %(k)s
"""

# Statistics for absolute lexical features of the candidates: N and df of the query terms.
TERM_STATS = f"""
SELECT t.term, (
    SELECT count(*) FROM chunks c WHERE {CHUNK_SCOPE} AND c.tsv @@ quote_literal(t.term)::tsquery
) AS df
FROM unnest(%(terms)s::text[]) AS t(term)
"""
COUNT_SCOPE = f"SELECT count(*), coalesce(avg(c.term_count), 1) FROM chunks c WHERE {CHUNK_SCOPE}"

# Candidate details plus the exact best-window cosine of every candidate for every variant.
CANDIDATE_DETAILS = """
SELECT c.id, c.doc_version_id, c.chunk_id, c.chunk_index, c.section_title, c.page_start,
       c.page_end, c.source_locator, c.token_count, c.text, c.policy_likeness_hint,
       c.term_count, c.term_freqs,
       (SELECT array_agg(s.sim ORDER BY s.vidx) FROM (
            SELECT q.vidx, max(1 - (v.embedding <=> q.vec)) AS sim
            FROM unnest(%(vectors)s::vector[]) WITH ORDINALITY AS q(vec, vidx)
            JOIN chunk_vectors v ON v.chunk_pk = c.id AND v.embedding_model_id = %(embedding_model_id)s
                 AND (%(all_windows)s OR v.window_index = 0)
            GROUP BY q.vidx) s) AS sims
FROM chunks c
WHERE c.tenant_id = %(tenant_id)s AND c.id = ANY(%(ids)s)
ORDER BY c.id
"""

# In-memory snapshots (snapshot.py). The generation is kept by the triggers of migration 0005.
# Whether the tenant is registered, and its generation (NULL before its first document).
INDEX_GENERATION = """
SELECT EXISTS (SELECT 1 FROM tenants WHERE tenant_id = %(tenant_id)s),
       (SELECT generation FROM index_generations WHERE tenant_id = %(tenant_id)s)
"""

# Every version indexed for the pipeline, whatever its dates: eligibility as of a date is
# decided in memory from these rows, exactly as ELIGIBLE_VERSIONS decides it in SQL.
# indexed_at identifies the build a snapshot holds rows of: a reload reuses the rows of every
# version whose build it already holds and reads only the others.
SNAPSHOT_VERSIONS = """
SELECT v.doc_version_id, v.doc_id, v.title, v.category, v.priority, v.effective_date,
       v.last_reviewed_at, v.supersedes_doc_version_id, b.indexed_at
FROM doc_versions v
JOIN doc_builds b ON b.tenant_id = v.tenant_id AND b.doc_version_id = v.doc_version_id
WHERE v.tenant_id = %(tenant_id)s AND b.state = 'indexed'
  AND b.parser_version = %(parser_version)s AND b.chunker_version = %(chunker_version)s
  AND b.embedding_model_id = %(embedding_model_id)s
ORDER BY v.doc_version_id
"""

# The columns of CANDIDATE_DETAILS but sims, so that a snapshot builds candidates from memory;
# term_freqs as JSON text, kept as text per chunk (parsed dicts would take several times more).
SNAPSHOT_CHUNKS = f"""
SELECT c.id, c.doc_version_id, c.chunk_id, c.chunk_index, c.section_title, c.page_start,
       c.page_end, c.source_locator, c.token_count, c.text, c.policy_likeness_hint,
       c.term_count, c.term_freqs::text
FROM chunks c
WHERE {CHUNK_SCOPE}
ORDER BY c.id
"""

SNAPSHOT_VECTORS = f"""
SELECT v.chunk_pk, v.window_index, v.embedding FROM chunk_vectors v
WHERE {_VECTOR_SCOPE}
ORDER BY v.chunk_pk, v.window_index
"""

# Itinerary titles name the tenant's trips for the query planner (any state: a trip's name is
# known as soon as it is registered).
TRIP_TITLES = """
SELECT title FROM doc_versions WHERE tenant_id = %(tenant_id)s AND category = 'trip_itinerary'
ORDER BY title
"""
