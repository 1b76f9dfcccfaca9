"""The Dagster code location: every domain's assets, checks, jobs, sensors and resources."""

from __future__ import annotations

import os

from dagster import Definitions, EnvVar

from kb_pipeline.freshness.assets import staleness_report_asset
from kb_pipeline.freshness.schedules import nightly_staleness_schedule, staleness_job
from kb_pipeline.index.assets import chunk_embeddings, search_index
from kb_pipeline.ingest.assets import document_chunks, parsed_documents
from kb_pipeline.ingest.jobs import ingest_job
from kb_pipeline.ingest.sensors import tenant_folder_sensor
from kb_pipeline.release.assets import release_index, release_promotion
from kb_pipeline.release.checks import generalisation_checks, release_gates
from kb_pipeline.release.evaluation import release_evaluation
from kb_pipeline.release.generalisation import release_generalisation
from kb_pipeline.release.sensors import release_candidate_sensor, release_job
from kb_pipeline.resources import KnowledgeBaseResource


def knowledge_base_resource() -> KnowledgeBaseResource:
    """Built from the environment: KB_DATABASE_URL (optional) and KB_EMBEDDER (default minilm)."""
    return KnowledgeBaseResource(
        database_url=EnvVar("KB_DATABASE_URL") if os.environ.get("KB_DATABASE_URL") else "",
        embedder=EnvVar("KB_EMBEDDER") if os.environ.get("KB_EMBEDDER") else "minilm",
    )


defs = Definitions(
    assets=[
        parsed_documents,
        document_chunks,
        chunk_embeddings,
        search_index,
        release_index,
        release_evaluation,
        release_generalisation,
        release_promotion,
        staleness_report_asset,
    ],
    asset_checks=[*release_gates, *generalisation_checks],
    jobs=[ingest_job, release_job, staleness_job],
    sensors=[tenant_folder_sensor, release_candidate_sensor],
    schedules=[nightly_staleness_schedule],
    resources={"kb": knowledge_base_resource()},
)
