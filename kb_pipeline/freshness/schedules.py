"""The nightly staleness scan: its job and schedule (the as-of date is the scheduled date)."""

from dagster import (
    AssetSelection,
    RunRequest,
    ScheduleEvaluationContext,
    define_asset_job,
    schedule,
)

from kb_pipeline.freshness.assets import staleness_report_asset

staleness_job = define_asset_job(
    "staleness_job",
    selection=AssetSelection.assets(staleness_report_asset),
    description="Materialise the staleness report of every tenant.",
)


def staleness_run_config(as_of: str) -> dict[str, object]:
    return {"ops": {staleness_report_asset.op.name: {"config": {"as_of": as_of}}}}


@schedule(
    job=staleness_job,
    cron_schedule="0 3 * * *",
    execution_timezone="UTC",
    description="Nightly staleness report, judged as of the schedule's own date.",
)
def nightly_staleness_schedule(context: ScheduleEvaluationContext) -> RunRequest:
    as_of = context.scheduled_execution_time.date().isoformat()
    return RunRequest(run_key=f"staleness-{as_of}", run_config=staleness_run_config(as_of))
