"""BM25 postings for chunks stored before migration 0010, written version batch by batch.

Each batch (versions of one pipeline) is one tenant transaction that inserts the postings of
its chunks and sets its builds' `term_total`; a build with `term_total` set is done, so an
interrupted backfill resumes where it stopped and a finished one finds nothing to do. Until a
version is backfilled, retrieval serves the tenant from the chunks (the previous statements).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from itertools import groupby
from typing import Any

from kb_retrieval.ingestion import sql

BATCH_VERSIONS = 500


@dataclass(frozen=True)
class BackfillReport:
    tenant_id: str
    versions: int
    postings: int
    batches: int


def pending_versions(db: Any, tenant_id: str) -> list[tuple[str, str, str]]:
    """(parser, chunker, version) of the tenant's chunked builds that have no postings yet."""
    with db.tenant(tenant_id) as conn:
        rows = conn.execute(sql.SELECT_BUILDS_WITHOUT_POSTINGS, {"tenant_id": tenant_id})
        return [tuple(row) for row in rows]


def backfill_postings(
    db: Any,
    tenant_id: str,
    *,
    batch: int = BATCH_VERSIONS,
    progress: Callable[[int, int], None] | None = None,
) -> BackfillReport:
    """Write the missing postings of one tenant, `batch` versions per committed transaction."""
    if batch < 1:
        raise ValueError(f"batch must be at least 1, got {batch}")
    pending = pending_versions(db, tenant_id)
    done = postings = batches = 0
    for (parser_version, chunker_version), rows in groupby(pending, key=lambda r: r[:2]):
        versions = [row[2] for row in rows]
        for start in range(0, len(versions), batch):
            params = {
                "tenant_id": tenant_id,
                "parser_version": parser_version,
                "chunker_version": chunker_version,
                "versions": versions[start : start + batch],
            }
            with db.tenant(tenant_id) as conn:
                postings += conn.execute(sql.INSERT_POSTINGS, params).rowcount
                conn.execute(sql.SET_BUILD_TERM_TOTAL, params)
            done += len(params["versions"])
            batches += 1
            if progress is not None:
                progress(done, len(pending))
    return BackfillReport(tenant_id, done, postings, batches)
