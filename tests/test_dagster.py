"""The Dagster project: definitions load; assets materialise in-process on the real PostgreSQL."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace

from dagster import DagsterInstance, build_sensor_context, materialize
from typer.testing import CliRunner

from kb_pipeline.definitions import defs
from kb_pipeline.ingest.folder_ingest import INGEST_ASSETS, ingest_folder
from kb_pipeline.ingest.partitions import doc_version_partitions, partition_key
from kb_pipeline.ingest.registration import register_folder
from kb_pipeline.ingest.sensors import tenant_folder_sensor
from kb_pipeline.resources import KnowledgeBaseResource
from tests.conftest import DEMO_TENANTS


def write_tenant(root, tenant_id: str) -> None:
    root.mkdir(parents=True)
    (root / "faq.md").write_text(
        "# Pickup\n\nThe shuttle leaves the Huaraz office at 06:30.\n", "utf-8"
    )
    shutil.copy(DEMO_TENANTS / "alpine-treks" / "park-fee-notice-2026-scan.pdf", root / "scan.pdf")
    (root / "kb.yaml").write_text(
        f"tenant_id: {tenant_id}\ndocuments:\n"
        "  - {doc_id: faq, doc_version_id: faq_v1, title: FAQ, category: faq, source: faq.md}\n"
        "  - {doc_id: scan, doc_version_id: scan_v1, title: Scan, category: faq, source: scan.pdf}\n",
        "utf-8",
    )


def test_definitions_load_with_groups_and_kinds():
    repository = defs.get_repository_def()
    keys = {key.to_user_string() for key in repository.asset_graph.get_all_asset_keys()}
    assert keys == {
        "parsed_documents",
        "document_chunks",
        "chunk_embeddings",
        "search_index",
        "release_index",
        "release_evaluation",
        "release_generalisation",
        "release_promotion",
        "staleness_report",
    }
    groups = {
        node.key.to_user_string(): node.group_name for node in repository.asset_graph.asset_nodes
    }
    assert groups["parsed_documents"] == "ingest" and groups["search_index"] == "index"
    assert repository.get_job("ingest_job") is not None
    assert repository.has_sensor_def("tenant_folder_sensor")


def test_assets_materialise_one_partition_in_process(tmp_path, database_url):
    write_tenant(tmp_path / "dagster-co", "dagster-co")
    kb = KnowledgeBaseResource(database_url=database_url, embedder="fake-hash")
    instance = DagsterInstance.ephemeral()
    registered = register_folder(kb.pipeline(), instance, tmp_path / "dagster-co")
    key = partition_key("dagster-co", "faq_v1")
    assert key in instance.get_dynamic_partitions(doc_version_partitions.name)
    assert set(registered.partition_keys) == {key, partition_key("dagster-co", "scan_v1")}
    result = materialize(INGEST_ASSETS, partition_key=key, instance=instance, resources={"kb": kb})
    assert result.success
    [chunks] = result.asset_materializations_for_node("document_chunks")
    assert chunks.metadata["chunks"].value == 1 and chunks.metadata["state"].value == "chunked"
    [published] = result.asset_materializations_for_node("search_index")
    assert published.metadata["state"].value == "indexed"
    again = materialize(INGEST_ASSETS, partition_key=key, instance=instance, resources={"kb": kb})
    [embedded] = again.asset_materializations_for_node("chunk_embeddings")
    assert (
        embedded.metadata["embedded_chunks"].value == 0
        and embedded.metadata["skipped_unchanged"].value == 1
    )


def test_sensor_registers_partitions_and_requests_runs(tmp_path, database_url, monkeypatch):
    write_tenant(tmp_path / "tenants" / "sensor-co", "sensor-co")
    monkeypatch.setenv("KB_TENANTS_DIR", str(tmp_path / "tenants"))
    instance = DagsterInstance.ephemeral()
    kb = KnowledgeBaseResource(database_url=database_url, embedder="fake-hash")
    context = build_sensor_context(instance=instance, resources={"kb": kb})
    result = tenant_folder_sensor(context)
    assert sorted(r.partition_key for r in result.run_requests) == [
        "sensor-co/faq_v1",
        "sensor-co/scan_v1",
    ]
    assert result.dynamic_partitions_requests[0].partition_keys == [
        "sensor-co/faq_v1",
        "sensor-co/scan_v1",
    ]
    assert all(r.tags == {"source": "sensor", "tenant": "sensor-co"} for r in result.run_requests)
    unchanged = tenant_folder_sensor(
        build_sensor_context(instance=instance, resources={"kb": kb}, cursor=result.cursor)
    )
    assert unchanged.run_requests == []
    # A new chunker (or analyzer, parser, model) version: the unchanged folder is due again.
    pipeline = kb.pipeline()
    upgraded = replace(
        pipeline.versions, chunker_version=f"{pipeline.versions.chunker_version}+next"
    )
    monkeypatch.setattr(pipeline, "versions", upgraded)
    rebuilt = tenant_folder_sensor(
        build_sensor_context(instance=instance, resources={"kb": kb}, cursor=unchanged.cursor)
    )
    assert sorted(r.partition_key for r in rebuilt.run_requests) == [
        "sensor-co/faq_v1",
        "sensor-co/scan_v1",
    ]
    assert rebuilt.cursor != unchanged.cursor


def test_kb_ingest_cli_contract(tmp_path, database_url, monkeypatch):
    from kb_pipeline.cli import app

    write_tenant(tmp_path / "cli-co", "cli-co")
    monkeypatch.setenv("KB_DATABASE_URL", database_url)
    monkeypatch.setenv("KB_HOME", str(tmp_path / "home"))
    runner = CliRunner()
    result = runner.invoke(app, ["ingest", str(tmp_path / "cli-co"), "--json"])
    rows = json.loads(result.stdout)
    assert result.exit_code == 1, "the scanned PDF ends needs_attention"
    assert all(
        set(row) == {"doc_version_id", "state", "reason_code", "chunks", "embedded"} for row in rows
    )
    by_id = {row["doc_version_id"]: row for row in rows}
    assert by_id["faq_v1"]["state"] == "indexed" and by_id["faq_v1"]["chunks"] == 1
    assert by_id["scan_v1"] == {
        "doc_version_id": "scan_v1",
        "state": "needs_attention",
        "reason_code": "PARSE_EMPTY_TEXT_SCAN_DETECTED",
        "chunks": 0,
        "embedded": 0,
    }
    second = json.loads(runner.invoke(app, ["ingest", str(tmp_path / "cli-co"), "--json"]).stdout)
    assert sum(row["embedded"] for row in second) == 0
    assert runner.invoke(app, ["ingest", str(tmp_path / "nowhere")]).exit_code == 2
    assert not (tmp_path / "home" / "pgdata").exists(), "with KB_DATABASE_URL no server is started"
    assert (tmp_path / "home" / "dagster" / "dagster.yaml").is_file(), (
        "runs go to the Dagster instance"
    )


def test_ingest_folder_uses_the_given_instance(tmp_path, database_url):
    write_tenant(tmp_path / "runner-co", "runner-co")
    kb = KnowledgeBaseResource(database_url=database_url, embedder="fake-hash")
    rows = ingest_folder(tmp_path / "runner-co", kb=kb, instance=DagsterInstance.ephemeral())
    assert {r["doc_version_id"]: r["state"] for r in rows} == {
        "faq_v1": "indexed",
        "scan_v1": "needs_attention",
    }
