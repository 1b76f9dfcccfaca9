"""`embed_many`: a tenant's versions share forward passes and report what `embed` reports."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from kb_retrieval.embedding import FakeHashEmbedder
from kb_retrieval.ingestion.embed_step import EMBED_BATCH
from kb_retrieval.ingestion.pipeline import IngestionPipeline
from tests.conftest import copy_tenant

METRICS = ("embedded_chunks", "embedded_windows", "windows", "cached_windows")


class CountingEmbedder(FakeHashEmbedder):
    """The fake embedder, counting forward passes and the texts sent to them."""

    def __init__(self) -> None:
        super().__init__(window_words=40, stride_words=30)
        self.calls: list[int] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(len(texts))
        return super().embed(texts)


def _chunked(db, tmp_path, tenant_id: str) -> tuple[IngestionPipeline, CountingEmbedder, list]:
    embedder = CountingEmbedder()
    pipeline = IngestionPipeline(db, embedder)
    registration = pipeline.register(copy_tenant(tmp_path, "alpine-treks", tenant_id))
    for version in registration.registered:
        pipeline.parse(tenant_id, version)
        pipeline.chunk(tenant_id, version)
    return pipeline, embedder, registration.registered


def _vectors(db, tenant_id: str) -> list[tuple]:
    with db.tenant(tenant_id) as conn:
        rows = conn.execute(
            "SELECT doc_version_id, chunk_id, window_index, embedding::text FROM chunk_vectors "
            "WHERE tenant_id = %s ORDER BY 1, 2, 3",
            (tenant_id,),
        ).fetchall()
    return rows


def test_embed_many_reports_and_stores_what_embed_does_in_fewer_passes(db, tmp_path):
    one, one_model, versions = _chunked(db, tmp_path, "embed-one-by-one")
    many, many_model, same_versions = _chunked(db, tmp_path, "embed-together")
    assert versions == same_versions
    sequential = [one.embed("embed-one-by-one", v) for v in versions]
    together = many.embed_many("embed-together", versions)
    assert [r.doc_version_id for r in together] == versions
    for a, b in zip(sequential, together, strict=True):
        assert (a.state, a.skipped) == (b.state, b.skipped), a.doc_version_id
        assert {m: a.metrics.get(m) for m in METRICS} == {m: b.metrics.get(m) for m in METRICS}
    assert sum(r.metrics.get("embedded_windows", 0) for r in together) > 30
    assert sum(many_model.calls) == sum(one_model.calls), "each window embedded once"
    fewest = -(-sum(many_model.calls) // EMBED_BATCH)
    assert len(many_model.calls) == fewest < len(one_model.calls), "full batches across versions"
    assert _vectors(db, "embed-one-by-one") == _vectors(db, "embed-together")
    for version in versions:
        assert (
            one.publish("embed-one-by-one", version).state
            == many.publish("embed-together", version).state
        )
    passes = len(many_model.calls)
    again = many.embed_many("embed-together", versions)
    assert all(r.skipped for r in again) and len(many_model.calls) == passes
