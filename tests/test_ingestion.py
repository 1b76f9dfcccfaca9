"""Ingestion against the real embedded PostgreSQL and the real model: states, idempotency, safety."""

from __future__ import annotations

import hashlib
import re
import shutil
from datetime import date
from pathlib import Path

import docx
import pytest
import yaml

from kb_retrieval.ingestion.pipeline import IngestionPipeline
from tests.conftest import DEMO_TENANTS, SHARED

LOCATOR = re.compile(r"^docv:[^#]+#chunk:\d{3}\|p:(-|\d+-\d+)\|sec:[^|]+$")
CORPUS = SHARED / "data" / "parser-corpus"
TENANT_TABLES = (
    "doc_versions",
    "doc_builds",
    "doc_parses",
    "chunks",
    "chunk_vectors",
    "embedding_cache",
)


def write_folder(root: Path, tenant_id: str, documents: list[dict]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "kb.yaml").write_text(
        yaml.safe_dump({"tenant_id": tenant_id, "documents": documents}), "utf-8"
    )
    return root


def make_docx(path: Path) -> None:
    document = docx.Document()
    document.add_heading("Luggage Rules", level=1)
    document.add_paragraph("Each guest may bring one duffel bag of up to 15 kg on the trek.")
    document.add_paragraph("Porters carry the duffel between camps.", style="List Bullet")
    table = document.add_table(rows=2, cols=2)
    table.cell(0, 0).text, table.cell(0, 1).text = "Item", "Limit"
    table.cell(1, 0).text, table.cell(1, 1).text = "Duffel", "15 kg"
    document.save(path)


def mixed_folder(tmp_path: Path, tenant_id: str) -> Path:
    root = tmp_path / tenant_id
    root.mkdir(parents=True)
    shutil.copy(DEMO_TENANTS / "alpine-treks" / "terms-2026-v2.pdf", root / "terms.pdf")
    make_docx(root / "luggage.docx")
    (root / "faq.md").write_text("# Arrival\n\nTypical check-in is 08:00 at the lodge.\n", "utf-8")
    (root / "notes.txt").write_text("Guides meet guests in the hotel lobby.\n", "utf-8")
    (root / "page.html").write_text(
        "<html><nav>Home | Tours</nav><script>var x=1;</script><main><h1>Kayak Hire</h1>"
        "<p>Sea kayaks can be hired for 40 dollars a day.</p></main><footer>(c) 2026</footer></html>",
        "utf-8",
    )
    docs = [
        {
            "doc_id": "terms",
            "doc_version_id": "terms_v2",
            "title": "Terms",
            "category": "terms_policy",
            "source": "terms.pdf",
            "last_reviewed_at": "2026-10-01",
        },
        {
            "doc_id": "luggage",
            "doc_version_id": "luggage_v1",
            "title": "Luggage",
            "category": "packing_list",
            "source": "luggage.docx",
        },
        {
            "doc_id": "faq",
            "doc_version_id": "faq_v1",
            "title": "FAQ",
            "category": "faq",
            "source": "faq.md",
        },
        {
            "doc_id": "notes",
            "doc_version_id": "notes_v1",
            "title": "Ops notes",
            "category": "operations_internal",
            "source": "notes.txt",
        },
        {
            "doc_id": "page",
            "doc_version_id": "page_v1",
            "title": "Web page",
            "category": "marketing",
            "source": "page.html",
        },
        {
            "doc_id": "refund",
            "doc_version_id": "refund_v1",
            "title": "Refund Policy Entry",
            "category": "structured_policy",
            "entries": [
                {"section": "Refund Window", "text": "No refunds within 7 days of departure."}
            ],
        },
    ]
    return write_folder(root, tenant_id, docs)


def ingest(pipeline: IngestionPipeline, folder: Path) -> dict[str, dict]:
    registration = pipeline.register(folder)
    out = {}
    for version in registration.registered:
        reports = pipeline.run_all(registration.tenant_id, version)
        out[version] = {
            "state": reports[-1].state,
            "reason": reports[-1].reason_code,
            "embedded": reports[2].metrics.get("embedded_chunks", 0),
        }
    for problem in registration.problems:
        out[problem.doc_version_id] = {
            "state": "failed",
            "reason": problem.reason.value,
            "embedded": 0,
        }
    return out


def table_counts(db, tenant_id: str) -> dict[str, int]:
    with db.tenant(tenant_id) as conn:
        return {t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TENANT_TABLES}


def test_migrations_apply_once_and_refuse_edited_history(db):
    from kb_retrieval.db.migrate import apply_migrations, available_migrations

    assert db.migrate() == [], "a second run applies nothing"
    conn = db.connect(vector_types=False)
    try:
        versions = [
            row[0] for row in conn.execute("SELECT version FROM schema_migrations ORDER BY version")
        ]
        assert versions == [m.version for m in available_migrations()]
        conn.execute("UPDATE schema_migrations SET checksum = 'edited' WHERE version = 1")
        with pytest.raises(RuntimeError, match="changed after it was applied"):
            apply_migrations(conn)
    finally:
        first = available_migrations()[0]
        conn.execute(
            "UPDATE schema_migrations SET checksum = %s WHERE version = 1", (first.checksum,)
        )
        conn.close()


def test_every_document_type_is_indexed_with_locators(tmp_path, real_pipeline, db):
    results = ingest(real_pipeline, mixed_folder(tmp_path, "mixed-types"))
    assert {v["state"] for v in results.values()} == {"indexed"}, results
    assert all(v["embedded"] > 0 for v in results.values())
    with db.tenant("mixed-types") as conn:
        rows = conn.execute(
            "SELECT doc_version_id, source_locator, page_start, section_title, text, policy_likeness_hint, "
            "token_count FROM chunks ORDER BY doc_version_id, chunk_index"
        ).fetchall()
    assert all(LOCATOR.match(r[1]) for r in rows)
    assert all(r[2] is not None for r in rows if r[0] == "terms_v2"), "PDF chunks keep pages"
    assert all(r[2] is None for r in rows if r[0] != "terms_v2")
    html = " ".join(r[4] for r in rows if r[0] == "page_v1")
    assert "40 dollars" in html and "var x" not in html and "Home | Tours" not in html
    assert any(r[0] == "refund_v1" and r[3] == "Refund Window" and r[5] == "High" for r in rows)
    assert all(r[6] <= 900 for r in rows)


def test_reingesting_changes_nothing_and_embeds_nothing(tmp_path, real_pipeline, db):
    folder = mixed_folder(tmp_path, "idempotent-co")
    ingest(real_pipeline, folder)
    before = table_counts(db, "idempotent-co")
    again = ingest(real_pipeline, folder)
    assert {v["state"] for v in again.values()} == {"indexed"}
    assert sum(v["embedded"] for v in again.values()) == 0
    assert table_counts(db, "idempotent-co") == before


def test_changed_content_under_same_version_is_refused_and_nothing_touched(
    tmp_path, real_pipeline, db
):
    folder = mixed_folder(tmp_path, "immutable-co")
    ingest(real_pipeline, folder)
    with db.tenant("immutable-co") as conn:
        before = conn.execute("SELECT text FROM chunks WHERE doc_version_id = 'faq_v1'").fetchall()
    (folder / "faq.md").write_text("# Arrival\n\nCheck-in is now 11:00.\n", "utf-8")
    registration = real_pipeline.register(folder)
    [problem] = [p for p in registration.problems if p.doc_version_id == "faq_v1"]
    assert problem.reason.value == "VERSION_CONTENT_CHANGED"
    assert "faq_v1" in problem.message and "faq.md" in problem.message
    assert "faq_v1" not in registration.registered and "notes_v1" in registration.registered
    with db.tenant("immutable-co") as conn:
        assert (
            conn.execute("SELECT text FROM chunks WHERE doc_version_id = 'faq_v1'").fetchall()
            == before
        )


def test_manifest_errors_are_reported_per_document_and_valid_documents_still_ingest(
    tmp_path, real_pipeline
):
    root = tmp_path / "manifest-errors"
    root.mkdir()
    (root / "ok.txt").write_text("Guides meet guests at 07:30 in the lobby.", "utf-8")
    docs = [
        {
            "doc_id": "ok",
            "doc_version_id": "ok_v1",
            "title": "OK",
            "category": "faq",
            "source": "ok.txt",
        },
        {
            "doc_id": "a",
            "doc_version_id": "bad_cat",
            "title": "A",
            "category": "blog",
            "source": "ok.txt",
        },
        {
            "doc_id": "b",
            "doc_version_id": "missing",
            "title": "B",
            "category": "faq",
            "source": "nope.pdf",
        },
        {
            "doc_id": "c",
            "doc_version_id": "dup",
            "title": "C",
            "category": "faq",
            "source": "ok.txt",
        },
        {
            "doc_id": "c",
            "doc_version_id": "dup",
            "title": "C2",
            "category": "faq",
            "source": "ok.txt",
        },
        {
            "doc_id": "d",
            "doc_version_id": "bad_date",
            "title": "D",
            "category": "faq",
            "source": "ok.txt",
            "effective_date": "2026-13-45",
        },
        {
            "doc_id": "e",
            "doc_version_id": "dangling",
            "title": "E",
            "category": "faq",
            "source": "ok.txt",
            "supersedes_doc_version_id": "ghost_v0",
        },
    ]
    results = ingest(real_pipeline, write_folder(root, "manifest-errors", docs))
    assert results["ok_v1"]["state"] == "indexed"
    assert results["bad_cat"]["reason"] == "MANIFEST_UNKNOWN_CATEGORY"
    assert results["missing"]["reason"] == "MANIFEST_MISSING_FILE"
    assert results["dup"]["reason"] == "MANIFEST_DUPLICATE_VERSION"
    assert results["bad_date"]["reason"] == "MANIFEST_BAD_DATE"
    assert results["dangling"]["reason"] == "MANIFEST_DANGLING_SUPERSEDES"


def test_bad_files_end_in_a_state_with_a_reason_and_do_not_stop_others(tmp_path, real_pipeline):
    root = tmp_path / "bad-files"
    root.mkdir()
    shutil.copy(DEMO_TENANTS / "alpine-treks" / "park-fee-notice-2026-scan.pdf", root / "scan.pdf")
    shutil.copy(
        CORPUS / "pdf" / "samplefiles__libreoffice-writer-password.pdf", root / "locked.pdf"
    )
    shutil.copy(CORPUS / "docx" / "msoffcrypto__plain.doc", root / "legacy.doc")
    (root / "broken.pdf").write_bytes(b"%PDF-1.4\n1 0 obj garbage\n")
    (root / "good.md").write_text("# Pickup\n\nThe shuttle leaves at 06:30 sharp.", "utf-8")
    docs = [
        {"doc_id": n, "doc_version_id": f"{n}_v1", "title": n, "category": "faq", "source": f}
        for n, f in [
            ("scan", "scan.pdf"),
            ("locked", "locked.pdf"),
            ("legacy", "legacy.doc"),
            ("broken", "broken.pdf"),
            ("good", "good.md"),
        ]
    ]
    results = ingest(real_pipeline, write_folder(root, "bad-files", docs))
    assert results["scan_v1"] == {
        "state": "needs_attention",
        "reason": "PARSE_EMPTY_TEXT_SCAN_DETECTED",
        "embedded": 0,
    }
    assert (
        results["locked_v1"]["state"] == "failed"
        and results["locked_v1"]["reason"] == "PARSE_ENCRYPTED"
    )
    assert results["legacy_v1"]["reason"] == "PARSE_UNSUPPORTED_FORMAT"
    assert (
        results["broken_v1"]["state"] == "failed"
        and results["broken_v1"]["reason"] == "PARSE_CORRUPT_FILE"
    )
    assert results["good_v1"]["state"] == "indexed"
    build = real_pipeline.build_state("bad-files", "locked_v1")
    assert "locked.pdf" in build.message


class CrashingEmbedder:
    """Wraps the real embedder and dies after `allowed` batches, like a run killed halfway."""

    def __init__(self, inner, allowed: int) -> None:
        self.inner, self.allowed = inner, allowed
        self.model_id, self.dimensions = inner.model_id, inner.dimensions

    def windows(self, text: str) -> list[str]:
        return self.inner.windows(text)

    def embed(self, texts):
        if self.allowed <= 0:
            raise KeyboardInterrupt("killed")
        self.allowed -= 1
        return self.inner.embed(texts)


def test_a_run_killed_halfway_leaves_nothing_visible_and_the_next_run_completes(
    tmp_path, db, minilm, retriever
):
    root = tmp_path / "killed-co"
    root.mkdir()
    long_text = "\n\n".join(
        f"## Section {i}\n\n"
        + " ".join(f"Rule {i}.{j}: kayaks launch from dock {j} at 0{j % 9}:00." for j in range(40))
        for i in range(24)
    )
    (root / "ops.md").write_text(long_text, "utf-8")
    folder = write_folder(
        root,
        "killed-co",
        [
            {
                "doc_id": "ops",
                "doc_version_id": "ops_v1",
                "title": "Ops",
                "category": "faq",
                "source": "ops.md",
                "last_reviewed_at": "2026-11-01",
            }
        ],
    )
    crashing = IngestionPipeline(db, CrashingEmbedder(minilm, allowed=1))
    crashing.register(folder)
    crashing.parse("killed-co", "ops_v1")
    crashing.chunk("killed-co", "ops_v1")
    with pytest.raises(KeyboardInterrupt):
        crashing.embed("killed-co", "ops_v1")
    assert crashing.build_state("killed-co", "ops_v1").state == "embedding"
    pack = retriever.retrieve(
        "killed-co", "When do kayaks launch from dock 3?", as_of=date(2026, 11, 15)
    ).pack
    assert pack["evidence"] == [] and pack["outcome"] == "UNKNOWN"
    with db.tenant("killed-co") as conn:
        kept = {row[0] for row in conn.execute("SELECT text_hash FROM embedding_cache")}
        texts = [row[0] for row in conn.execute("SELECT text FROM chunks")]
    assert len(kept) == 64, "the batch embedded before the kill is kept"
    # The batch mixes windows and sentence units (migration 0008): its windows are reused.
    window_hashes = {
        hashlib.sha256(w.encode()).hexdigest() for t in texts for w in minilm.windows(t)
    }
    healthy = IngestionPipeline(db, minilm)
    reports = healthy.run_all("killed-co", "ops_v1")
    assert reports[-1].state == "indexed"
    assert reports[2].metrics["cached_windows"] == len(kept & window_hashes) > 0, (
        "the windows embedded before the kill are reused"
    )
    pack = retriever.retrieve(
        "killed-co", "When do kayaks launch from dock 3?", as_of=date(2026, 11, 15)
    ).pack
    assert pack["evidence"]


def test_every_row_is_tenant_scoped_by_row_level_security(tmp_path, real_pipeline, db):
    ingest(real_pipeline, mixed_folder(tmp_path, "rls-one"))
    ingest(real_pipeline, mixed_folder(tmp_path / "b", "rls-two"))
    for tenant in ("rls-one", "rls-two"):
        with db.tenant(tenant) as conn:
            for table in TENANT_TABLES:
                tenants = {r[0] for r in conn.execute(f"SELECT DISTINCT tenant_id FROM {table}")}
                assert tenants == {tenant}, (table, tenants)
    conn = db.connect()
    with conn.transaction():
        conn.execute("SET LOCAL ROLE kb_app")
        for table in TENANT_TABLES:
            assert conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0] == 0, table
    conn.close()


def test_changed_chunker_version_rebuilds_chunks_but_not_the_parse(
    tmp_path, real_pipeline, db, minilm
):
    from kb_retrieval.ingestion.chunking import ChunkerConfig

    folder = mixed_folder(tmp_path, "rechunk-co")
    ingest(real_pipeline, folder)
    other = IngestionPipeline(
        db, minilm, ChunkerConfig(min_tokens=500, max_tokens=800, overlap_ratio=0.1)
    )
    assert other.versions.chunker_version != real_pipeline.versions.chunker_version
    registration = other.register(folder)
    reports = other.run_all("rechunk-co", registration.registered[0])
    assert reports[0].skipped, "parse output of the same parser version is reused"
    assert not reports[1].skipped and reports[-1].state == "indexed"
    with db.tenant("rechunk-co") as conn:
        versions = {r[0] for r in conn.execute("SELECT DISTINCT chunker_version FROM chunks")}
    assert len(versions) == 2, "both chunkings exist side by side"
