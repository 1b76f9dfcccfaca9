"""`ingest_folder`: a tenant's versions in as few Dagster runs as their partition order allows."""

from __future__ import annotations

from dagster import DagsterInstance

from kb_pipeline.ingest.folder_ingest import ingest_folder, partition_blocks
from kb_pipeline.ingest.partitions import doc_version_partitions
from kb_pipeline.resources import KnowledgeBaseResource
from tests.conftest import copy_tenant


def test_blocks_are_consecutive_in_partition_order_and_bounded():
    ordered = ["a/1", "a/2", "b/1", "a/3", "a/4", "a/5", "a/6"]
    keys = ["a/6", "a/1", "a/3", "a/2", "a/4", "a/5"]
    assert partition_blocks(keys, ordered) == [["a/1", "a/2"], ["a/3", "a/4", "a/5", "a/6"]]
    assert partition_blocks(keys, ordered, limit=3) == [
        ["a/1", "a/2"],
        ["a/3", "a/4", "a/5"],
        ["a/6"],
    ]
    assert partition_blocks([], ordered) == []


def test_a_tenants_versions_go_through_one_run(tmp_path, database_url):
    folder = copy_tenant(tmp_path, "coastal-kayak", "one-run-co")
    kb = KnowledgeBaseResource(database_url=database_url, embedder="fake-hash")
    instance = DagsterInstance.ephemeral()
    instance.add_dynamic_partitions(doc_version_partitions.name, ["other-co/x_v1"])
    first = ingest_folder(folder, kb=kb, instance=instance)
    assert len(instance.get_runs()) == 1
    pipeline = kb.pipeline()
    assert len(first) >= 5
    for row in first:
        build = pipeline.build_state("one-run-co", row["doc_version_id"])
        assert row["state"] == build.state
        if row["state"] == "indexed":
            assert row["chunks"] == build.chunk_count > 0
    assert sum(row["embedded"] for row in first) > 0
    assert all(row["embedded"] <= row["chunks"] for row in first)
    [run] = instance.get_runs()
    assert run.tags["dagster/asset_partition_range_start"].startswith("one-run-co/")
    assert run.tags["dagster/asset_partition_range_end"].startswith("one-run-co/")
    second = ingest_folder(folder, kb=kb, instance=instance)
    assert len(instance.get_runs()) == 1  # every version settled: no run is launched
    assert second == [{**row, "embedded": 0} for row in first]


def test_an_unchanged_folder_launches_no_run_and_a_new_version_one(tmp_path, database_url):
    folder = copy_tenant(tmp_path, "alpine-treks", "settled-co")
    kb = KnowledgeBaseResource(database_url=database_url, embedder="fake-hash")
    instance = DagsterInstance.ephemeral()
    first = ingest_folder(folder, kb=kb, instance=instance)
    again = ingest_folder(folder, kb=kb, instance=instance)
    assert len(instance.get_runs()) == 1
    assert again == [{**row, "embedded": 0} for row in first]
    assert any(row["state"] == "needs_attention" and row["reason_code"] for row in again)
    (folder / "ferry.md").write_text("# Ferry\n\nThe ferry to the hut leaves at eight.\n", "utf-8")
    with (folder / "kb.yaml").open("a", encoding="utf-8") as manifest:
        manifest.write(
            "  - {doc_id: ferry, doc_version_id: ferry_v1, title: Ferry, category: faq,"
            " source: ferry.md}\n"
        )
    third = ingest_folder(folder, kb=kb, instance=instance)
    assert len(instance.get_runs()) == 2
    assert third[:-1] == again
    assert third[-1]["doc_version_id"] == "ferry_v1"
    assert third[-1]["state"] == "indexed" and third[-1]["embedded"] == third[-1]["chunks"] > 0
