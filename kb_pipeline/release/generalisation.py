"""The release's held-out evaluation: leave one operator out over the configured golden files,
through the same `run_cross_validation` call as `kb eval ... --cv tenant`, stored with the release."""

import json
from typing import Any

from dagster import (
    AssetDep,
    AssetExecutionContext,
    Failure,
    MaterializeResult,
    MetadataValue,
    asset,
)

from kb_eval.cross_validation import (
    TABLE_COLUMNS,
    format_cv_table,
    load_case_sets,
    run_cross_validation,
)
from kb_eval.cv_store import store_generalisation
from kb_eval.gates import GENERALISATION_GATES, OperatorGateResult, judge_generalisation_gate
from kb_eval.golden import GoldenFormatError
from kb_pipeline.release.evaluation import release_retriever
from kb_pipeline.release.partitions import registered_release, release_partitions
from kb_pipeline.release.settings import GeneralisationConfig, resolve_cv_specs
from kb_pipeline.resources import KnowledgeBaseResource
from kb_pipeline.table_metadata import table

POOLED = ("cases", *(key for key, _, _ in TABLE_COLUMNS if key != "cases"))
TARGET_COLUMNS = ("check", "target", "value", "missed_by", "blocking", "passed")


def operator_table(report: dict[str, Any]) -> MetadataValue:
    """One row per held-out operator and a pooled row: the columns of `kb eval --cv tenant`."""
    rows = [
        {"operator": name, **{key: figures[key] for key, _, _ in TABLE_COLUMNS}}
        for name, figures in [*report["per_operator"].items(), ("pooled", report["pooled"])]
    ]
    return table(rows, ("operator", *(key for key, _, _ in TABLE_COLUMNS)))


def target_table(results: list[OperatorGateResult]) -> MetadataValue:
    """Every held-out target: its value (the worst operator's when per operator) and who misses it."""
    rows = [
        {
            "check": r.gate.name,
            "target": r.gate.label,
            "value": "missing" if r.value is None else f"{r.value:.4g}",
            "missed_by": ", ".join(r.missed_by),
            "blocking": r.gate.blocking,
            "passed": r.passed,
        }
        for r in results
    ]
    return table(rows, TARGET_COLUMNS)


@asset(
    deps=[AssetDep("release_index")],
    partitions_def=release_partitions,
    group_name="release",
    kinds={"python", "postgres"},
    description=(
        "Leave one operator out over the held-out golden files (KB_RELEASE_CV_GOLDEN) with the "
        "release's retrieval: per-operator and pooled figures, as `kb eval ... --cv tenant`."
    ),
)
def release_generalisation(
    context: AssetExecutionContext, config: GeneralisationConfig, kb: KnowledgeBaseResource
) -> MaterializeResult:
    db = kb.database()
    record = registered_release(db, context.partition_key)
    try:
        sets = load_case_sets(resolve_cv_specs(config))
        report = run_cross_validation(release_retriever(kb, record.release), sets)
    except (GoldenFormatError, ValueError) as error:
        raise Failure(description=str(error)) from error
    run_id = store_generalisation(db, record.release_id, sets, report)
    pooled, per_operator = report["pooled"], report["per_operator"]
    results = [
        judge_generalisation_gate(g, pooled, per_operator) for g in GENERALISATION_GATES.values()
    ]
    metadata: dict[str, Any] = {f"pooled_{key}": pooled[key] for key in POOLED}
    metadata.update(
        {
            "release_id": record.release_id,
            "run_id": run_id,
            "operators": len(per_operator),
            "golden": MetadataValue.json(report["golden"]),
            "training_rows": report["training_rows"],
            "per_operator": operator_table(report),
            "per_operator_md": MetadataValue.md(format_cv_table(report)),
            "targets": target_table(results),
            "missed_targets": ", ".join(r.gate.name for r in results if not r.passed),
            "figures": MetadataValue.json(
                json.loads(
                    json.dumps({"pooled": pooled, "per_operator": per_operator}, default=float)
                )
            ),
        }
    )
    context.log.info(json.dumps({"release_id": record.release_id, "pooled": pooled}, default=str))
    return MaterializeResult(metadata=metadata)
