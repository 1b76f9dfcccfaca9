"""Drive the ingestion assets in-process for one tenant folder (what `kb ingest` does)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from dagster import DagsterInstance, materialize

from kb_pipeline.index.assets import chunk_embeddings, search_index
from kb_pipeline.ingest.assets import document_chunks, parsed_documents
from kb_pipeline.ingest.partitions import split_partition_key
from kb_pipeline.ingest.registration import register_folder
from kb_pipeline.resources import KnowledgeBaseResource

INGEST_ASSETS = [parsed_documents, document_chunks, chunk_embeddings, search_index]
QUIET_RUN = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}
CLI_SOURCE = "cli"
Progress = Callable[[int, int, str], None]


def ingest_folder(
    folder: Path,
    *,
    kb: KnowledgeBaseResource | None = None,
    instance: DagsterInstance | None = None,
    on_progress: Progress | None = None,
) -> list[dict[str, Any]]:
    """Register the folder and materialise every version's partition; one result row per document."""
    if instance is None:
        from kb_pipeline.instance import persistent_instance

        instance = persistent_instance()
    kb = kb or KnowledgeBaseResource()
    pipeline = kb.pipeline()
    registered = register_folder(pipeline, instance, folder)
    rows: list[dict[str, Any]] = []
    total = len(registered.partition_keys)
    for done, key in enumerate(registered.partition_keys):
        if on_progress:
            on_progress(done, total, key)
        result = materialize(
            INGEST_ASSETS,
            partition_key=key,
            instance=instance,
            resources={"kb": kb},
            run_config=QUIET_RUN,
            tags={"source": CLI_SOURCE, "tenant": split_partition_key(key)[0]},
        )
        embedded = 0
        for event in result.asset_materializations_for_node("chunk_embeddings"):
            value = event.metadata.get("embedded_chunks")
            embedded = int(value.value) if value is not None else 0
        build = pipeline.build(*split_partition_key(key))
        rows.append(
            {
                "doc_version_id": split_partition_key(key)[1],
                "state": build["state"],
                "reason_code": build["reason_code"],
                "chunks": build["chunk_count"] if build["state"] == "indexed" else 0,
                "embedded": embedded,
            }
        )
    if on_progress:
        on_progress(total, total, "done")
    for problem in registered.registration.problems:
        rows.append(
            {
                "doc_version_id": problem.doc_version_id,
                "state": "failed",
                "reason_code": problem.reason.value,
                "chunks": 0,
                "embedded": 0,
                "message": problem.message,
            }
        )
    return rows
