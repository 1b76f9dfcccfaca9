"""Ingestion under attack or by accident: swapped files, repeated failures, concurrent runs."""

from __future__ import annotations

import hashlib
import re
import threading
from pathlib import Path

import pytest

from kb_retrieval.models import IngestReason, LifecycleState
from kb_retrieval.parsing import parse_file
from kb_retrieval.parsing.errors import ParseError

SAMPLE_PDF = Path(__file__).resolve().parents[1] / "data/tenants/alpine-treks/terms-2026-v2.pdf"


def write_folder(root: Path, tenant: str, files: dict[str, str]) -> Path:
    folder = root / tenant
    folder.mkdir(parents=True)
    lines = [f"tenant_id: {tenant}", "documents:"]
    for index, (name, text) in enumerate(sorted(files.items())):
        (folder / name).write_text(text, "utf-8")
        stem = name.split(".")[0]
        lines.append(
            f"  - {{doc_id: {stem}, doc_version_id: {stem}_v1, title: T{index}, category: faq, "
            f"source: {name}}}"
        )
    (folder / "kb.yaml").write_text("\n".join(lines) + "\n", "utf-8")
    return folder


@pytest.fixture
def fake_pipeline(db):
    from kb_retrieval.embedding import FakeHashEmbedder
    from kb_retrieval.ingestion.pipeline import IngestionPipeline

    return IngestionPipeline(db, FakeHashEmbedder())


def test_file_swapped_after_registration_is_not_indexed_under_the_old_hash(tmp_path, fake_pipeline):
    folder = write_folder(tmp_path, "swap-co", {"rules.md": "# Boats\n\nBoats leave at ten.\n"})
    registration = fake_pipeline.register(folder)
    (folder / "rules.md").write_text("# Boats\n\nBoats are free for everyone.\n", "utf-8")
    [report, *_] = fake_pipeline.run_all("swap-co", "rules_v1")
    assert (report.state, report.reason_code) == ("failed", "VERSION_CONTENT_CHANGED")
    assert str(folder / "rules.md") in report.message and "kb-parse-" not in report.message
    with fake_pipeline.db.tenant("swap-co") as conn:
        assert conn.execute("SELECT count(*) FROM chunks").fetchone()[0] == 0
    (folder / "rules.md").write_text("# Boats\n\nBoats leave at ten.\n", "utf-8")
    assert registration.registered == ["rules_v1"]
    assert fake_pipeline.run_all("swap-co", "rules_v1")[-1].state == "indexed"
    with fake_pipeline.db.tenant("swap-co") as conn:
        [text] = conn.execute("SELECT text FROM chunks").fetchone()
    assert "leave at ten" in text


def test_failed_parse_is_not_repeated_for_the_same_bytes(tmp_path, db):
    from kb_retrieval.embedding import FakeHashEmbedder
    from kb_retrieval.ingestion.pipeline import IngestionPipeline

    calls: list[Path] = []

    def slow_parser(path: Path):
        calls.append(path)
        raise ParseError.for_file(IngestReason.PARSE_TIMEOUT, path, "took too long")

    pipeline = IngestionPipeline(db, FakeHashEmbedder(), parser=slow_parser)
    folder = write_folder(tmp_path, "memo-co", {"slow.md": "# Slow\n\nA slow document.\n"})
    pipeline.register(folder)
    first = pipeline.parse("memo-co", "slow_v1")
    assert (first.state, first.reason_code, first.skipped) == ("failed", "PARSE_TIMEOUT", False)
    pipeline.register(folder)
    again = pipeline.parse("memo-co", "slow_v1")
    assert (again.state, again.reason_code, again.skipped) == ("failed", "PARSE_TIMEOUT", True)
    assert len(calls) == 1


def test_pdf_with_undecodable_content_is_corrupt_not_a_scan(tmp_path):
    data = SAMPLE_PDF.read_bytes()
    garbled = re.sub(
        rb"(stream\r?\n)(.*?)(\r?\nendstream)",
        lambda m: m.group(1) + bytes((b * 7 + 13) % 256 for b in m.group(2)) + m.group(3),
        data,
        flags=re.S,
    )
    path = tmp_path / "garbled.pdf"
    path.write_bytes(garbled)
    with pytest.raises(ParseError) as caught:
        parse_file(path)
    assert caught.value.reason == IngestReason.PARSE_CORRUPT_FILE
    assert caught.value.state == LifecycleState.FAILED


def test_two_ingests_of_one_tenant_embed_each_window_once(tmp_path, database_url):
    from kb_retrieval.db import Database
    from kb_retrieval.embedding import FakeHashEmbedder
    from kb_retrieval.ingestion.pipeline import IngestionPipeline

    files = {
        f"topic{i}.md": f"# Topic {i}\n\n" + f"Guests of topic {i} meet at gate {i}. " * 60
        for i in range(5)
    }
    folder = write_folder(tmp_path, "race-co", files)
    results: dict[int, list] = {}
    errors: list[BaseException] = []
    start = threading.Barrier(2)

    def ingest(slot: int) -> None:
        try:
            pipeline = IngestionPipeline(Database(database_url), FakeHashEmbedder())
            registration = pipeline.register(folder)
            start.wait()
            results[slot] = [pipeline.run_all("race-co", v) for v in registration.registered]
        except BaseException as error:  # reported below
            errors.append(error)

    threads = [threading.Thread(target=ingest, args=(slot,)) for slot in (0, 1)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert not errors, errors
    for reports in results.values():
        assert [steps[-1].state for steps in reports] == ["indexed"] * 5
    embedded = sum(
        step.metrics.get("embedded_windows", 0)
        for reports in results.values()
        for steps in reports
        for step in steps
    )
    Database(database_url).ensure_tenant("race-co")
    with Database(database_url).tenant("race-co") as conn:
        windows = conn.execute("SELECT count(*) FROM chunk_vectors").fetchone()[0]
        duplicates = conn.execute(
            "SELECT count(*) FROM (SELECT chunk_id, window_index FROM chunk_vectors "
            "GROUP BY chunk_id, embedding_model_id, window_index HAVING count(*) > 1) d"
        ).fetchone()[0]
        cached = {row[0] for row in conn.execute("SELECT text_hash FROM embedding_cache")}
        chunk_texts = [row[0] for row in conn.execute("SELECT text FROM chunks")]
    # The cache holds the sentence units' vectors too (migration 0008): count window texts.
    window_hashes = {
        hashlib.sha256(w.encode()).hexdigest()
        for text in chunk_texts
        for w in FakeHashEmbedder().windows(text)
    }
    distinct_texts = len(cached & window_hashes)
    assert windows > 5 and duplicates == 0
    assert embedded == distinct_texts, "each window text embedded by exactly one of the two runs"
