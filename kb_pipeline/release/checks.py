"""The release gates: blocking asset checks on the evaluation, one per target metric.

The targets live in `kb_eval.gates` (docs/spec.md 10.3). A failing gate stops the promotion
of the release in the same run. A re-run of the evaluation of the release that is already active
reports a miss as a WARN: the release stays active (retrieval still serves it) until another
release passes and is promoted, so it never shows as a failed release.
"""

from typing import Any

from dagster import (
    AssetCheckExecutionContext,
    AssetCheckResult,
    AssetChecksDefinition,
    AssetCheckSeverity,
    AssetKey,
    AssetRecordsFilter,
    DagsterInstance,
    asset_check,
)

from kb_eval.gates import (
    GATES,
    GENERALISATION_GATES,
    OperatorGate,
    gate_label,
    gate_passes,
    judge_generalisation_gate,
)
from kb_pipeline.release.evaluation import release_evaluation
from kb_pipeline.release.generalisation import release_generalisation
from kb_pipeline.resources import KnowledgeBaseResource
from kb_retrieval.releases import active_release

PARTITION_TAG = "dagster/partition"


def evaluation_metadata(
    instance: DagsterInstance, release_id: str, asset_key: AssetKey = release_evaluation.key
) -> dict[str, Any]:
    """Metadata values of the latest materialisation of a release partition ({} when none)."""
    records = instance.fetch_materializations(
        AssetRecordsFilter(asset_key=asset_key, asset_partitions=[release_id]),
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
    def _check(context: AssetCheckExecutionContext, kb: KnowledgeBaseResource) -> AssetCheckResult:
        release_id = context.run.tags.get(PARTITION_TAG, "")
        metadata = evaluation_metadata(context.instance, release_id) if release_id else {}
        value = metadata.get(metric)
        active = active_release(kb.database())
        is_active = active is not None and active.release_id == release_id
        passed = gate_passes(metric, value)
        note = "" if passed or not is_active else "; the release stays active (re-evaluation)"
        return AssetCheckResult(
            passed=passed,
            severity=AssetCheckSeverity.WARN if is_active else AssetCheckSeverity.ERROR,
            metadata={
                "value": value if isinstance(value, int | float) else "missing",
                "target": label,
                "release_id": release_id,
                "active_release": is_active,
                "run_id": str(metadata.get("run_id", "")),
            },
            description=f"{release_id}: {metric} = {value} (target {label}){note}",
        )

    return _check


release_gates = [gate(metric) for metric in GATES]


def held_out_check(target: OperatorGate) -> AssetChecksDefinition:
    """A check of one leave-one-operator-out target; blocking for safety, else a warning."""

    @asset_check(
        asset=release_generalisation,
        name=target.name,
        blocking=target.blocking,
        description=f"Held-out operators, {target.label}"
        + (" (blocks promotion)." if target.blocking else " (warning, never blocks)."),
    )
    def _check(context: AssetCheckExecutionContext, kb: KnowledgeBaseResource) -> AssetCheckResult:
        release_id = context.run.tags.get(PARTITION_TAG, "")
        metadata = (
            evaluation_metadata(context.instance, release_id, release_generalisation.key)
            if release_id
            else {}
        )
        figures = metadata.get("figures") or {}
        result = judge_generalisation_gate(
            target, figures.get("pooled", {}), figures.get("per_operator", {})
        )
        active = active_release(kb.database())
        is_active = active is not None and active.release_id == release_id
        severity = AssetCheckSeverity.ERROR
        if not target.blocking or is_active:
            severity = AssetCheckSeverity.WARN
        value = "missing" if result.value is None else result.value
        missed = f"; missed by {', '.join(result.missed_by)}" if result.missed_by else ""
        return AssetCheckResult(
            passed=result.passed,
            severity=severity,
            metadata={
                "value": value,
                "target": target.label,
                "missed_by": ", ".join(result.missed_by),
                "blocking": target.blocking,
                "release_id": release_id,
                "active_release": is_active,
                "run_id": str(metadata.get("run_id", "")),
            },
            description=f"{release_id}: {target.label}, value {value}{missed}",
        )

    return _check


generalisation_checks = [held_out_check(target) for target in GENERALISATION_GATES.values()]
