"""Ingestion assets: parse each document version, then cut it into chunks (thin wrappers)."""

from dagster import AssetExecutionContext, BackfillPolicy, MaterializeResult, asset

from kb_pipeline.ingest.partitions import doc_version_partitions
from kb_pipeline.resources import KnowledgeBaseResource
from kb_pipeline.step_metadata import chunk_table, run_step
from kb_pipeline.table_metadata import ROW_COUNT

BACKFILL = BackfillPolicy.multi_run(max_partitions_per_run=50)


@asset(
    partitions_def=doc_version_partitions,
    backfill_policy=BACKFILL,
    group_name="ingest",
    kinds={"python", "postgres"},
    description="Normalised text spans of a document version (PDF, DOCX, TXT/MD, HTML, entries).",
)
def parsed_documents(
    context: AssetExecutionContext, kb: KnowledgeBaseResource
) -> MaterializeResult:
    pipeline = kb.pipeline()
    _, metadata = run_step(context.partition_keys, pipeline.parse)
    return MaterializeResult(metadata=metadata)


@asset(
    deps=[parsed_documents],
    partitions_def=doc_version_partitions,
    backfill_policy=BACKFILL,
    group_name="ingest",
    kinds={"python", "postgres"},
    description="Deterministic 500-900 token chunks with locators and policy-likeness hints.",
)
def document_chunks(context: AssetExecutionContext, kb: KnowledgeBaseResource) -> MaterializeResult:
    pipeline = kb.pipeline()
    reports, metadata = run_step(context.partition_keys, pipeline.chunk)
    if chunks := chunk_table(reports):
        metadata["chunk_table"] = chunks
    if "chunks" in metadata:
        metadata[ROW_COUNT] = metadata["chunks"]
    return MaterializeResult(metadata=metadata)
