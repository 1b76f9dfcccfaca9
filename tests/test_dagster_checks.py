"""The index check is emitted for every partition a run processes (ranged runs and `kb ingest`)."""

from __future__ import annotations

from dagster import AssetCheckKey, AssetCheckSeverity, AssetKey, DagsterInstance, materialize

from kb_pipeline.definitions import defs
from kb_pipeline.ingest.folder_ingest import ingest_folder
from kb_pipeline.ingest.partitions import partition_key
from kb_pipeline.ingest.registration import register_folder
from kb_pipeline.resources import KnowledgeBaseResource
from tests.test_dagster import write_tenant

RANGE_START = "dagster/asset_partition_range_start"
RANGE_END = "dagster/asset_partition_range_end"
CHECK = "documents_reached_indexed"


CHECK_KEY = AssetCheckKey(AssetKey("search_index"), CHECK)


def ingest_definitions() -> list:
    """The ingest and index assets with every check on them, as the UI's selection holds them."""
    assets = [a for a in defs.assets if set(a.group_names_by_key.values()) & {"ingest", "index"}]
    keys = {a.key for a in assets}
    checks = [c for c in defs.asset_checks or [] if {k.asset_key for k in c.check_keys} <= keys]
    return [*assets, *checks]


def test_ranged_run_checks_every_partition_and_flags_needs_attention(tmp_path, database_url):
    write_tenant(tmp_path / "range-co", "range-co")
    kb = KnowledgeBaseResource(database_url=database_url, embedder="fake-hash")
    instance = DagsterInstance.ephemeral()
    register_folder(kb.pipeline(), instance, tmp_path / "range-co")
    first, last = partition_key("range-co", "faq_v1"), partition_key("range-co", "scan_v1")
    result = materialize(
        ingest_definitions(),
        instance=instance,
        resources={"kb": kb},
        tags={RANGE_START: first, RANGE_END: last},
        raise_on_error=False,
    )
    assert result.success
    [evaluation] = [e for e in result.get_asset_check_evaluations() if e.check_name == CHECK]
    metadata = {k: v.value for k, v in evaluation.metadata.items()}
    assert metadata["checked"] == 2, "a ranged run checks both of its partitions"
    assert evaluation.passed is False
    assert evaluation.severity == AssetCheckSeverity.WARN
    assert metadata["reason_codes"] == "PARSE_EMPTY_TEXT_SCAN_DETECTED"
    rows = {row.data["partition"]: row.data for row in metadata["documents"].records}
    assert rows[last]["state"] == "needs_attention" and rows[first]["state"] == "indexed"


def test_kb_ingest_runs_emit_the_check_and_carry_cli_tags(tmp_path, database_url):
    write_tenant(tmp_path / "tagged-co", "tagged-co")
    kb = KnowledgeBaseResource(database_url=database_url, embedder="fake-hash")
    instance = DagsterInstance.ephemeral()
    ingest_folder(tmp_path / "tagged-co", kb=kb, instance=instance)
    runs = instance.get_runs()
    assert runs and all(
        run.tags.get("source") == "cli" and run.tags.get("tenant") == "tagged-co" for run in runs
    )
    records = instance.event_log_storage.get_asset_check_execution_history(CHECK_KEY, limit=10)
    evaluations = [r.event.dagster_event.event_specific_data for r in records if r.event]
    assert len(runs) == 1, "a tenant's versions are ingested in one run"
    [evaluation] = evaluations
    assert evaluation.passed is False, "the scan needs attention, so the run's check fails"
    assert evaluation.metadata["checked"].value == 2, "both documents of the run are checked"


def test_a_failed_document_is_an_error_naming_its_reason(tmp_path, database_url):
    folder = tmp_path / "broken-co"
    folder.mkdir()
    (folder / "terms.pdf").write_bytes(b"%PDF-1.4\n1 0 obj <<< not a pdf at all\n")
    (folder / "kb.yaml").write_text(
        "tenant_id: broken-co\ndocuments:\n"
        "  - {doc_id: terms, doc_version_id: terms_v1, title: Terms, category: faq, source: terms.pdf}\n",
        "utf-8",
    )
    kb = KnowledgeBaseResource(database_url=database_url, embedder="fake-hash")
    instance = DagsterInstance.ephemeral()
    register_folder(kb.pipeline(), instance, folder)
    result = materialize(
        ingest_definitions(),
        instance=instance,
        resources={"kb": kb},
        partition_key=partition_key("broken-co", "terms_v1"),
    )
    [evaluation] = result.get_asset_check_evaluations()
    assert evaluation.passed is False and evaluation.severity == AssetCheckSeverity.ERROR
    assert evaluation.metadata["reason_codes"].value == "PARSE_CORRUPT_FILE"
    [published] = result.asset_materializations_for_node("search_index")
    assert published.metadata["dagster/row_count"].value == 0
