"""Asset checks on the search index."""

from dagster import AssetCheckExecutionContext, AssetCheckResult, AssetCheckSeverity, asset_check

from kb_pipeline.index.assets import search_index
from kb_pipeline.ingest.partitions import split_partition_key
from kb_pipeline.resources import KnowledgeBaseResource


@asset_check(asset=search_index, description="Every document version of the run reached `indexed`.")
def documents_reached_indexed(
    context: AssetCheckExecutionContext, kb: KnowledgeBaseResource
) -> AssetCheckResult:
    pipeline = kb.pipeline()
    keys = context.run.tags.get("dagster/partition")
    partition_keys = [keys] if keys else []
    not_indexed = {}
    for key in partition_keys:
        build = pipeline.build(*split_partition_key(key))
        if build["state"] != "indexed":
            not_indexed[key] = f"{build['state']} {build['reason_code'] or ''}".strip()
    return AssetCheckResult(
        passed=not not_indexed,
        severity=AssetCheckSeverity.WARN,
        metadata={"checked": len(partition_keys), "not_indexed": not_indexed},
    )
