"""Index assets: window embeddings of every chunk, then the atomic publish into the search index."""

import time

from dagster import AssetExecutionContext, MaterializeResult, asset

from kb_pipeline.ingest.assets import BACKFILL, document_chunks
from kb_pipeline.ingest.partitions import doc_version_partitions, split_partition_key
from kb_pipeline.resources import KnowledgeBaseResource
from kb_pipeline.step_metadata import step_metadata


@asset(
    deps=[document_chunks],
    partitions_def=doc_version_partitions,
    backfill_policy=BACKFILL,
    group_name="index",
    kinds={"pytorch", "pgvector"},
    description="MiniLM vectors per chunk window (cached by text hash: unchanged text is never re-embedded).",
)
def chunk_embeddings(
    context: AssetExecutionContext, kb: KnowledgeBaseResource
) -> MaterializeResult:
    pipeline = kb.pipeline()
    started = time.perf_counter()
    reports = [pipeline.embed(*split_partition_key(key)) for key in context.partition_keys]
    metadata = step_metadata(reports, time.perf_counter() - started)
    metadata.setdefault("embedded_chunks", 0)
    metadata["embedding_model_id"] = pipeline.versions.embedding_model_id
    return MaterializeResult(metadata=metadata)


@asset(
    deps=[chunk_embeddings],
    partitions_def=doc_version_partitions,
    backfill_policy=BACKFILL,
    group_name="index",
    kinds={"postgres"},
    description="The version made visible to retrieval in one transaction once all its rows exist.",
)
def search_index(context: AssetExecutionContext, kb: KnowledgeBaseResource) -> MaterializeResult:
    pipeline = kb.pipeline()
    started = time.perf_counter()
    reports = [pipeline.publish(*split_partition_key(key)) for key in context.partition_keys]
    metadata = step_metadata(reports, time.perf_counter() - started)
    metadata["versions"] = str(pipeline.versions)
    return MaterializeResult(metadata=metadata)
