"""The ingestion job: every ingest and index asset for selected document-version partitions."""

from dagster import AssetSelection, define_asset_job

ingest_job = define_asset_job(
    "ingest_job",
    selection=AssetSelection.groups("ingest", "index"),
    description="Parse, chunk, embed and publish document versions.",
)
