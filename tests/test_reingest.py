"""An unchanged re-ingest: registration writes nothing, `settled` finds in one query the versions
no step would change, and what callers report for them is exactly what the steps report."""

from __future__ import annotations

import pytest

from kb_retrieval.embedding import FakeHashEmbedder
from kb_retrieval.ingestion.build_steps import skipped_reports
from kb_retrieval.ingestion.pipeline import IngestionPipeline
from tests.conftest import copy_tenant
from tests.test_ingest_commits import RecordingDatabase

DROP_SENTENCES = "DELETE FROM chunk_sentence_vectors WHERE doc_version_id = %s"


def _ingest(pipeline: IngestionPipeline, folder) -> tuple[str, list[str]]:
    registration = pipeline.register(folder)
    tenant, versions = registration.tenant_id, registration.registered
    for version in versions:
        pipeline.run_all(tenant, version)
    return tenant, versions


@pytest.mark.parametrize("demo", ["alpine-treks", "coastal-kayak"])
def test_an_unchanged_folder_registers_without_writing(demo, database_url, tmp_path):
    recording = RecordingDatabase(database_url)
    pipeline = IngestionPipeline(recording, FakeHashEmbedder())
    folder = copy_tenant(tmp_path, demo, f"reingest-quiet-{demo[:6]}")
    tenant, versions = _ingest(pipeline, folder)
    recording.writes.clear()
    again = pipeline.register(folder)
    assert again.registered == versions and not again.problems
    assert recording.writes == []  # the upsert of an unchanged entry locked its row: a write
    settled = pipeline.settled(tenant, versions)
    assert set(settled) == set(versions)
    assert recording.writes == []


def test_a_changed_title_is_written_and_a_changed_file_refused(db, tmp_path):
    pipeline = IngestionPipeline(db, FakeHashEmbedder())
    folder = copy_tenant(tmp_path, "coastal-kayak", "reingest-edit")
    tenant, versions = _ingest(pipeline, folder)
    with db.tenant(tenant) as conn:
        version, title, source = conn.execute(
            "SELECT doc_version_id, title, source FROM doc_versions WHERE source IS NOT NULL "
            "ORDER BY 1 LIMIT 1"
        ).fetchone()
    manifest = folder / "kb.yaml"
    manifest.write_text(
        manifest.read_text("utf-8").replace(f"title: {title}\n", "title: Renamed guide\n"), "utf-8"
    )
    assert pipeline.register(folder).registered == versions
    with db.tenant(tenant) as conn:
        stored = conn.execute(
            "SELECT title FROM doc_versions WHERE doc_version_id = %s", (version,)
        ).fetchone()
    assert stored == ("Renamed guide",)
    with (folder / source).open("a", encoding="utf-8") as handle:
        handle.write("\nA sentence added without a new doc_version_id.\n")
    changed = pipeline.register(folder)
    assert version not in changed.registered
    [problem] = changed.problems
    assert problem.reason == "VERSION_CONTENT_CHANGED" and version in problem.message


def test_settled_means_no_step_would_change_the_version(db, tmp_path):
    pipeline = IngestionPipeline(db, FakeHashEmbedder())
    tenant, versions = _ingest(pipeline, copy_tenant(tmp_path, "alpine-treks", "reingest-settle"))
    settled = pipeline.settled(tenant, versions)
    assert set(settled) == set(versions)
    states = {build.state for build in settled.values()}
    assert states == {"indexed", "needs_attention"}  # the scan: its parse failure is memoised
    for version, build in settled.items():
        steps = [pipeline.parse, pipeline.chunk, pipeline.embed, pipeline.publish]
        reports = [step(tenant, version) for step in steps]
        assert reports == skipped_reports(version, build)
        assert pipeline.run_all(tenant, version) == reports
    assert pipeline.embed_many(tenant, versions) == [
        skipped_reports(v, settled[v])[2] for v in versions
    ]
    indexed = next(v for v, b in settled.items() if b.state == "indexed")
    with db.tenant(tenant) as conn:
        conn.execute(DROP_SENTENCES, (indexed,))
    assert indexed not in pipeline.settled(tenant, versions)
    [embed] = pipeline.embed_many(tenant, [indexed])
    assert not embed.skipped and embed.metrics["sentence_units"] > 0
    assert indexed in pipeline.settled(tenant, versions)
    windows_only = IngestionPipeline(db, FakeHashEmbedder(), sentence_vectors=False)
    with db.tenant(tenant) as conn:
        conn.execute(DROP_SENTENCES, (indexed,))
    assert indexed in windows_only.settled(tenant, versions)
    assert pipeline.settled(tenant, ["no-such-version"]) == {}
