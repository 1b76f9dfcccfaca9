"""Randomized cross-tenant retrieval: 2,100 queries over 4 tenants never return a foreign row."""

from __future__ import annotations

import random
from datetime import date
from pathlib import Path

import pytest
import yaml

TENANTS = ("iso-amber", "iso-basalt", "iso-cobalt", "iso-dune")
MARKERS = {t: f"zq{t.split('-')[1]}mark" for t in TENANTS}
TOPICS = (
    "refund deposit cancellation window",
    "luggage weight limit duffel porter",
    "pickup hotel lobby shuttle morning",
    "altitude acclimatisation rest day",
    "vegetarian meals dietary kitchen",
    "insurance evacuation medical cover",
)
PATHS = {
    "snapshot": {},
    "postgres-exact": {"in_memory_max_vectors": 0},
    "postgres-hnsw": {"in_memory_max_vectors": 0, "exact_scan_max_vectors": 0},
}
QUERIES_PER_PATH = {"snapshot": 1500, "postgres-exact": 300, "postgres-hnsw": 300}


def tenant_folder(root: Path, tenant: str) -> Path:
    """Six documents whose every sentence carries the tenant's marker word."""
    folder = root / tenant
    folder.mkdir(parents=True)
    marker = MARKERS[tenant]
    documents = []
    for index, topic in enumerate(TOPICS):
        version = f"{tenant.replace('-', '_')}_doc{index}_v1"
        documents.append(
            {
                "doc_id": f"doc{index}",
                "doc_version_id": version,
                "title": f"{topic.split()[0].title()} {marker}",
                "category": "faq",
                "entries": [
                    {
                        "section": topic.split()[0],
                        "text": f"{marker} rules for {topic}: {marker} guests ask about {topic} "
                        f"and {marker} answers with days and amounts {index + 3}.",
                    }
                ],
            }
        )
    (folder / "kb.yaml").write_text(
        yaml.safe_dump({"tenant_id": tenant, "documents": documents}), encoding="utf-8"
    )
    return folder


@pytest.fixture(scope="module")
def isolated_index(db, tmp_path_factory):
    from kb_retrieval.embedding import FakeHashEmbedder
    from kb_retrieval.ingestion.pipeline import IngestionPipeline

    pipeline = IngestionPipeline(db, FakeHashEmbedder())
    root = tmp_path_factory.mktemp("isolation")
    versions = {}
    for tenant in TENANTS:
        registration = pipeline.register(tenant_folder(root, tenant))
        assert not registration.problems
        for version in registration.registered:
            pipeline.run_all(tenant, version)
        versions[tenant] = set(registration.registered)
    return pipeline, versions


def test_randomized_retrievals_never_return_foreign_rows(db, isolated_index):
    from kb_retrieval.retrieval.config import RetrievalConfig
    from kb_retrieval.retrieval.retriever import Retriever

    pipeline, versions = isolated_index
    rng = random.Random(9)
    foreign, total, nonempty = [], 0, 0
    for path, overrides in PATHS.items():
        config = RetrievalConfig(cache_ttl_seconds=0, **overrides)
        retriever = Retriever(db, pipeline.embedder, pipeline.versions, config, audit=False)
        for _ in range(QUERIES_PER_PATH[path]):
            tenant = rng.choice(TENANTS)
            words = rng.choice(TOPICS).split() + rng.sample(list(MARKERS.values()), k=2)
            rng.shuffle(words)
            email = "Hello, " + " ".join(words) + "?"
            pack = retriever.retrieve(tenant, email, as_of=date(2026, 11, 15)).pack
            total += 1
            nonempty += bool(pack["evidence"])
            others = [m for t, m in MARKERS.items() if t != tenant]
            for item in pack["evidence"]:
                if item["doc_version_id"] not in versions[tenant] or any(
                    m in item["text"] for m in others
                ):
                    foreign.append((path, tenant, item["chunk_id"]))
            assert pack["tenant_id"] == tenant
    assert total >= 2000
    assert nonempty > total * 0.9, "the queries must reach evidence for the check to mean anything"
    assert foreign == []
