"""The evaluation asset: a release's golden-set and draft metrics, stored and compared."""

import json
import math
from dataclasses import replace
from typing import Any

from dagster import (
    AssetDep,
    AssetExecutionContext,
    Failure,
    MaterializeResult,
    MetadataValue,
    asset,
)

from kb_eval import calibration
from kb_eval.drafts.grading import DRAFT_METRICS, grade_golden_drafts
from kb_eval.gates import GATES, failed_gates, gate_label, gate_passes
from kb_eval.golden import GoldenCase, load_golden
from kb_eval.golden_eval import EvalRun, evaluate_cases, store_run
from kb_pipeline.release import report_charts
from kb_pipeline.release.partitions import registered_release, release_partitions
from kb_pipeline.release.settings import EvaluationConfig, resolve_settings
from kb_pipeline.resources import KnowledgeBaseResource
from kb_pipeline.table_metadata import frame_table, table
from kb_retrieval.db.server import kb_home
from kb_retrieval.releases import (
    Release,
    embedder_for_model,
    previous_release_run,
)
from kb_retrieval.retrieval.rerank import reranker_from_config
from kb_retrieval.retrieval.retriever import Retriever

RUN_KIND = "release"
GATE_COLUMNS = ("metric", "value", "target", "passed")


def release_retriever(kb: KnowledgeBaseResource, release: Release) -> Retriever:
    """A retriever that serves exactly this release (its versions, model and configuration)."""
    try:
        config = release.config()
        embedder = embedder_for_model(release.embedding_model_id, kb.pipeline().embedder)
    except (LookupError, ValueError) as error:
        raise Failure(description=str(error)) from error
    reranker = reranker_from_config(config)
    return Retriever(kb.database(), embedder, release.versions, config, reranker, audit=False)


def calibration_report(
    cases: list[GoldenCase], run: EvalRun
) -> tuple[dict[str, float], dict[str, Any]]:
    """ECE values and the tables (DataFrames) of calibration.py for one run."""
    chunk_pairs = calibration.chunk_confidence_pairs(cases, run.results)
    case_pairs = calibration.case_confidence_pairs(cases, run.results)
    values = {
        "expected_calibration_error": calibration.expected_calibration_error(chunk_pairs),
        "expected_calibration_error_case": calibration.expected_calibration_error(case_pairs),
    }
    tables = {
        "reliability": calibration.reliability_table(chunk_pairs),
        "confusion": calibration.outcome_confusion(calibration.outcome_pairs(cases, run.results)),
        "by_category": calibration.recall_by_category(cases, run.results),
        "by_reason_code": calibration.recall_by_reason_code(cases, run.results),
    }
    return values, tables


def _number(value: Any) -> float | int | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return None if isinstance(value, float) and math.isnan(value) else value


def comparison(
    metrics: dict[str, Any], previous: dict[str, Any] | None
) -> tuple[dict[str, float], str]:
    """delta_<metric> values and a Markdown table: metric, this release, previous, delta, gate."""
    deltas: dict[str, float] = {}
    lines = [
        "| metric | this release | previous | delta | gate |",
        "| --- | --- | --- | --- | --- |",
    ]
    for name, value in metrics.items():
        current, before = _number(value), _number((previous or {}).get(name))
        if current is None:
            continue
        delta = round(float(current) - float(before), 6) if before is not None else None
        if delta is not None:
            deltas[f"delta_{name}"] = delta
        label = gate_label(name)
        gate = f"{label} {'ok' if gate_passes(name, value) else 'MISS'}" if label else ""
        shown = [
            report_charts.cell(v, 4) if v is not None else "-" for v in (current, before, delta)
        ]
        lines.append(f"| {name} | {' | '.join(shown)} | {gate} |")
    return deltas, "\n".join(lines)


def _shown(value: Any) -> str:
    number = _number(value)
    return "missing" if number is None else report_charts.cell(number, 4)


def gate_table(metrics: dict[str, Any]) -> MetadataValue:
    """This release's result against every gate (one row per gated metric)."""
    rows = [
        {
            "metric": name,
            "value": _shown(metrics.get(name)),
            "target": gate.label,
            "passed": gate.passes(metrics.get(name)),
        }
        for name, gate in GATES.items()
    ]
    return table(rows, GATE_COLUMNS)


def _plots(release_id: str, ece: float, tables: dict[str, Any]) -> dict[str, Any]:
    folder = kb_home() / "reports" / release_id
    pngs = {
        "reliability_diagram": report_charts.reliability_png(tables["reliability"], ece),
        "outcome_confusion_plot": report_charts.confusion_png(tables["confusion"]),
    }
    if len(tables["by_category"]):
        pngs["recall_by_category_plot"] = report_charts.recall_by_category_png(
            tables["by_category"]
        )
    metadata: dict[str, Any] = {}
    for name, png in pngs.items():
        path = report_charts.save_png(png, folder / f"{name}.png")
        metadata[name] = MetadataValue.md(report_charts.image_md(png, name))
        metadata[f"{name}_file"] = MetadataValue.path(str(path))
    return metadata


@asset(
    deps=[AssetDep("release_index")],
    partitions_def=release_partitions,
    group_name="release",
    kinds={"python", "postgres"},
    description=(
        "The golden set through the release's retrieve call, drafts graded, run stored; every "
        "metric, its delta to the previous release, confusion matrix, reliability, recall tables."
    ),
)
def release_evaluation(
    context: AssetExecutionContext, config: EvaluationConfig, kb: KnowledgeBaseResource
) -> MaterializeResult:
    db = kb.database()
    record = registered_release(db, context.partition_key)
    release = record.release
    settings = resolve_settings(config)
    golden, as_of = settings.golden_path, settings.as_of
    cases = load_golden(golden)
    retriever = release_retriever(kb, release)
    run = evaluate_cases(retriever, cases, as_of)
    candidates = {case_id: result.candidates for case_id, result in run.results.items()}
    graded = grade_golden_drafts(cases, run.packs, candidates)
    ece, tables = calibration_report(cases, run)
    metrics = {**run.metrics, **{name: graded[name] for name in DRAFT_METRICS}, **ece}
    stored = replace(run, run_id=f"{release.release_id}-{run.run_id}", metrics=metrics)
    store_run(
        db,
        stored,
        golden_path=golden,
        as_of=as_of,
        config_version=release.config_version,
        release_id=release.release_id,
        kind=RUN_KIND,
    )
    previous = previous_release_run(db, release.release_id, RUN_KIND)
    deltas, compared = comparison(metrics, previous.metrics if previous else None)
    metadata: dict[str, Any] = {name: value for name, value in metrics.items()}
    metadata.update(deltas)
    metadata.update(
        {
            "release_id": release.release_id,
            "components": MetadataValue.json(release.key),
            "run_id": stored.run_id,
            "cases": len(cases),
            "as_of": as_of.isoformat(),
            "golden_path": MetadataValue.path(str(golden)),
            "previous_release_id": previous.release_id if previous else "",
            "comparison": MetadataValue.md(compared),
            "gate_results": gate_table(metrics),
            "failed_gates": ", ".join(failed_gates(metrics)),
            "policy_claims": graded["policy_claims"],
            "unresolved_citations": graded["unresolved_citations"],
            "outcome_confusion": frame_table(tables["confusion"], index=True),
            "reliability": frame_table(tables["reliability"]),
            "recall_by_category": frame_table(tables["by_category"]),
            "recall_by_reason_code": frame_table(tables["by_reason_code"]),
        }
    )
    metadata.update(_plots(release.release_id, ece["expected_calibration_error"], tables))
    context.log.info(json.dumps({"release_id": release.release_id, **metrics}, sort_keys=True))
    return MaterializeResult(metadata=metadata)
