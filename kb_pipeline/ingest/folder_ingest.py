"""Drive the ingestion assets in-process for one tenant folder (what `kb ingest` does).

A tenant's versions go through as few Dagster runs as possible: each run covers a range of
consecutive partitions of `doc_versions` (the range tags a single-run backfill uses), at most
`MAX_PARTITIONS_PER_RUN`, instead of one run per version (about 0.3 s of Dagster overhead each,
docs/benchmarks.md). Partitions of other tenants never fall inside a range: a folder's keys are
cut into blocks that are consecutive in the partitions' order. A block whose versions are all
settled (`IngestionPipeline.settled`: no step would change them) launches no run: an unchanged
folder is answered from the stored builds, with the same rows a run would leave.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from dagster import DagsterInstance, materialize
from dagster._core.storage.tags import (
    ASSET_PARTITION_RANGE_END_TAG,
    ASSET_PARTITION_RANGE_START_TAG,
)

from kb_pipeline.index.assets import chunk_embeddings, search_index
from kb_pipeline.ingest.assets import document_chunks, parsed_documents
from kb_pipeline.ingest.partitions import doc_version_partitions, split_partition_key
from kb_pipeline.ingest.registration import register_folder
from kb_pipeline.resources import KnowledgeBaseResource
from kb_retrieval.ingestion.build_steps import BuildState

INGEST_ASSETS = [parsed_documents, document_chunks, chunk_embeddings, search_index]
QUIET_RUN = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}
CLI_SOURCE = "cli"
Progress = Callable[[int, int, str], None]
MAX_PARTITIONS_PER_RUN = 50


def partition_blocks(
    keys: list[str], ordered: list[str], limit: int = MAX_PARTITIONS_PER_RUN
) -> list[list[str]]:
    """`keys` cut into runs of at most `limit` keys that are consecutive in `ordered` (the
    partitions definition's order), so that a key range holds exactly one block."""
    position = {key: i for i, key in enumerate(ordered)}
    blocks: list[list[str]] = []
    for key in sorted(keys, key=position.__getitem__):
        last = blocks[-1][-1] if blocks else None
        if last is not None and position[key] == position[last] + 1 and len(blocks[-1]) < limit:
            blocks[-1].append(key)
        else:
            blocks.append([key])
    return blocks


def _row(doc_version_id: str, build: BuildState, embedded: int) -> dict[str, Any]:
    """One document's result row (the keys of `kb ingest --json`)."""
    return {
        "doc_version_id": doc_version_id,
        "state": build.state,
        "reason_code": build.reason_code,
        "chunks": build.chunk_count if build.state == "indexed" else 0,
        "embedded": embedded,
    }


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
    kb = kb or KnowledgeBaseResource.from_env()
    pipeline = kb.pipeline()
    registered = register_folder(pipeline, instance, folder)
    tenant = registered.registration.tenant_id
    settled = pipeline.settled(tenant, registered.registration.registered)
    versions = {key: split_partition_key(key)[1] for key in registered.partition_keys}
    by_key: dict[str, dict[str, Any]] = {}
    total = len(registered.partition_keys)
    ordered = instance.get_dynamic_partitions(doc_version_partitions.name)
    done = 0
    for block in partition_blocks(registered.partition_keys, ordered):
        if on_progress:
            on_progress(done, total, block[0])
        if all(versions[key] in settled for key in block):
            by_key.update({key: _row(versions[key], settled[versions[key]], 0) for key in block})
            done += len(block)
            continue
        result = materialize(
            INGEST_ASSETS,
            instance=instance,
            resources={"kb": kb},
            run_config=QUIET_RUN,
            tags={
                "source": CLI_SOURCE,
                "tenant": split_partition_key(block[0])[0],
                ASSET_PARTITION_RANGE_START_TAG: block[0],
                ASSET_PARTITION_RANGE_END_TAG: block[-1],
            },
        )
        embedded: dict[str, int] = {}
        for event in result.asset_materializations_for_node("chunk_embeddings"):
            value = event.metadata.get("embedded_by_version")
            embedded.update(value.value if value is not None else {})
        for key in block:
            tenant_id, doc_version_id = split_partition_key(key)
            build = pipeline.build_state(tenant_id, doc_version_id)
            by_key[key] = _row(doc_version_id, build, int(embedded.get(doc_version_id, 0)))
        done += len(block)
    if on_progress:
        on_progress(total, total, "done")
    rows = [by_key[key] for key in registered.partition_keys]
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
