"""The release gates: blocking asset checks on the evaluation, one per target metric.

The targets live in `kb_eval.gates` (docs/spec.md 10.3). A failing gate stops the promotion
of the release in the same run.
"""

from typing import Any

from dagster import (
    AssetCheckExecutionContext,
    AssetCheckResult,
    AssetChecksDefinition,
    AssetCheckSeverity,
    AssetRecordsFilter,
    DagsterInstance,
    asset_check,
)

from kb_eval.gates import GATES, gate_label, gate_passes
from kb_pipeline.release.evaluation import release_evaluation

PARTITION_TAG = "dagster/partition"


def evaluation_metadata(instance: DagsterInstance, release_id: str) -> dict[str, Any]:
    """Metadata values of the latest evaluation of a release partition ({} when none)."""
    records = instance.fetch_materializations(
        AssetRecordsFilter(asset_key=release_evaluation.key, asset_partitions=[release_id]),
        limit=1,
    ).records
    if not records or records[0].asset_materialization is None:
        return {}
    return {k: v.value for k, v in records[0].asset_materialization.metadata.items()}


def gate(metric: str) -> AssetChecksDefinition:
    """A blocking check that `metric` of the release's evaluation meets its target."""
    label = gate_label(metric)

    @asset_check(
        asset=release_evaluation,
        name=f"gate_{metric}",
        blocking=True,
        description=f"Release gate: {metric} {label}.",
    )
    def _check(context: AssetCheckExecutionContext) -> AssetCheckResult:
        release_id = context.run.tags.get(PARTITION_TAG, "")
        metadata = evaluation_metadata(context.instance, release_id) if release_id else {}
        value = metadata.get(metric)
        return AssetCheckResult(
            passed=gate_passes(metric, value),
            severity=AssetCheckSeverity.ERROR,
            metadata={
                "value": value if isinstance(value, int | float) else "missing",
                "target": label,
                "release_id": release_id,
                "run_id": str(metadata.get("run_id", "")),
            },
            description=f"{metric} = {value} (target {label})",
        )

    return _check


release_gates = [gate(metric) for metric in GATES]
