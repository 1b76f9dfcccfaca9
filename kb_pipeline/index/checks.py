"""The index check, emitted by `search_index` itself for every partition of the run.

A run may hold one partition (`kb ingest`, a click in the UI) or a range (a backfill); the check
reads the build of each of them, so it is never vacuous: ERROR when a version `failed`, WARN when
one `needs_attention`, with the reason codes in its metadata.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dagster import AssetCheckResult, AssetCheckSeverity, AssetCheckSpec, AssetKey, MetadataValue

from kb_pipeline.ingest.partitions import split_partition_key
from kb_pipeline.table_metadata import table
from kb_retrieval.ingestion.pipeline import IngestionPipeline

CHECK_NAME = "documents_reached_indexed"
SEARCH_INDEX = AssetKey("search_index")
documents_reached_indexed = AssetCheckSpec(
    CHECK_NAME,
    asset=SEARCH_INDEX,
    description=(
        "Every document version of the run reached `indexed` (ERROR: failed, WARN: "
        "needs_attention; reason codes in the metadata)."
    ),
)
COLUMNS = ("partition", "state", "reason_code", "chunks")


def severity_of(states: Sequence[str]) -> AssetCheckSeverity:
    """ERROR when any version failed (or stopped short of a final state), else WARN."""
    return (
        AssetCheckSeverity.WARN
        if all(state == "needs_attention" for state in states)
        else AssetCheckSeverity.ERROR
    )


def partition_builds(
    pipeline: IngestionPipeline, partition_keys: Sequence[str]
) -> list[dict[str, Any]]:
    """State, reason code and indexed chunk count of every partition's build."""
    rows = []
    for key in partition_keys:
        build = pipeline.build_state(*split_partition_key(key))
        indexed = build.state == "indexed"
        rows.append(
            {
                "partition": key,
                "state": build.state,
                "reason_code": build.reason_code or "",
                "chunks": int(build.chunk_count or 0) if indexed else 0,
            }
        )
    return rows


def index_check(rows: Sequence[dict[str, Any]]) -> AssetCheckResult:
    """The check result over every partition of a run (rows of `partition_builds`)."""
    missed = [row for row in rows if row["state"] != "indexed"]
    reasons = sorted({row["reason_code"] for row in missed if row["reason_code"]})
    description = f"{len(rows) - len(missed)}/{len(rows)} indexed" + (
        f"; not indexed: {', '.join(r['partition'] for r in missed)}" if missed else ""
    )
    metadata: dict[str, Any] = {
        "checked": len(rows),
        "not_indexed": len(missed),
        "reason_codes": ", ".join(reasons),
        "documents": table(rows, COLUMNS),
    }
    if missed:
        metadata["states"] = MetadataValue.json({r["partition"]: r["state"] for r in missed})
    return AssetCheckResult(
        check_name=CHECK_NAME,
        passed=bool(rows) and not missed,
        severity=severity_of([row["state"] for row in missed])
        if missed
        else AssetCheckSeverity.WARN,
        metadata=metadata,
        description=description,
    )
