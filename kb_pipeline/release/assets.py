"""Release assets: build the release's rows beside the active ones, then promote it."""

from collections import Counter

from dagster import AssetExecutionContext, Failure, MaterializeResult, MetadataValue, asset

from kb_eval.cv_store import latest_generalisation
from kb_eval.gates import failed_gates, failed_generalisation_gates, gate_label
from kb_pipeline.index.assets import EMBEDDING_POOL
from kb_pipeline.release.evaluation import RUN_KIND, release_evaluation
from kb_pipeline.release.generalisation import release_generalisation
from kb_pipeline.release.partitions import registered_release, release_partitions
from kb_pipeline.resources import KnowledgeBaseResource
from kb_pipeline.table_metadata import table
from kb_retrieval.db.connection import Database
from kb_retrieval.releases import (
    ReleaseRun,
    active_release,
    ensure_builds,
    latest_release_run,
    promote_release,
)


@asset(
    partitions_def=release_partitions,
    group_name="release",
    kinds={"python", "postgres"},
    pool=EMBEDDING_POOL,
    description=(
        "Every registered document version of every tenant parsed, chunked, embedded and "
        "published for the release's versions, beside the active release's rows."
    ),
)
def release_index(context: AssetExecutionContext, kb: KnowledgeBaseResource) -> MaterializeResult:
    db = kb.database()
    record = registered_release(db, context.partition_key)
    pipeline = kb.pipeline()
    if pipeline.versions != record.release.versions:
        raise Failure(
            description=(
                f"release {record.release_id} needs {record.release.versions}; this code "
                f"location builds {pipeline.versions}"
            )
        )
    states: Counter[str] = Counter()
    embedded = 0
    problems = []
    tenants = db.tenants()
    for tenant_id in tenants:
        for doc_version_id in ensure_builds(db, tenant_id, pipeline.versions):
            reports = pipeline.run_all(tenant_id, doc_version_id)
            embedded += sum(int(r.metrics.get("embedded_chunks", 0)) for r in reports)
            final = reports[-1]
            states[final.state] += 1
            if final.reason_code:
                problems.append(
                    {
                        "partition": f"{tenant_id}/{doc_version_id}",
                        "state": final.state,
                        "reason_code": final.reason_code,
                    }
                )
    metadata = {
        "release_id": record.release_id,
        "tenants": len(tenants),
        "documents": sum(states.values()),
        "indexed": states.get("indexed", 0),
        "embedded_chunks": embedded,
        "states": MetadataValue.json(dict(sorted(states.items()))),
    }
    if problems:
        metadata["problems"] = table(problems, ("partition", "state", "reason_code"))
    return MaterializeResult(metadata=metadata)


@asset(
    deps=[release_evaluation, release_generalisation],
    partitions_def=release_partitions,
    group_name="release",
    kinds={"postgres"},
    description=(
        "Marks the release active for retrieval; refuses unless the release's stored evaluation "
        "passed every gate and its held-out run the safety targets (checked here, so "
        "materialising it alone cannot bypass them)."
    ),
)
def release_promotion(
    context: AssetExecutionContext, kb: KnowledgeBaseResource
) -> MaterializeResult:
    db = kb.database()
    before = active_release(db)
    if before is not None and before.release_id == context.partition_key:
        return MaterializeResult(metadata={"release_id": before.release_id, "already_active": True})
    evaluation = require_passed_gates(db, context.partition_key)
    held_out = require_safe_held_out(db, context.partition_key)
    try:
        record = promote_release(db, context.partition_key)
    except LookupError as error:
        raise Failure(description=str(error)) from error
    return MaterializeResult(
        metadata={
            "release_id": record.release_id,
            "previous_active_release_id": before.release_id if before else "",
            "promoted_at": record.promoted_at.isoformat() if record.promoted_at else "",
            "components": MetadataValue.json(record.release.key),
            "evaluation_run_id": evaluation.run_id,
            "generalisation_run_id": held_out,
        }
    )


def require_passed_gates(db: Database, release_id: str) -> ReleaseRun:
    """The release's latest stored evaluation; Failure naming the gates it missed, or none ran."""
    run = latest_release_run(db, release_id, RUN_KIND)
    if run is None:
        raise Failure(
            description=f"release {release_id} has no stored evaluation: materialise "
            "release_evaluation (and its gates) first"
        )
    missed = failed_gates(run.metrics)
    if missed:
        labels = ", ".join(
            f"{name} {gate_label(name)} (was {run.metrics.get(name)})" for name in missed
        )
        raise Failure(
            description=f"release {release_id} failed gates in evaluation {run.run_id}: {labels}",
            metadata={"failed_gates": ", ".join(missed), "evaluation_run_id": run.run_id},
        )
    return run


def require_safe_held_out(db: Database, release_id: str) -> str:
    """The release's latest held-out run id; Failure when none is stored or it missed a blocking
    (safety) target. The quality targets are warnings and never stop promotion."""
    stored = latest_generalisation(db, release_id)
    if stored is None:
        raise Failure(
            description=f"release {release_id} has no stored leave-one-operator-out run: "
            "materialise release_generalisation (and its checks) first"
        )
    missed = failed_generalisation_gates(stored.pooled, stored.per_operator)
    if missed:
        labels = "; ".join(
            f"{r.gate.label} (missed by {', '.join(r.missed_by) or 'no operator'})" for r in missed
        )
        raise Failure(
            description=f"release {release_id} failed held-out safety in {stored.run_id}: {labels}",
            metadata={"failed_checks": ", ".join(r.gate.name for r in missed)},
        )
    return stored.run_id
