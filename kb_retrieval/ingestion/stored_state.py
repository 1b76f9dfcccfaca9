"""What is already stored for a tenant's versions, read in one query each, so that an unchanged
re-ingest costs a few statements per tenant instead of a dozen transactions per version.

- `registered_versions`: every stored version of the tenant with the fields registration writes
  and whether the pipeline's build row exists; `needs_write` compares a manifest entry with it
  (registration then writes nothing for an unchanged entry: no row lock, no commit to flush).
- `settled_builds`: the versions that no step would change (indexed with all their sentence
  vectors, or a parse failure memoised for these bytes), with their build rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from psycopg.rows import dict_row

from kb_retrieval.ingestion.manifest import DocumentSpec
from kb_retrieval.models import PipelineVersions
from kb_retrieval.text.sentence_units import UNITS_VERSION

# The fields `sql.INSERT_VERSION` updates on a conflict: equal in all of them = nothing to write.
MUTABLE_FIELDS = (
    "title",
    "source",
    "source_path",
    "priority",
    "effective_date",
    "last_reviewed_at",
    "supersedes_doc_version_id",
    "metadata",
)

SELECT_REGISTERED = """
SELECT v.doc_version_id, v.category, v.content_hash, v.title, v.source, v.source_path, v.priority,
       v.effective_date, v.last_reviewed_at, v.supersedes_doc_version_id, v.metadata,
       b.doc_version_id IS NOT NULL AS has_build
FROM doc_versions v
LEFT JOIN doc_builds b ON b.tenant_id = v.tenant_id AND b.doc_version_id = v.doc_version_id
  AND b.parser_version = %(parser_version)s AND b.chunker_version = %(chunker_version)s
  AND b.embedding_model_id = %(embedding_model_id)s
WHERE v.tenant_id = %(tenant_id)s
"""

# Mirrors the steps' skip conditions: parse skips an indexed build and a failure memoised for the
# same content hash (`build_steps.FAILED_PARSE_HASH`); chunk, embed and publish skip every state but
# their own inputs', except that embed backfills an indexed build's chunks that have no
# sentence vectors (when the pipeline stores them). A chunk without sentence units counts as
# unsettled here (embed would find nothing to do): the steps then run and skip, as before.
SELECT_SETTLED = """
SELECT b.doc_version_id, b.state, b.reason_code, b.message, b.chunk_count, b.window_count,
       b.embedded_count, b.stats
FROM doc_builds b
JOIN doc_versions v ON v.tenant_id = b.tenant_id AND v.doc_version_id = b.doc_version_id
WHERE b.tenant_id = %(tenant_id)s
  AND b.doc_version_id = ANY(%(doc_version_ids)s) AND b.parser_version = %(parser_version)s
  AND b.chunker_version = %(chunker_version)s AND b.embedding_model_id = %(embedding_model_id)s
  AND (
    (b.state = 'indexed' AND NOT (%(sentence_vectors)s AND EXISTS (
        SELECT 1 FROM chunks c
        WHERE c.tenant_id = b.tenant_id AND c.doc_version_id = b.doc_version_id
          AND c.parser_version = b.parser_version AND c.chunker_version = b.chunker_version
          AND NOT EXISTS (
            SELECT 1 FROM chunk_sentence_vectors s
            WHERE s.chunk_pk = c.id AND s.embedding_model_id = b.embedding_model_id
              AND s.units_version = %(units_version)s))))
    OR (b.state IN ('failed', 'needs_attention')
        AND b.stats ->> %(failed_parse_hash)s::text = v.content_hash)
  )
"""


def version_fields(doc: DocumentSpec) -> dict[str, Any]:
    """The manifest entry as `sql.INSERT_VERSION` writes it (metadata not yet wrapped in Jsonb)."""
    return {
        "tenant_id": doc.tenant_id,
        "doc_version_id": doc.doc_version_id,
        "doc_id": doc.doc_id,
        "title": doc.title,
        "category": doc.category.value,
        "source": doc.source,
        "source_path": str(doc.source_path) if doc.source_path else None,
        "source_type": doc.source_type,
        "priority": doc.priority,
        "effective_date": doc.effective_date,
        "last_reviewed_at": doc.last_reviewed_at,
        "supersedes_doc_version_id": doc.supersedes_doc_version_id,
        "content_hash": doc.content_hash,
        "metadata": {"entries": list(doc.entries)} if doc.entries else {},
    }


def registered_versions(
    conn: Any, tenant_id: str, versions: PipelineVersions
) -> dict[str, dict[str, Any]]:
    """Every stored version of the tenant, by id (`SELECT_REGISTERED` columns)."""
    with conn.cursor(row_factory=dict_row) as cur:
        params = {**asdict(versions), "tenant_id": tenant_id}
        rows = cur.execute(SELECT_REGISTERED, params).fetchall()
    return {row["doc_version_id"]: row for row in rows}


def needs_write(doc: DocumentSpec, stored: dict[str, Any] | None) -> bool:
    """False only when the stored version already holds every field registration would write
    and the build row exists (any doubt, e.g. a type that compares unequal, means a write)."""
    if stored is None or not stored["has_build"]:
        return True
    fields = version_fields(doc)
    return any(stored[name] != fields[name] for name in MUTABLE_FIELDS)


def settled_builds(
    conn: Any,
    tenant_id: str,
    versions: PipelineVersions,
    doc_version_ids: Sequence[str],
    *,
    sentence_vectors: bool,
    failed_parse_hash: str,
) -> dict[str, tuple[Any, ...]]:
    """The build rows (`sql.SELECT_BUILD` columns) of the versions no step would change."""
    rows = conn.execute(
        SELECT_SETTLED,
        {
            **asdict(versions),
            "tenant_id": tenant_id,
            "doc_version_ids": list(doc_version_ids),
            "sentence_vectors": sentence_vectors,
            "units_version": UNITS_VERSION,
            "failed_parse_hash": failed_parse_hash,
        },
    ).fetchall()
    return {row[0]: tuple(row[1:]) for row in rows}
