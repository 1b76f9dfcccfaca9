"""Ingestion assets: parse each document version, then cut it into chunks (thin wrappers)."""

import time

from dagster import AssetExecutionContext, BackfillPolicy, MaterializeResult, MetadataValue, asset

from kb_pipeline.ingest.partitions import doc_version_partitions, split_partition_key
from kb_pipeline.resources import KnowledgeBaseResource
from kb_pipeline.step_metadata import step_metadata

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
    started = time.perf_counter()
    reports = [pipeline.parse(*split_partition_key(key)) for key in context.partition_keys]
    return MaterializeResult(metadata=step_metadata(reports, time.perf_counter() - started))


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
    started = time.perf_counter()
    reports = [pipeline.chunk(*split_partition_key(key)) for key in context.partition_keys]
    metadata = step_metadata(reports, time.perf_counter() - started)
    previews = [row for report in reports for row in report.metrics.get("preview", [])]
    if previews:
        lines = ["| chunk_id | locator | tokens | text |", "| --- | --- | --- | --- |"]
        lines += [
            f"| {p['chunk_id']} | `{p['locator']}` | {p['tokens']} | {p['text'][:80].replace('|', '/')} |"
            for p in previews[:10]
        ]
        metadata["preview"] = MetadataValue.md("\n".join(lines))
    return MaterializeResult(metadata=metadata)
