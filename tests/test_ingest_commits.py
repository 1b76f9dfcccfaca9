"""Commit durability of ingestion: parse, chunk and embed commit without waiting for the WAL
flush; register and publish (which makes a version visible) wait, so publish's flush covers
every earlier write of the version. The stored rows are those of a fully synchronous ingest."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import psycopg

from kb_retrieval.db import Database
from kb_retrieval.embedding import FakeHashEmbedder
from kb_retrieval.ingestion.pipeline import IngestionPipeline
from tests.conftest import copy_tenant

STEPS = ("register", "parse", "chunk", "embed_many", "embed", "publish")
WROTE = "SELECT pg_current_xact_id_if_assigned() IS NOT NULL, current_setting('synchronous_commit')"
SYNCHRONOUS = "SELECT set_config('synchronous_commit', 'on', true)"


class RecordingDatabase(Database):
    """The real database; records, for each tenant transaction that wrote, the step it ran in
    and its synchronous_commit at commit time (or forces it on, for the reference ingest)."""

    def __init__(self, url: str, *, force_synchronous: bool = False) -> None:
        super().__init__(url)
        self.step = "outside"
        self.force_synchronous = force_synchronous
        self.writes: list[tuple[str, str]] = []

    @contextmanager
    def tenant(self, tenant_id: str) -> Iterator[psycopg.Connection]:
        with super().tenant(tenant_id) as conn:
            yield conn
            if self.force_synchronous:
                conn.execute(SYNCHRONOUS)
            wrote, mode = conn.execute(WROTE).fetchone()
            if wrote:
                self.writes.append((self.step, mode))


def _label_steps(pipeline: IngestionPipeline, db: RecordingDatabase) -> None:
    def labelled(name: str, step: Callable[..., Any]) -> Callable[..., Any]:
        def run(*args: Any, **kwargs: Any) -> Any:
            outer, db.step = db.step, name
            try:
                return step(*args, **kwargs)
            finally:
                db.step = outer

        return run

    for name in STEPS:
        setattr(pipeline, name, labelled(name, getattr(pipeline, name)))


def _ingest(db: RecordingDatabase, folder: Any) -> tuple[str, list[str]]:
    pipeline = IngestionPipeline(db, FakeHashEmbedder())
    _label_steps(pipeline, db)
    registration = pipeline.register(folder)
    tenant, versions = registration.tenant_id, registration.registered
    for version in versions:
        pipeline.parse(tenant, version)
        pipeline.chunk(tenant, version)
    pipeline.embed_many(tenant, versions)
    states = [pipeline.publish(tenant, version).state for version in versions]
    assert states.count("indexed") >= len(versions) - 1, states  # one demo scan needs attention
    return tenant, versions


def _stored(db: Database, tenant: str) -> list[Any]:
    """Every row ingestion writes for the tenant, without ids and timestamps."""
    with db.tenant(tenant) as conn:
        return [
            conn.execute(query).fetchall()
            for query in (
                "SELECT doc_version_id, chunk_id, chunk_index, text, term_freqs, tsv::text "
                "FROM chunks ORDER BY 1, 3",
                "SELECT doc_version_id, chunk_id, window_index, embedding::text "
                "FROM chunk_vectors ORDER BY 1, 2, 3",
                "SELECT doc_version_id, chunk_id, sentence_index, embedding::text "
                "FROM chunk_sentence_vectors ORDER BY 1, 2, 3",
                "SELECT text_hash, embedding::text FROM embedding_cache ORDER BY 1",
                "SELECT doc_version_id, state, chunk_count, window_count, embedded_count "
                "FROM doc_builds ORDER BY 1",
            )
        ]


def test_only_publish_and_register_wait_for_the_wal_flush(db, database_url, tmp_path):
    recording = RecordingDatabase(database_url)
    _ingest(recording, copy_tenant(tmp_path, "alpine-treks", "commit-modes"))
    modes: dict[str, set[str]] = {}
    for step, mode in recording.writes:
        modes.setdefault(step, set()).add(mode)
    assert modes["register"] == {"on"} and modes["publish"] == {"on"}
    for step in ("parse", "chunk", "embed_many", "embed"):
        assert modes[step] == {"off"}, step
    assert "outside" not in modes
    with db.tenant("commit-modes") as conn:
        assert conn.execute("SHOW synchronous_commit").fetchone()[0] == "on"


def test_asynchronous_step_commits_store_the_rows_of_a_synchronous_ingest(database_url, tmp_path):
    fast = RecordingDatabase(database_url)
    reference = RecordingDatabase(database_url, force_synchronous=True)
    _ingest(fast, copy_tenant(tmp_path, "alpine-treks", "commit-async"))
    _ingest(reference, copy_tenant(tmp_path, "alpine-treks", "commit-sync"))
    assert {mode for _step, mode in reference.writes} == {"on"}
    assert _stored(fast, "commit-async") == _stored(reference, "commit-sync")
