"""The staleness report: per tenant, stale, superseded-but-live and soon-effective versions."""

from dataclasses import asdict
from datetime import UTC, date, datetime
from typing import Any

from dagster import (
    AssetCheckResult,
    AssetCheckSeverity,
    AssetCheckSpec,
    AssetExecutionContext,
    Config,
    MaterializeResult,
    MetadataValue,
    TableColumn,
    TableRecord,
    TableSchema,
    asset,
)

from kb_pipeline.resources import KnowledgeBaseResource
from kb_retrieval.db.connection import Database
from kb_retrieval.freshness import StalenessReport, VersionFacts, staleness_report
from kb_retrieval.models import PipelineVersions
from kb_retrieval.releases import active_release

CHECK_NAME = "no_stale_sensitive_documents"
SELECT_FACTS = """
SELECT v.doc_version_id, v.doc_id, v.title, v.category, v.effective_date, v.last_reviewed_at,
       v.supersedes_doc_version_id, coalesce(b.state = 'indexed', false)
FROM doc_versions v
LEFT JOIN doc_builds b ON b.tenant_id = v.tenant_id AND b.doc_version_id = v.doc_version_id
  AND b.parser_version = %(parser_version)s AND b.chunker_version = %(chunker_version)s
  AND b.embedding_model_id = %(embedding_model_id)s
WHERE v.tenant_id = %(tenant_id)s
ORDER BY v.doc_version_id
"""
COLUMNS = (
    "tenant_id",
    "section",
    "category",
    "sensitive",
    "doc_version_id",
    "title",
    "last_reviewed_at",
    "days_since_review",
    "effective_date",
    "detail",
)
COLUMN_TYPES = {"sensitive": "bool", "days_since_review": "int"}


class StalenessConfig(Config):
    as_of: str = ""


def tenant_facts(db: Database, tenant_id: str, versions: PipelineVersions) -> list[VersionFacts]:
    """Every registered version of the tenant, `indexed` for the serving pipeline versions."""
    with db.tenant(tenant_id) as conn:
        rows = conn.execute(SELECT_FACTS, {"tenant_id": tenant_id, **asdict(versions)}).fetchall()
    return [VersionFacts(*row) for row in rows]


def report_as_of(context: AssetExecutionContext, config: StalenessConfig) -> date:
    """Config `as_of` (the schedule sets its scheduled date), else the day the run was created."""
    if config.as_of:
        return date.fromisoformat(config.as_of)
    record = context.instance.get_run_record_by_id(context.run.run_id)
    if record is None:
        raise ValueError("as_of is not configured and the run record is missing")
    return datetime.fromtimestamp(record.create_timestamp.timestamp(), tz=UTC).date()


def _table(rows: list[dict[str, Any]]) -> MetadataValue:
    schema = TableSchema(
        columns=[TableColumn(name, COLUMN_TYPES.get(name, "string")) for name in COLUMNS]
    )
    records = [
        TableRecord({k: ("" if row[k] is None else row[k]) for k in COLUMNS}) for row in rows
    ]
    return MetadataValue.table(records, schema)


def _markdown(report: StalenessReport) -> str:
    lines = [f"### {report.tenant_id} (as of {report.as_of})"]
    for section in ("stale", "superseded_live", "upcoming"):
        items = report.section(section)
        lines.append(f"**{section}**: {len(items)}")
        lines += [
            f"- {'⚠ ' if item.sensitive and section == 'stale' else ''}`{item.category}` "
            f"{item.title} (`{item.doc_version_id}`): {item.detail}"
            for item in items
        ]
    return "\n".join(lines)


@asset(
    name="staleness_report",
    group_name="freshness",
    kinds={"python", "postgres"},
    check_specs=[AssetCheckSpec(CHECK_NAME, asset="staleness_report")],
    description=(
        "Per tenant: versions not reviewed for 180 days (sensitive categories first), superseded "
        "versions still indexed, versions becoming effective in the next 30 days."
    ),
)
def staleness_report_asset(
    context: AssetExecutionContext, config: StalenessConfig, kb: KnowledgeBaseResource
) -> MaterializeResult:
    db = kb.database()
    pipeline = kb.pipeline()
    as_of = report_as_of(context, config)
    active = active_release(db)
    versions = active.release.versions if active else pipeline.versions
    stale_after = kb.retriever().config.stale_after_days
    reports = [
        staleness_report(
            tenant_id, tenant_facts(db, tenant_id, versions), as_of, stale_after_days=stale_after
        )
        for tenant_id in db.tenants()
    ]
    rows = [row for report in reports for row in report.rows()]
    counts = {report.tenant_id: report.counts() for report in reports}
    stale_sensitive = {r.tenant_id: len(r.stale_sensitive) for r in reports if r.stale_sensitive}
    metadata: dict[str, Any] = {
        "as_of": as_of.isoformat(),
        "tenants": len(reports),
        "stale": sum(c["stale"] for c in counts.values()),
        "stale_sensitive": sum(stale_sensitive.values()),
        "superseded_live": sum(c["superseded_live"] for c in counts.values()),
        "upcoming": sum(c["upcoming"] for c in counts.values()),
        "counts_by_tenant": MetadataValue.json(counts),
        "report": _table(rows),
        "report_md": MetadataValue.md("\n\n".join(_markdown(r) for r in reports) or "no tenants"),
    }
    check = AssetCheckResult(
        check_name=CHECK_NAME,
        passed=not stale_sensitive,
        severity=AssetCheckSeverity.WARN,
        metadata={"as_of": as_of.isoformat(), "stale_sensitive_by_tenant": stale_sensitive},
        description="Sensitive documents (terms, waiver, safety/medical, structured policy) "
        "not reviewed within 180 days, or never.",
    )
    return MaterializeResult(metadata=metadata, check_results=[check])
