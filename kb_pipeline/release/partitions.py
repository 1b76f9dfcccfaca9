"""Partitions of the release assets: one per release id, and the release this code builds."""

from dagster import DagsterInstance, DynamicPartitionsDefinition, Failure

from kb_pipeline.resources import KnowledgeBaseResource
from kb_retrieval.db.connection import Database
from kb_retrieval.releases import Release, ReleaseRecord, get_release, register_release

release_partitions = DynamicPartitionsDefinition(name="releases")


def candidate_release(kb: KnowledgeBaseResource) -> Release:
    """The release of this code location: its pipeline versions and retrieval configuration."""
    return Release.of(kb.pipeline().versions, kb.retriever().config)


def register_candidate(
    kb: KnowledgeBaseResource, instance: DagsterInstance, release: Release | None = None
) -> ReleaseRecord:
    """Record the release (default: the candidate) and add its partition."""
    record = register_release(kb.database(), release or candidate_release(kb))
    if not instance.has_dynamic_partition(release_partitions.name, record.release_id):
        instance.add_dynamic_partitions(release_partitions.name, [record.release_id])
    return record


def registered_release(db: Database, release_id: str) -> ReleaseRecord:
    """The stored release behind a partition key; a Dagster failure when it was never registered."""
    record = get_release(db, release_id)
    if record is None:
        raise Failure(description=f"release {release_id} is not registered")
    return record
