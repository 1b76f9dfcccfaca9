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

# Window vectors of the given eligible versions: decides in-memory vs PostgreSQL
# (snapshot_store.py, which holds the version ids); the PostgreSQL path reads its own count from
# the builds (VECTOR_COUNT_BUILDS).
_VECTOR_SCOPE = """v.tenant_id = %(tenant_id)s AND v.embedding_model_id = %(embedding_model_id)s
  AND v.chunker_version = %(chunker_version)s AND v.doc_version_id = ANY(%(versions)s)"""
VECTOR_COUNT = f"SELECT count(*) FROM chunk_vectors v WHERE {_VECTOR_SCOPE}"
# The PostgreSQL path's eligibility (issue 11 session 9): the scope's eligible builds as of
# %(as_of)s from `build_eligibility` (migration 0011, kept by triggers), joined server-side.
# Session 8 sent the eligible version ids as an array in every statement: 34,375 ids for a
# 100k-chunk tenant, loaded by ELIGIBLE_VERSIONS (0.6-1.4 s under load) and hashed per statement.
# In audit mode superseded versions are eligible too (and marked by CANDIDATE_DETAILS).
ELIGIBLE_BUILDS = """SELECT e.doc_version_id, e.chunk_count, e.window_count, e.term_total
    FROM build_eligibility e
    WHERE e.tenant_id = %(tenant_id)s AND e.parser_version = %(parser_version)s
      AND e.chunker_version = %(chunker_version)s
      AND e.embedding_model_id = %(embedding_model_id)s
      AND e.effective_from <= %(as_of)s AND (%(audit)s OR %(as_of)s < e.superseded_from)"""


def eligible(alias: str) -> str:
    """The condition that row `alias` belongs to an eligible version (a semi-join)."""
    return f"{alias}.doc_version_id IN (SELECT b.doc_version_id FROM ({ELIGIBLE_BUILDS}) b)"


# The choice between the exact scan and an index: the eligible builds' window vectors (an
# indexed build records them in `window_count`, checked by bench/crash_consistency.py).
# Counting the vector rows took 0.9 s for a 100k-chunk tenant at 1M (session 7).
VECTOR_COUNT_BUILDS = f"SELECT coalesce(sum(b.window_count), 0) FROM ({ELIGIBLE_BUILDS}) b"

# Exact nearest chunks per query variant (best window per chunk): recall 1.0, used while the
# tenant's vector count is below `exact_scan_max_vectors`.
VECTOR_EXACT = f"""
SELECT q.vidx, r.chunk_pk, r.sim
FROM unnest(%(vectors)s::vector[]) WITH ORDINALITY AS q(vec, vidx)
CROSS JOIN LATERAL (
    SELECT v.chunk_pk, max(1 - (v.embedding <=> q.vec)) AS sim
    FROM chunk_vectors v
    WHERE v.tenant_id = %(tenant_id)s AND v.embedding_model_id = %(embedding_model_id)s
      AND v.chunker_version = %(chunker_version)s AND {eligible("v")}
      AND (%(all_windows)s OR v.window_index = 0)
    GROUP BY v.chunk_pk
    ORDER BY sim DESC, v.chunk_pk
    LIMIT %(k)s
) r
"""

# An index scan for large tenants, with iterative scans (pgvector >= 0.8) so that the filters
# (tenant, pipeline, eligible versions) applied after the index still leave k_windows rows:
# the global HNSW index, or the tenant's own IVFFlat index when it has one (vector_index.py).
# The tenant's index is on `l2_normalize(embedding)` (the same cosine order) so that only
# VECTOR_TENANT_INDEX can use it and the planner never swaps one index for the other by cost
# (with both on `embedding`, ivfflat.probes = 20 already sent it to the global HNSW index).
# Windows are over-fetched, then folded per chunk.
FORCE_CUSTOM_PLANS = "SELECT set_config('plan_cache_mode', 'force_custom_plan', true)"
SET_HNSW = "SELECT set_config('hnsw.ef_search', %s, true), set_config('hnsw.iterative_scan', 'relaxed_order', true)"
SET_IVFFLAT = "SELECT set_config('ivfflat.probes', %s, true), set_config('ivfflat.iterative_scan', 'relaxed_order', true)"
# Of lists = windows / 1,000: recall 1.000 at a 100k-chunk tenant, 0.986-0.998 with 10.
IVFFLAT_PROBES = 20

# A tenant's IVFFlat partial index (vector_index.py, owner role); name, lists and tenant are
# composed with psycopg.sql (DDL takes no parameters).
CREATE_TENANT_IVFFLAT = """CREATE INDEX IF NOT EXISTS {name} ON chunk_vectors
    USING ivfflat ((l2_normalize(embedding)::vector(384)) vector_cosine_ops) WITH (lists = {lists})
    WHERE tenant_id = {tenant}"""
TENANT_EXISTS = "SELECT EXISTS (SELECT 1 FROM tenants WHERE tenant_id = %(tenant_id)s)"
TENANT_VECTOR_ROWS = "SELECT count(*) FROM chunk_vectors WHERE tenant_id = %(tenant_id)s"
# The index's storage options (lists), no row when there is no such index.
INDEX_OPTIONS = "SELECT reloptions FROM pg_class WHERE oid = to_regclass(%s)"
_VECTOR_ANN = f"""
SELECT q.vidx, r.chunk_pk, r.sim
FROM unnest(%(vectors)s::vector[]) WITH ORDINALITY AS q(vec, vidx)
CROSS JOIN LATERAL (
    SELECT w.chunk_pk, max(w.sim) AS sim
    FROM (
        SELECT v.chunk_pk, 1 - (v.embedding <=> q.vec) AS sim
        FROM chunk_vectors v
        WHERE v.tenant_id = %(tenant_id)s AND v.embedding_model_id = %(embedding_model_id)s
          AND v.chunker_version = %(chunker_version)s AND {eligible("v")}
          AND (%(all_windows)s OR v.window_index = 0)
        ORDER BY {{order}} <=> q.vec
        LIMIT %(k_windows)s
    ) w
    GROUP BY w.chunk_pk
    ORDER BY sim DESC, w.chunk_pk
    LIMIT %(k)s
) r
"""
VECTOR_HNSW = _VECTOR_ANN.format(order="v.embedding")
# (An IVFFlat index needs the dimensions: the expression is cast to the column's vector(384).)
VECTOR_TENANT_INDEX = _VECTOR_ANN.format(order="l2_normalize(v.embedding)::vector(384)")


CHUNK_SCOPE = """c.tenant_id = %(tenant_id)s AND c.parser_version = %(parser_version)s
      AND c.chunker_version = %(chunker_version)s AND c.doc_version_id = ANY(%(versions)s)"""

# The tenant's chunks holding any query term (`%(any_term)s`: the terms OR-ed into one tsquery),
# each read once per statement; which query terms a chunk holds is checked on the row. Under
# row-level security no GIN index can serve this: `@@` (ts_match_vq) and `@>` (arraycontains)
# are not leakproof, so PostgreSQL evaluates them only after the policy's qual and never as
# index conditions for kb_app (a GIN index is used by the owner role alone); only leakproof
# operators such as text `=` reach an index (docs/benchmarks.md, session 7). So the scan is the
# tenant's rows (btree on tenant_id), once, instead of once per query term as before.
# Eligibility (pipeline and eligible versions) is a column of the rows found, not a condition of
# the scan: there the 34k-version array of a 100k-chunk tenant was an index condition of the
# (tenant, version) btree, 200-400 ms of planning per statement (selectivity per element).
# Each term's tsquery is parsed once (`t.query`), not once per (chunk, term) pair.
TENANT_TERM_HITS = """FROM chunks c
    JOIN (
        SELECT term, quote_literal(term)::tsquery AS query
        FROM (SELECT DISTINCT term FROM unnest(%(terms)s::text[]) AS u(term)) d
    ) t ON c.tsv @@ t.query
    WHERE c.tenant_id = %(tenant_id)s AND c.tsv @@ %(any_term)s::tsquery"""
CHUNK_ELIGIBLE = f"""c.parser_version = %(parser_version)s
      AND c.chunker_version = %(chunker_version)s AND {eligible("c")}"""
# N and avgdl of the eligible chunks, from one pass over the tenant's chunks (eligibility a
# column of the rows read, not a condition of the scan).
SCOPE_STATS = f"""SELECT count(*) FILTER (WHERE {CHUNK_ELIGIBLE})::float8,
       coalesce(avg(c.term_count) FILTER (WHERE {CHUNK_ELIGIBLE}), 1)::float8
    FROM chunks c WHERE c.tenant_id = %(tenant_id)s"""

# The k best-scored chunks of each query variant (`scored`: vidx, chunk_pk, score).
TOP_K_PER_VARIANT = """SELECT vidx, chunk_pk, score FROM (
    SELECT scored.*, row_number() OVER (PARTITION BY vidx ORDER BY score DESC, chunk_pk) AS rn
    FROM scored
) ranked WHERE rn <= %(k)s
"""

# BM25 (k1, b) over the analyzer's terms: `postings` (eligible chunk, query term, tf from
# term_freqs) gives both df and the scores; N and avgdl come from the eligible chunks. The CTEs
# are MATERIALIZED: inlined, the statistics ran once per matching (term, chunk) row
# (bench/retrieval.py: 15 s at 500 chunks). A chunk's score sums its terms in term order, so
# equal chunks get bit-equal scores whatever the plan.
LEXICAL_BM25 = f"""
WITH q AS (
    SELECT * FROM unnest(%(vidx)s::int[], %(terms)s::text[]) AS q(vidx, term)
), stats (n, avgdl) AS MATERIALIZED (
    {SCOPE_STATS}
), hits AS MATERIALIZED (
    SELECT t.term, c.id AS chunk_pk, c.term_count, {CHUNK_ELIGIBLE} AS eligible,
           CASE WHEN {CHUNK_ELIGIBLE} THEN (c.term_freqs ->> t.term)::float8 END AS tf
    {TENANT_TERM_HITS}
), postings AS (
    SELECT term, chunk_pk, term_count, tf FROM hits WHERE eligible
), idf AS MATERIALIZED (
    SELECT p.term, ln(1 + (stats.n - count(*)::float8 + 0.5) / (count(*)::float8 + 0.5)) AS idf
    FROM postings p CROSS JOIN stats
    GROUP BY p.term, stats.n
), scored AS (
    SELECT q.vidx, p.chunk_pk,
           sum(idf.idf * p.tf * (%(k1)s + 1)
               / (p.tf + %(k1)s * (1 - %(b)s + %(b)s * p.term_count / stats.avgdl))
               ORDER BY q.term) AS score
    FROM q
    JOIN idf ON idf.term = q.term
    JOIN postings p ON p.term = q.term
    CROSS JOIN stats
    GROUP BY q.vidx, p.chunk_pk
)
{TOP_K_PER_VARIANT}"""

# Statistics for absolute lexical features of the candidates: N and df of the query terms.
TERM_STATS = f"""
WITH hits AS MATERIALIZED (
    SELECT t.term, {CHUNK_ELIGIBLE} AS eligible
    {TENANT_TERM_HITS}
)
SELECT u.term, count(*) FILTER (WHERE h.eligible) AS df
FROM unnest(%(terms)s::text[]) AS u(term)
LEFT JOIN hits h ON h.term = u.term
GROUP BY u.term
"""
COUNT_SCOPE = SCOPE_STATS

# The lexical leg from the postings table (migration 0010), used once every eligible version's
# build has its postings (`term_total` set). Each query term's postings are one range of the
# (tenant_id, term) btree, read index-only: `=` / `= ANY` on text is leakproof, so `kb_app`
# gets the index under row-level security (no `@@` on the chunks). Eligibility is a semi-join
# with the eligible builds (hashed once per statement). N and avgdl come from the eligible
# builds (`POSTINGS_SCOPE`), avgdl as `avg(term_count)` computes it (numeric division, then
# float8), so the scores are those of LEXICAL_BM25.
POSTINGS_SCOPE = f"""
SELECT coalesce(sum(b.chunk_count), 0),
       coalesce((sum(b.term_total) / nullif(sum(b.chunk_count), 0))::float8, 1),
       count(*) FILTER (WHERE b.term_total IS NULL)
FROM ({ELIGIBLE_BUILDS}) b
"""
POSTING_HITS = f"""
    SELECT p.term, p.chunk_pk, p.term_count, p.tf::float8 AS tf
    FROM chunk_postings p
    WHERE p.tenant_id = %(tenant_id)s AND p.term = ANY(%(unique_terms)s::text[])
      AND p.parser_version = %(parser_version)s AND p.chunker_version = %(chunker_version)s
      AND {eligible("p")}"""
# The top k per variant, then one row per query term with eligible postings: (0, NULL, df,
# term). The df that `term_idf` needs is counted here already (session 8 read every posting a
# second time for it, about a third of the path at a 100k-chunk tenant).
LEXICAL_BM25_POSTINGS = f"""
WITH q AS (
    SELECT * FROM unnest(%(vidx)s::int[], %(terms)s::text[]) AS q(vidx, term)
), hits AS MATERIALIZED ({POSTING_HITS}
), idf AS MATERIALIZED (
    SELECT h.term, count(*) AS df,
           ln(1 + (%(n)s::float8 - count(*)::float8 + 0.5) / (count(*)::float8 + 0.5)) AS idf
    FROM hits h
    GROUP BY h.term
), scored AS (
    SELECT q.vidx, h.chunk_pk,
           sum(idf.idf * h.tf * (%(k1)s + 1)
               / (h.tf + %(k1)s * (1 - %(b)s + %(b)s * h.term_count / %(avgdl)s::float8))
               ORDER BY q.term) AS score
    FROM q
    JOIN idf ON idf.term = q.term
    JOIN hits h ON h.term = q.term
    GROUP BY q.vidx, h.chunk_pk
), top AS (
{TOP_K_PER_VARIANT})
SELECT vidx, chunk_pk, score, NULL::text AS term FROM top
UNION ALL
SELECT 0, NULL, df::float8, term FROM idf
"""
TERM_STATS_POSTINGS = f"""
WITH hits AS MATERIALIZED ({POSTING_HITS}
)
SELECT u.term, count(h.term) AS df
FROM unnest(%(unique_terms)s::text[]) AS u(term)
LEFT JOIN hits h ON h.term = u.term
GROUP BY u.term
"""

# Candidate details plus the exact best-window cosine of every candidate for every variant,
# then the version's fields (VersionInfo, `superseded` as ELIGIBLE_VERSIONS marks it); only
# chunks of eligible builds.
CANDIDATE_DETAILS = """
SELECT c.id, c.doc_version_id, c.chunk_id, c.chunk_index, c.section_title, c.page_start,
       c.page_end, c.source_locator, c.token_count, c.text, c.policy_likeness_hint,
       c.term_count, c.term_freqs,
       (SELECT array_agg(s.sim ORDER BY s.vidx) FROM (
            SELECT q.vidx, max(1 - (v.embedding <=> q.vec)) AS sim
            FROM unnest(%(vectors)s::vector[]) WITH ORDINALITY AS q(vec, vidx)
            JOIN chunk_vectors v ON v.chunk_pk = c.id AND v.embedding_model_id = %(embedding_model_id)s
                 AND (%(all_windows)s OR v.window_index = 0)
            GROUP BY q.vidx) s) AS sims,
       d.doc_id, d.title, d.category, d.priority, d.effective_date, d.last_reviewed_at,
       d.supersedes_doc_version_id, e.superseded_from <= %(as_of)s AS superseded
FROM chunks c
JOIN doc_versions d ON d.tenant_id = c.tenant_id AND d.doc_version_id = c.doc_version_id
JOIN build_eligibility e ON e.tenant_id = c.tenant_id AND e.doc_version_id = c.doc_version_id
     AND e.parser_version = %(parser_version)s AND e.chunker_version = %(chunker_version)s
     AND e.embedding_model_id = %(embedding_model_id)s
     AND e.effective_from <= %(as_of)s AND (%(audit)s OR %(as_of)s < e.superseded_from)
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
