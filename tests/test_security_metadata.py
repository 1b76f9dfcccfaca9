"""Dagster's event log holds ids, counts and hashes of a tenant's documents, never their text."""

from __future__ import annotations

from dagster import DagsterInstance, materialize

from kb_pipeline.ingest.folder_ingest import INGEST_ASSETS
from kb_pipeline.ingest.partitions import partition_key
from kb_pipeline.ingest.registration import register_folder
from kb_pipeline.resources import KnowledgeBaseResource

MARKER = "Quillonbright"


def test_event_log_holds_no_document_text(tmp_path, database_url):
    folder = tmp_path / "meta-co"
    folder.mkdir()
    (folder / "notes.md").write_text(
        f"# Lanterns\n\n{MARKER} lanterns are lent to every guest at the trailhead hut.\n", "utf-8"
    )
    (folder / "kb.yaml").write_text(
        "tenant_id: meta-co\ndocuments:\n"
        "  - {doc_id: notes, doc_version_id: notes_v1, title: Notes, category: faq, "
        "source: notes.md}\n",
        "utf-8",
    )
    kb = KnowledgeBaseResource(database_url=database_url, embedder="fake-hash")
    instance = DagsterInstance.ephemeral()
    register_folder(kb.pipeline(), instance, folder)
    key = partition_key("meta-co", "notes_v1")
    result = materialize(INGEST_ASSETS, partition_key=key, instance=instance, resources={"kb": kb})
    assert result.success
    [chunks] = result.asset_materializations_for_node("document_chunks")
    rows = chunks.metadata["chunk_table"].records
    assert rows[0].data["chunk_id"] == "notes_v1_000" and len(rows[0].data["text_hash"]) == 16
    records = instance.all_logs(result.run_id)
    logged = "\n".join(str(record) for record in records)
    assert "notes_v1_000" in logged
    assert MARKER not in logged and MARKER.lower() not in logged
