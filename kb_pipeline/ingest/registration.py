"""Register a tenant folder: validate the manifest, record versions, add their partitions."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from dagster import DagsterInstance

from kb_pipeline.ingest.partitions import doc_version_partitions, partition_key
from kb_retrieval.ingestion.pipeline import IngestionPipeline, Registration


@dataclass(frozen=True)
class RegisteredFolder:
    registration: Registration
    partition_keys: list[str]


def register_folder(
    pipeline: IngestionPipeline, instance: DagsterInstance, folder: Path
) -> RegisteredFolder:
    registration = pipeline.register(folder)
    keys = [partition_key(registration.tenant_id, v) for v in registration.registered]
    existing = set(instance.get_dynamic_partitions(doc_version_partitions.name))
    new_keys = [k for k in keys if k not in existing]
    if new_keys:
        instance.add_dynamic_partitions(doc_version_partitions.name, new_keys)
    return RegisteredFolder(registration, keys)
