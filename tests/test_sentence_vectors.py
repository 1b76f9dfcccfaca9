"""Sentence vectors stored at ingestion (migration 0008) and read by both retrieval paths."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date

import numpy as np
import psycopg
import pytest

from kb_retrieval.embedding import FakeHashEmbedder
from kb_retrieval.ingestion.pipeline import IngestionPipeline
from kb_retrieval.retrieval.config import RetrievalConfig
from kb_retrieval.retrieval.retriever import Retriever
from kb_retrieval.text.sentence_units import UNITS_VERSION, sentence_units
from tests.conftest import copy_tenant

AS_OF = date(2026, 11, 15)
EMAIL = (
    "Hello, our group of four may have to call the trek off about three weeks before we leave. "
    "How much of what we paid would come back to us, and is the deposit kept?"
)


class CountingEmbedder(FakeHashEmbedder):
    """The fake embedder, recording every text sent to `embed` (not `embed_query`)."""

    def __init__(self) -> None:
        super().__init__(window_words=40, stride_words=30)
        self.texts: list[str] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.texts.extend(texts)
        return super().embed(texts)

    def embed_query(self, texts: Sequence[str]) -> np.ndarray:
        return super().embed(texts)


class FailingEmbedder(FakeHashEmbedder):
    """Embeds only texts it was told about (the windows); any other text fails."""

    def __init__(self, allowed: set[str]) -> None:
        super().__init__(window_words=40, stride_words=30)
        self.allowed = allowed

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if any(t not in self.allowed for t in texts):
            raise RuntimeError("model crashed")
        return super().embed(texts)


def _ingest(pipeline: IngestionPipeline, folder) -> tuple[str, list[str]]:
    registration = pipeline.register(folder)
    tenant, versions = registration.tenant_id, registration.registered
    for version in versions:
        pipeline.parse(tenant, version)
        pipeline.chunk(tenant, version)
    pipeline.embed_many(tenant, versions)
    for version in versions:
        pipeline.publish(tenant, version)
    return tenant, versions


def _sentence_rows(db, tenant_id: str) -> list[tuple]:
    with db.tenant(tenant_id) as conn:
        return conn.execute(
            "SELECT chunk_pk, sentence_index, units_version, embedding::text "
            "FROM chunk_sentence_vectors ORDER BY 1, 2"
        ).fetchall()


def _chunk_texts(db, tenant_id: str) -> dict[int, str]:
    with db.tenant(tenant_id) as conn:
        return dict(conn.execute("SELECT id, text FROM chunks").fetchall())


def _states(pipeline: IngestionPipeline, tenant: str, versions: list[str]) -> set[str]:
    """Build states, without the demo's scanned PDF (needs_attention by design)."""
    states = {pipeline.build_state(tenant, v).state for v in versions}
    return states - {"needs_attention"}


def test_every_chunk_gets_its_sentence_vectors_once_and_a_rerun_embeds_nothing(db, tmp_path):
    embedder = CountingEmbedder()
    pipeline = IngestionPipeline(db, embedder)
    folder = copy_tenant(tmp_path, "alpine-treks", "sent-once")
    tenant, versions = _ingest(pipeline, folder)
    assert _states(pipeline, tenant, versions) == {"indexed"}
    rows = _sentence_rows(db, tenant)
    texts = _chunk_texts(db, tenant)
    expected = {pk: len(sentence_units(text)) for pk, text in texts.items()}
    per_chunk: dict[int, int] = {}
    for pk, _index, version, _vector in rows:
        assert version == UNITS_VERSION
        per_chunk[pk] = per_chunk.get(pk, 0) + 1
    assert per_chunk == expected and sum(expected.values()) > len(texts)
    units = {u for text in texts.values() for u in sentence_units(text)}
    assert units <= set(embedder.texts), "the units went through the same embed calls"
    assert len(embedder.texts) == len(set(embedder.texts)), "no text embedded twice"
    sent = len(embedder.texts)
    registration = pipeline.register(folder)
    reports = [pipeline.run_all(tenant, v) for v in registration.registered]
    assert all(step.skipped for steps in reports for step in steps)
    pipeline.embed_many(tenant, versions)
    assert len(embedder.texts) == sent, "re-ingest embeds nothing"
    assert _sentence_rows(db, tenant) == rows


def test_a_version_whose_sentence_embedding_fails_is_not_indexed(db, tmp_path):
    folder = copy_tenant(tmp_path, "alpine-treks", "sent-fail")
    windows_only = IngestionPipeline(db, CountingEmbedder(), sentence_vectors=False)
    registration = windows_only.register(folder)
    tenant, versions = registration.tenant_id, registration.registered
    for version in versions:
        windows_only.parse(tenant, version)
        windows_only.chunk(tenant, version)
        windows_only.embed(tenant, version)
    allowed = set(windows_only.embedder.texts)
    failing = IngestionPipeline(db, FailingEmbedder(allowed))
    with pytest.raises(RuntimeError, match="model crashed"):
        failing.embed_many(tenant, versions)
    assert _sentence_rows(db, tenant) == []
    published = [
        failing.publish(tenant, v)
        for v in versions
        if failing.build_state(tenant, v).state != "needs_attention"
    ]
    assert {r.state for r in published} == {"failed"}
    assert {r.reason_code for r in published} == {"EMBEDDING_FAILED"}
    assert all("lack sentence vectors" in r.message for r in published)
    retriever = Retriever(db, CountingEmbedder(), failing.versions, RetrievalConfig(), audit=False)
    assert retriever.retrieve(tenant, EMAIL, as_of=AS_OF).pack["evidence"] == []
    working = IngestionPipeline(db, CountingEmbedder())
    for version in versions:
        working.run_all(tenant, version)
    assert _states(working, tenant, versions) == {"indexed"}
    assert len(_sentence_rows(db, tenant)) > 0


def test_an_index_built_without_sentence_vectors_is_backfilled_by_the_next_ingest(db, tmp_path):
    folder = copy_tenant(tmp_path, "alpine-treks", "sent-backfill")
    old = IngestionPipeline(db, CountingEmbedder(), sentence_vectors=False)
    tenant, versions = _ingest(old, folder)
    assert _states(old, tenant, versions) == {"indexed"} and _sentence_rows(db, tenant) == []
    embedder = CountingEmbedder()
    new = IngestionPipeline(db, embedder)
    with db.tenant(tenant) as conn:
        before = conn.execute("SELECT generation FROM index_generations").fetchone()[0]
    reports = new.embed_many(tenant, versions)
    indexed = [r for r in reports if r.state == "indexed"]
    assert len(indexed) >= 5
    assert all(not r.skipped and r.metrics["sentence_units"] > 0 for r in indexed)
    assert _states(new, tenant, versions) == {"indexed"}
    assert len(_sentence_rows(db, tenant)) == sum(
        len(sentence_units(t)) for t in _chunk_texts(db, tenant).values()
    )
    with db.tenant(tenant) as conn:
        after = conn.execute("SELECT generation FROM index_generations").fetchone()[0]
    assert after > before, "snapshots reload the backfilled versions"
    assert all(r.skipped for r in new.embed_many(tenant, versions))


def test_a_tenant_session_cannot_read_or_write_another_tenants_sentence_vectors(db, tmp_path):
    pipeline = IngestionPipeline(db, CountingEmbedder())
    alpha, _ = _ingest(pipeline, copy_tenant(tmp_path, "alpine-treks", "sent-alpha"))
    beta, _ = _ingest(pipeline, copy_tenant(tmp_path, "coastal-kayak", "sent-beta"))
    with db.admin() as conn:
        beta_rows = conn.execute(
            "SELECT count(*) FROM chunk_sentence_vectors WHERE tenant_id = %s", (beta,)
        ).fetchone()[0]
        beta_pk = conn.execute(
            "SELECT chunk_pk FROM chunk_sentence_vectors WHERE tenant_id = %s LIMIT 1", (beta,)
        ).fetchone()[0]
    assert beta_rows > 0
    with db.tenant(alpha) as conn:
        assert conn.execute("SELECT current_user").fetchone()[0] == "kb_app"
        seen = conn.execute("SELECT DISTINCT tenant_id FROM chunk_sentence_vectors").fetchall()
        assert seen == [(alpha,)]
        assert conn.execute(
            "SELECT count(*) FROM chunk_sentence_vectors WHERE tenant_id = %s OR chunk_pk = %s",
            (beta, beta_pk),
        ).fetchone() == (0,)
    with pytest.raises(psycopg.errors.InsufficientPrivilege), db.tenant(alpha) as conn:
        conn.execute(
            "INSERT INTO chunk_sentence_vectors (tenant_id, chunk_pk, doc_version_id, "
            "chunker_version, chunk_id, embedding_model_id, units_version, sentence_index, "
            "embedding) SELECT %s, %s, 'x', 'x', 'x', 'x', 'x', 0, embedding "
            "FROM chunk_sentence_vectors LIMIT 1",
            (beta, beta_pk),
        )


def test_snapshot_and_database_paths_read_the_same_stored_sentence_vectors(db, tmp_path):
    embedder = CountingEmbedder()
    pipeline = IngestionPipeline(db, embedder)
    tenant, _ = _ingest(pipeline, copy_tenant(tmp_path, "alpine-treks", "sent-paths"))
    embedder.texts.clear()
    on = RetrievalConfig(sentence_features=True)
    in_memory = Retriever(db, embedder, pipeline.versions, on, audit=False)
    in_database = Retriever(
        db,
        embedder,
        pipeline.versions,
        on.model_copy(update={"in_memory_max_vectors": 0}),
        audit=False,
    )
    a = in_memory.retrieve(tenant, EMAIL, as_of=AS_OF)
    b = in_database.retrieve(tenant, EMAIL, as_of=AS_OF)
    assert embedder.texts == [], "no sentence embedded at query time"
    assert in_memory.sentences.embedded_chunks == in_database.sentences.embedded_chunks == 0
    sims_a = {c.chunk_pk: c.sentence_sims for c in a.candidates}
    sims_b = {c.chunk_pk: c.sentence_sims for c in b.candidates}
    assert sims_a == sims_b and len(sims_a) >= 10
    features_a = {c.chunk_pk: c.features["sentence_best"] for c in a.candidates}
    assert features_a == {c.chunk_pk: c.features["sentence_best"] for c in b.candidates}
    assert {**a.pack, "config_version": ""} == {**b.pack, "config_version": ""}
    queries = embedder.embed_query([v.text for v in a.plan.variants])
    for cand in a.candidates[:5]:
        units = embedder.embed(sentence_units(cand.text))
        expected = (units.astype(np.float64) @ queries.astype(np.float64).T).max(axis=0)
        assert np.allclose(cand.sentence_sims, expected, atol=1e-6)
    off = Retriever(db, embedder, pipeline.versions, RetrievalConfig(), audit=False)
    assert all(c.sentence_sims == [] for c in off.retrieve(tenant, EMAIL, as_of=AS_OF).candidates)
