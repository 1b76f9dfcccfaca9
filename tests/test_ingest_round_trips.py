"""Ingestion's work outside the model (issue 11, session 10): each chunk is tokenized into
windows once per ingest, and a step reads its build and writes its report inside its own
transactions, so a first ingest opens few tenant transactions per version."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import psycopg

from kb_retrieval.db import Database
from kb_retrieval.embedding import FakeHashEmbedder
from kb_retrieval.ingestion.pipeline import IngestionPipeline
from tests.conftest import copy_tenant
from tests.test_sentence_vectors import _ingest as ingest_steps

# The code before session 10 opened 273 tenant transactions for this tenant's 14 versions
# (19.5 each: a build read before each step and a report read after it, `embed` re-reading
# what `embed_many` had read) and tokenized every chunk twice; this code opens 128 (9.1 each).
MAX_TRANSACTIONS_PER_VERSION = 10


class CountingDatabase(Database):
    """The real database, counting tenant transactions."""

    def __init__(self, url: str) -> None:
        super().__init__(url)
        self.transactions = 0

    @contextmanager
    def tenant(self, tenant_id: str) -> Iterator[psycopg.Connection]:
        self.transactions += 1
        with super().tenant(tenant_id) as conn:
            yield conn


class CountingEmbedder(FakeHashEmbedder):
    """The fake embedder, counting the texts cut into windows."""

    def __init__(self) -> None:
        super().__init__(window_words=40, stride_words=30)
        self.windowed: list[str] = []

    def windows(self, text: str) -> list[str]:
        self.windowed.append(text)
        return super().windows(text)


def _ingest(db: Database, folder, embedder) -> tuple[IngestionPipeline, str, list[str]]:
    pipeline = IngestionPipeline(db, embedder)
    tenant, versions = ingest_steps(pipeline, folder)
    return pipeline, tenant, versions


def test_each_chunk_is_cut_into_windows_once_and_transactions_stay_few(database_url, tmp_path):
    db = CountingDatabase(database_url)
    embedder = CountingEmbedder()
    pipeline, tenant, versions = _ingest(
        db, copy_tenant(tmp_path, "alpine-treks", "round-trips"), embedder
    )
    with db.tenant(tenant) as conn:
        texts = sorted(row[0] for row in conn.execute("SELECT text FROM chunks"))
    assert len(texts) > 20
    assert sorted(embedder.windowed) == texts, "every chunk tokenized exactly once"
    assert db.transactions <= MAX_TRANSACTIONS_PER_VERSION * len(versions), db.transactions
    built = [pipeline.build_state(tenant, v) for v in versions]
    assert sum(b.state == "indexed" for b in built) >= len(versions) - 1  # one scan is flagged
    assert all(b.window_count for b in built if b.state == "indexed")


def test_reports_read_inside_the_step_match_a_later_read(db, tmp_path):
    embedder = FakeHashEmbedder()
    pipeline = IngestionPipeline(db, embedder)
    tenant = "round-trips-reports"
    registration = pipeline.register(copy_tenant(tmp_path, "coastal-kayak", tenant))
    steps = (
        pipeline.parse,
        pipeline.chunk,
        lambda t, v: pipeline.embed_many(t, [v])[0],
        pipeline.publish,
    )
    for version in registration.registered:
        for step in steps:
            report = step(tenant, version)
            build = pipeline.build_state(tenant, version)
            assert (report.state, report.reason_code, report.message) == (
                build.state,
                build.reason_code,
                build.message,
            )


def test_a_folder_registers_its_new_versions_in_one_transaction(database_url, tmp_path):
    db = CountingDatabase(database_url)
    pipeline = IngestionPipeline(db, FakeHashEmbedder())
    folder = copy_tenant(tmp_path, "alpine-treks", "round-trips-register")
    registration = pipeline.register(folder)
    assert len(registration.registered) > 10
    assert db.transactions == 2, "the stored versions read, then every new version written"
    tenant = registration.tenant_id
    assert all(pipeline.build_state(tenant, v).state == "queued" for v in registration.registered)
    before = db.transactions
    assert pipeline.register(folder).registered == registration.registered
    assert db.transactions - before == 1, "an unchanged folder is only read"
