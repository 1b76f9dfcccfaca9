"""Partitions of the ingestion assets: one per tenant document version (`tenant/doc_version_id`)."""

from dagster import DynamicPartitionsDefinition

doc_version_partitions = DynamicPartitionsDefinition(name="doc_versions")


def partition_key(tenant_id: str, doc_version_id: str) -> str:
    return f"{tenant_id}/{doc_version_id}"


def split_partition_key(key: str) -> tuple[str, str]:
    tenant_id, _, doc_version_id = key.partition("/")
    if not tenant_id or not doc_version_id:
        raise ValueError(f"partition key {key!r} is not tenant_id/doc_version_id")
    return tenant_id, doc_version_id
