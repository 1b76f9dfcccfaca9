"""Staleness report: pure rules, and the nightly schedule's run materialised in-process."""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path

import pytest
from dagster import AssetCheckSeverity, DagsterInstance, build_schedule_context, materialize

from kb_pipeline.freshness.assets import staleness_report_asset
from kb_pipeline.freshness.schedules import nightly_staleness_schedule, staleness_run_config
from kb_pipeline.resources import KnowledgeBaseResource
from kb_retrieval.freshness import VersionFacts, staleness_report
from tests.test_releases import fresh_database

AS_OF = date(2026, 11, 15)
TENANT = "stale-co"
MANIFEST = f"""tenant_id: {TENANT}
documents:
  - {{doc_id: terms, doc_version_id: terms_v1, title: Terms 2026, category: terms_policy,
      source: terms.md, last_reviewed_at: 2026-01-10}}
  - {{doc_id: terms, doc_version_id: terms_v2, title: Terms 2027, category: terms_policy,
      source: terms2.md, last_reviewed_at: 2026-11-01, effective_date: 2026-12-01,
      supersedes_doc_version_id: terms_v1}}
  - {{doc_id: faq, doc_version_id: faq_v0, title: Old FAQ, category: faq, source: faq0.md,
      last_reviewed_at: 2025-01-01}}
  - {{doc_id: faq, doc_version_id: faq_v1, title: FAQ, category: faq, source: faq.md,
      last_reviewed_at: 2026-10-01, supersedes_doc_version_id: faq_v0}}
"""


def facts(doc_version_id: str, category: str, **fields: object) -> VersionFacts:
    return VersionFacts(
        doc_version_id,
        doc_version_id.rsplit("_", 1)[0],
        doc_version_id,
        category,
        **{"indexed": True, **fields},
    )


def test_report_sections_order_and_boundaries():
    versions = [
        facts("faq_a", "faq", last_reviewed_at=date(2026, 5, 19)),
        facts("faq_b", "faq", last_reviewed_at=date(2026, 5, 18)),
        facts("policy_a", "structured_policy"),
        facts("safety_a", "safety_medical", last_reviewed_at=date(2025, 1, 1)),
        facts("waiver_a", "waiver_release", last_reviewed_at=date(2025, 1, 1)),
        facts("terms_a", "terms_policy", last_reviewed_at=date(2025, 1, 1)),
        facts(
            "terms_b",
            "terms_policy",
            supersedes_doc_version_id="terms_a",
            last_reviewed_at=date(2026, 11, 1),
            effective_date=date(2026, 12, 15),
        ),
        facts("packing_a", "packing_list", last_reviewed_at=date(2025, 1, 1)),
        facts(
            "packing_b",
            "packing_list",
            supersedes_doc_version_id="packing_a",
            last_reviewed_at=date(2026, 11, 1),
            indexed=False,
        ),
        facts("trip_a", "trip_itinerary", last_reviewed_at=date(2026, 1, 1)),
        facts(
            "trip_b",
            "trip_itinerary",
            supersedes_doc_version_id="trip_a",
            last_reviewed_at=date(2026, 11, 1),
        ),
        facts("later_a", "faq", effective_date=date(2027, 1, 1)),
    ]
    report = staleness_report("t", versions, AS_OF)
    stale = [(i.doc_version_id, i.sensitive) for i in report.section("stale")]
    assert stale == [
        ("terms_a", True),
        ("waiver_a", True),
        ("safety_a", True),
        ("policy_a", True),
        ("faq_b", False),
    ], "180 days is fresh, 181 is stale; sensitive categories first; future versions not stale"
    assert report.section("stale")[3].detail == "never reviewed"
    assert report.section("stale")[4].days_since_review == 181
    superseded = {i.doc_version_id: i.detail for i in report.section("superseded_live")}
    assert superseded == {
        "packing_a": "still served: successor packing_b is not indexed",
        "trip_a": "superseded by trip_b; rows can be retired",
    }
    assert [i.doc_version_id for i in report.section("upcoming")] == ["terms_b"]
    assert report.counts() == {
        "stale": 5,
        "superseded_live": 2,
        "upcoming": 1,
        "stale_sensitive": 4,
    }
    assert report.rows()[0]["last_reviewed_at"] == "2025-01-01"


@pytest.fixture(scope="module")
def kb(database_url: str, tmp_path_factory: pytest.TempPathFactory) -> KnowledgeBaseResource:
    url = fresh_database(database_url, "kb_test_staleness")
    resource = KnowledgeBaseResource(database_url=url, embedder="fake-hash")
    folder: Path = tmp_path_factory.mktemp(TENANT)
    for name, text in {
        "terms.md": "# Terms\n\nDeposits are non-refundable.\n",
        "terms2.md": "# Terms\n\nDeposits are refundable up to 60 days before departure.\n",
        "faq0.md": "# Pickup\n\nThe shuttle leaves at 07:00.\n",
        "faq.md": "# Pickup\n\nThe shuttle leaves at 06:30.\n",
    }.items():
        (folder / name).write_text(text, "utf-8")
    (folder / "kb.yaml").write_text(MANIFEST, "utf-8")
    pipeline = resource.pipeline()
    for version in pipeline.register(folder).registered:
        pipeline.run_all(TENANT, version)
    return resource


def run_report(kb: KnowledgeBaseResource, run_config: dict | None = None):
    result = materialize(
        [staleness_report_asset],
        instance=DagsterInstance.ephemeral(),
        resources={"kb": kb},
        run_config=run_config,
    )
    assert result.success
    [materialization] = result.asset_materializations_for_node("staleness_report")
    [check] = result.get_asset_check_evaluations()
    return {k: v.value for k, v in materialization.metadata.items()}, check


def test_nightly_schedule_run_reports_as_of_its_scheduled_date(kb):
    scheduled = datetime(2026, 11, 15, 3, 0, tzinfo=UTC)
    request = nightly_staleness_schedule(build_schedule_context(scheduled_execution_time=scheduled))
    assert request.run_config == staleness_run_config("2026-11-15")
    metadata, check = run_report(kb, request.run_config)
    assert metadata["as_of"] == "2026-11-15"
    assert metadata["stale_sensitive"] == 1 and metadata["stale"] == 1
    assert metadata["superseded_live"] == 1 and metadata["upcoming"] == 1
    rows = {(r.data["section"], r.data["doc_version_id"]) for r in metadata["report"].records}
    assert rows == {("stale", "terms_v1"), ("superseded_live", "faq_v0"), ("upcoming", "terms_v2")}
    assert check.check_name == "no_stale_sensitive_documents"
    assert not check.passed and check.severity == AssetCheckSeverity.WARN


def test_as_of_config_is_honoured(kb):
    metadata, check = run_report(kb, staleness_run_config("2026-07-01"))
    assert metadata["as_of"] == "2026-07-01"
    assert metadata["stale"] == 0 and metadata["upcoming"] == 0
    assert check.passed


def test_without_as_of_the_run_creation_date_is_used(kb):
    metadata, _ = run_report(kb)
    assert date.fromisoformat(metadata["as_of"]) >= AS_OF.replace(year=2025)
