"""Index assets: window embeddings of every chunk, then the atomic publish into the search index."""

from dagster import AssetExecutionContext, MaterializeResult, MetadataValue, asset

from kb_pipeline.index.checks import documents_reached_indexed, index_check, partition_builds
from kb_pipeline.ingest.assets import BACKFILL, document_chunks
from kb_pipeline.ingest.partitions import doc_version_partitions
from kb_pipeline.resources import KnowledgeBaseResource
from kb_pipeline.step_metadata import run_batched_step, run_step
from kb_pipeline.table_metadata import ROW_COUNT

# The concurrency pool of every step that runs the embedding model (limit in deploy/dagster.yaml).
EMBEDDING_POOL = "embedding"


@asset(
    deps=[document_chunks],
    partitions_def=doc_version_partitions,
    backfill_policy=BACKFILL,
    group_name="index",
    kinds={"pytorch", "pgvector"},
    pool=EMBEDDING_POOL,
    description="MiniLM vectors per chunk window (cached by text hash: unchanged text is never re-embedded).",
)
def chunk_embeddings(
    context: AssetExecutionContext, kb: KnowledgeBaseResource
) -> MaterializeResult:
    pipeline = kb.pipeline()
    # All the run's versions of a tenant at once: their windows share forward passes.
    reports, metadata = run_batched_step(context.partition_keys, pipeline.embed_many)
    metadata.setdefault("embedded_chunks", 0)
    metadata["embedded_by_version"] = MetadataValue.json(
        {r.doc_version_id: int(r.metrics.get("embedded_chunks", 0)) for r in reports}
    )
    metadata["embedding_model_id"] = pipeline.versions.embedding_model_id
    return MaterializeResult(metadata=metadata)


@asset(
    deps=[chunk_embeddings],
    partitions_def=doc_version_partitions,
    backfill_policy=BACKFILL,
    group_name="index",
    kinds={"postgres"},
    check_specs=[documents_reached_indexed],
    description="The version made visible to retrieval in one transaction once all its rows exist.",
)
def search_index(context: AssetExecutionContext, kb: KnowledgeBaseResource) -> MaterializeResult:
    pipeline = kb.pipeline()
    _, metadata = run_step(context.partition_keys, pipeline.publish)
    metadata["versions"] = str(pipeline.versions)
    builds = partition_builds(pipeline, context.partition_keys)
    metadata[ROW_COUNT] = sum(row["chunks"] for row in builds)
    checks = []
    if documents_reached_indexed.key in context.selected_asset_check_keys:
        checks.append(index_check(builds))
    return MaterializeResult(metadata=metadata, check_results=checks)
