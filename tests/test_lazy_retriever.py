"""The knowledge base builds its retriever on first use: `kb ingest` with the fake embedder never
constructs or loads the real model, even when the active release is a MiniLM release."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from kb_retrieval import embedding
from kb_retrieval.db import Database
from kb_retrieval.embedding import MiniLMEmbedder, WindowConfig
from kb_retrieval.ingestion.pipeline import IngestionPipeline
from kb_retrieval.releases import Release, active_release, promote_release, register_release
from kb_retrieval.retrieval.config import RetrievalConfig
from kb_retrieval.service import open_knowledge_base
from tests.test_releases import fresh_database

TENANT = "lazy-co"
MANIFEST = f"""tenant_id: {TENANT}
documents:
  - {{doc_id: hut, doc_version_id: hut_v1, title: Huts, category: faq, source: hut.md}}
"""


class ModelTouched(AssertionError):
    """Raised when anything constructs the MiniLM embedder or loads its weights."""


@pytest.fixture
def minilm_forbidden(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_args: object, **_kwargs: object) -> None:
        raise ModelTouched("the real model was touched")

    monkeypatch.setattr(MiniLMEmbedder, "__init__", refuse)
    monkeypatch.setattr(embedding, "sentence_transformer", refuse)


@pytest.fixture(scope="module")
def minilm_release_db(database_url: str) -> str:
    """A fresh database whose active release is a MiniLM release (built before the ban)."""
    url = fresh_database(database_url, "kb_test_lazy_retriever")
    db = Database(url)
    db.migrate()
    pipeline = IngestionPipeline(db, MiniLMEmbedder(WindowConfig()))
    release = Release.of(pipeline.versions, RetrievalConfig())
    register_release(db, release)
    promote_release(db, release.release_id)
    return url


def test_kb_ingest_with_the_fake_embedder_never_touches_the_real_model(
    minilm_release_db: str, minilm_forbidden: None, tmp_path: Path, monkeypatch
) -> None:
    from kb_pipeline.cli import app

    folder = tmp_path / TENANT
    folder.mkdir()
    (folder / "kb.yaml").write_text(MANIFEST, "utf-8")
    (folder / "hut.md").write_text("# Huts\n\nThe Refugio Ishinca hut serves dinner at 18:00.\n")
    monkeypatch.setenv("KB_DATABASE_URL", minilm_release_db)
    monkeypatch.setenv("KB_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("KB_EMBEDDER", "fake-hash")
    result = CliRunner().invoke(app, ["ingest", str(folder), "--json"])
    assert result.exit_code == 0, (result.output, result.exception)
    assert '"state": "indexed"' in result.stdout
    db = Database(minilm_release_db)
    assert active_release(db).release.embedding_model_id.startswith("all-MiniLM-L6-v2")
    with db.tenant(TENANT) as conn:
        models = conn.execute("SELECT DISTINCT embedding_model_id FROM chunk_vectors").fetchall()
    assert [m[0].startswith("fake-hash") for m in models] == [True]


def test_the_retriever_is_built_on_first_use(minilm_release_db: str, minilm_forbidden) -> None:
    kb = open_knowledge_base(url=minilm_release_db, embedder="fake-hash")
    assert kb.pipeline.embedder.model_id.startswith("fake-hash")
    with pytest.raises(ModelTouched):
        kb.retriever  # noqa: B018 - the active MiniLM release's query embedder is built now
