"""The tenant's document versions with their build state for the served pipeline versions."""

from __future__ import annotations

from typing import Any

from kb_retrieval.db.connection import Database, UnknownTenantError
from kb_retrieval.models import PipelineVersions

LIST_VERSIONS = """
SELECT v.doc_version_id, v.doc_id, v.title, v.category, v.effective_date, v.last_reviewed_at,
       v.supersedes_doc_version_id, b.state, b.reason_code, b.message, b.chunk_count
FROM doc_versions v
LEFT JOIN doc_builds b
       ON b.tenant_id = v.tenant_id AND b.doc_version_id = v.doc_version_id
      AND b.parser_version = %(parser_version)s AND b.chunker_version = %(chunker_version)s
      AND b.embedding_model_id = %(embedding_model_id)s
WHERE v.tenant_id = %(tenant_id)s
ORDER BY v.doc_id, v.doc_version_id
"""
IS_REGISTERED = "SELECT EXISTS (SELECT 1 FROM tenants WHERE tenant_id = %(tenant_id)s)"
COLUMNS = (
    "doc_version_id",
    "doc_id",
    "title",
    "category",
    "effective_date",
    "last_reviewed_at",
    "supersedes",
    "state",
    "reason_code",
    "message",
    "chunks",
)


def list_documents(
    db: Database, tenant_id: str, versions: PipelineVersions
) -> list[dict[str, Any]]:
    """Every registered version of the tenant, with `state` (`received` before its first build),
    `reason_code`, `superseded_by`; read through the tenant's row-level-security session."""
    with db.admin() as conn:
        if not conn.execute(IS_REGISTERED, {"tenant_id": tenant_id}).fetchone()[0]:
            raise UnknownTenantError(tenant_id)
    params = {
        "tenant_id": tenant_id,
        "parser_version": versions.parser_version,
        "chunker_version": versions.chunker_version,
        "embedding_model_id": versions.embedding_model_id,
    }
    with db.tenant(tenant_id) as conn:
        rows = conn.execute(LIST_VERSIONS, params).fetchall()
    documents = [dict(zip(COLUMNS, row, strict=True)) for row in rows]
    superseded_by: dict[str, list[str]] = {}
    for doc in documents:
        if doc["supersedes"]:
            superseded_by.setdefault(doc["supersedes"], []).append(doc["doc_version_id"])
    for doc in documents:
        doc["state"] = doc["state"] or "received"
        doc["chunks"] = doc["chunks"] or 0
        doc["superseded_by"] = sorted(superseded_by.get(doc["doc_version_id"], []))
        for field in ("effective_date", "last_reviewed_at"):
            if doc[field] is not None:
                doc[field] = doc[field].isoformat()
    return documents
