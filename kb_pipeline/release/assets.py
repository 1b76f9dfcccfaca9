"""Release assets: build the release's rows beside the active ones, then promote it."""

from collections import Counter

from dagster import AssetExecutionContext, Failure, MaterializeResult, MetadataValue, asset

from kb_pipeline.release.evaluation import release_evaluation
from kb_pipeline.release.partitions import release_partitions
from kb_pipeline.resources import KnowledgeBaseResource
from kb_retrieval.releases import active_release, ensure_builds, get_release, promote_release


@asset(
    partitions_def=release_partitions,
    group_name="release",
    kinds={"python", "postgres"},
    description=(
        "Every registered document version of every tenant parsed, chunked, embedded and "
        "published for the release's versions, beside the active release's rows."
    ),
)
def release_index(context: AssetExecutionContext, kb: KnowledgeBaseResource) -> MaterializeResult:
    db = kb.database()
    record = get_release(db, context.partition_key)
    if record is None:
        raise Failure(description=f"release {context.partition_key} is not registered")
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
                    f"- `{tenant_id}/{doc_version_id}`: {final.state} {final.reason_code}"
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
        metadata["problems"] = MetadataValue.md("\n".join(problems))
    return MaterializeResult(metadata=metadata)


@asset(
    deps=[release_evaluation],
    partitions_def=release_partitions,
    group_name="release",
    kinds={"postgres"},
    description="Marks the release active for retrieval; runs only when every gate passed.",
)
def release_promotion(
    context: AssetExecutionContext, kb: KnowledgeBaseResource
) -> MaterializeResult:
    db = kb.database()
    before = active_release(db)
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
        }
    )
