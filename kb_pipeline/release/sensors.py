"""The release job and the sensor that registers this code location's release and runs it."""

from datetime import UTC, datetime

from dagster import (
    AssetSelection,
    RunRequest,
    SensorEvaluationContext,
    SensorResult,
    SkipReason,
    define_asset_job,
    sensor,
)

from kb_pipeline.release.partitions import candidate_release, release_partitions
from kb_pipeline.release.settings import sensor_run_config
from kb_pipeline.resources import KnowledgeBaseResource
from kb_retrieval.releases import register_release

release_job = define_asset_job(
    "release_job",
    selection=AssetSelection.groups("release"),
    description="Build a release's index, evaluate it against the gates, promote it if they pass.",
)


@sensor(
    job=release_job,
    minimum_interval_seconds=300,
    description="Registers the release of this code location (versions + config) and runs it once.",
)
def release_candidate_sensor(
    context: SensorEvaluationContext, kb: KnowledgeBaseResource
) -> SensorResult | SkipReason:
    db = kb.database()
    if not db.tenants():
        return SkipReason("no tenant is registered yet")
    release = candidate_release(kb)
    if context.instance.has_dynamic_partition(release_partitions.name, release.release_id):
        return SkipReason(f"release {release.release_id} is already registered")
    register_release(db, release)
    return SensorResult(
        run_requests=[
            RunRequest(
                run_key=release.release_id,
                partition_key=release.release_id,
                run_config=sensor_run_config(datetime.now(UTC).date()),
            )
        ],
        dynamic_partitions_requests=[release_partitions.build_add_request([release.release_id])],
    )
