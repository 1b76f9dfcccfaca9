"""The ingestion job: every ingest and index asset for selected document-version partitions."""

from dagster import AssetSelection, define_asset_job

from kb_pipeline.ingest.partitions import doc_version_partitions

ingest_job = define_asset_job(
    "ingest_job",
    selection=AssetSelection.groups("ingest", "index"),
    partitions_def=doc_version_partitions,
    description="Parse, chunk, embed and publish document versions.",
)
