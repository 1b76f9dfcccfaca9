"""Releases: stable ids, at most one active, blue/green switch of retrieval, dropping old rows."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import psycopg
import pytest

from kb_retrieval.db import Database
from kb_retrieval.embedding import FakeHashEmbedder, MiniLMEmbedder
from kb_retrieval.ingestion.chunking import ChunkerConfig
from kb_retrieval.ingestion.pipeline import IngestionPipeline
from kb_retrieval.models import PipelineVersions
from kb_retrieval.releases import (
    Release,
    active_release,
    drop_release_rows,
    embedder_for_model,
    ensure_builds,
    get_release,
    list_releases,
    promote_release,
    register_release,
)
from kb_retrieval.retrieval.config import RetrievalConfig
from kb_retrieval.service import open_knowledge_base

TENANT = "release-co"
AS_OF = date(2026, 11, 15)
QUESTION = "What time does the shuttle leave the Huaraz office?"
MANIFEST = f"""tenant_id: {TENANT}
documents:
  - {{doc_id: faq, doc_version_id: faq_v1, title: FAQ, category: faq, source: faq.md}}
  - doc_id: refund
    doc_version_id: refund_v1
    title: Refund Policy
    category: structured_policy
    entries:
      - section: Refund Window
        text: Cancellations within 7 calendar days of departure are non-refundable.
"""


def fresh_database(admin_url: str, name: str) -> str:
    """A new, empty database on the session's server (releases are global to a database)."""
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {name}")
    return psycopg.conninfo.make_conninfo(admin_url, dbname=name)


@pytest.fixture(scope="module")
def url(database_url: str) -> str:
    return fresh_database(database_url, "kb_test_releases")


@pytest.fixture(scope="module")
def db(url: str) -> Database:
    database = Database(url)
    database.migrate()
    return database


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("release-co")
    (root / "faq.md").write_text(
        "# Pickup\n\nThe shuttle leaves the Huaraz office at 06:30 every morning of the trek.\n",
        "utf-8",
    )
    (root / "kb.yaml").write_text(MANIFEST, "utf-8")
    return root


def build(pipeline: IngestionPipeline, folder: Path) -> list[str]:
    registration = pipeline.register(folder)
    for version in ensure_builds(pipeline.db, TENANT, pipeline.versions):
        pipeline.run_all(TENANT, version)
    return registration.registered


def count(db: Database, sql: str, *params: object) -> int:
    with db.tenant(TENANT) as conn:
        return int(conn.execute(sql, params).fetchone()[0])


def test_release_id_is_stable_and_changes_with_every_component():
    release = Release("parser-1", "chunker-1", "model-1", "retrieval-v1+abc")
    assert release.release_id == "rel-44a42f245b32712c"
    assert (
        release.release_id
        == Release("parser-1", "chunker-1", "model-1", "retrieval-v1+abc").release_id
    )
    variants = [
        Release("parser-2", "chunker-1", "model-1", "retrieval-v1+abc"),
        Release("parser-1", "chunker-2", "model-1", "retrieval-v1+abc"),
        Release("parser-1", "chunker-1", "model-2", "retrieval-v1+abc"),
        Release("parser-1", "chunker-1", "model-1", "retrieval-v1+abd"),
    ]
    assert len({v.release_id for v in [release, *variants]}) == 5


def test_release_rebuilds_its_retrieval_config():
    config = RetrievalConfig(pack_max=9)
    versions = PipelineVersions("p", "c", "m")
    release = Release.of(versions, config)
    assert release.config_version == config.config_version
    again = Release.from_components(release.components)
    assert again == release and again.config() == config and again.versions == versions
    assert Release.of(versions, RetrievalConfig()).release_id != release.release_id
    tampered = Release.from_components(
        {**release.components, "retrieval_config": RetrievalConfig().model_dump(mode="json")}
    )
    with pytest.raises(ValueError, match="rebuilds it as"):
        tampered.config()


def test_register_is_idempotent_and_at_most_one_release_is_active(db):
    first = register_release(db, Release("p", "c", "m", "cfg-1"))
    second = register_release(db, Release("p", "c", "m", "cfg-2"))
    assert register_release(db, Release("p", "c", "m", "cfg-1")).created_at == first.created_at
    assert {first.release_id, second.release_id} <= {r.release_id for r in list_releases(db)}
    assert promote_release(db, first.release_id).active
    promoted = promote_release(db, second.release_id)
    assert promoted.active and promoted.promoted_at is not None
    assert active_release(db).release_id == second.release_id
    assert not get_release(db, first.release_id).active
    with pytest.raises(psycopg.errors.UniqueViolation), db.admin() as conn:
        conn.execute("UPDATE releases SET active = true WHERE release_id = %s", (first.release_id,))
    with pytest.raises(LookupError):
        promote_release(db, "rel-0000000000000000")
    assert active_release(db).release_id == second.release_id


def test_embedder_for_model_rebuilds_known_models():
    fake = FakeHashEmbedder()
    assert embedder_for_model(fake.model_id, fake) is fake
    other = embedder_for_model("fake-hash-bow+w60s50", fake)
    assert isinstance(other, FakeHashEmbedder) and other.model_id == "fake-hash-bow+w60s50"
    minilm = embedder_for_model("all-MiniLM-L6-v2+win128s100", fake)
    assert isinstance(minilm, MiniLMEmbedder) and minilm.model_id == "all-MiniLM-L6-v2+win128s100"
    with pytest.raises(LookupError):
        embedder_for_model("some-other-model", fake)


def test_blue_green_switch_happens_only_at_promotion_and_old_rows_can_be_dropped(url, db, folder):
    blue = IngestionPipeline(db, FakeHashEmbedder())
    green = IngestionPipeline(
        db, FakeHashEmbedder(window_words=60, stride_words=50), ChunkerConfig(400, 800, 0.1)
    )
    assert build(blue, folder) == ["faq_v1", "refund_v1"]
    config = RetrievalConfig()
    blue_release = register_release(db, Release.of(blue.versions, config)).release
    promote_release(db, blue_release.release_id)

    # green is half-built: the faq is only parsed and chunked, nothing of it is published
    green.register(folder)
    ensure_builds(db, TENANT, green.versions)
    green.parse(TENANT, "faq_v1")
    green.chunk(TENANT, "faq_v1")
    kb = open_knowledge_base(url=url, embedder="fake-hash")
    assert kb.retriever.versions == blue.versions
    pack = kb.retriever.retrieve(TENANT, QUESTION, as_of=AS_OF).pack
    assert [e["chunk_id"] for e in pack["evidence"]][:1] == ["faq_v1_000"]

    for version in ("faq_v1", "refund_v1"):
        green.run_all(TENANT, version)
    vectors = "SELECT count(*) FROM chunk_vectors WHERE embedding_model_id = %s"
    assert count(db, vectors, blue.versions.embedding_model_id) == 2
    assert count(db, vectors, green.versions.embedding_model_id) == 2
    green_release = register_release(db, Release.of(green.versions, config)).release
    assert open_knowledge_base(url=url, embedder="fake-hash").retriever.versions == blue.versions

    promote_release(db, green_release.release_id)
    switched = open_knowledge_base(url=url, embedder="fake-hash").retriever
    assert switched.versions == green.versions
    assert switched.embedder.model_id == green.versions.embedding_model_id

    with pytest.raises(ValueError, match="active"):
        drop_release_rows(db, green_release.release_id)
    dropped = drop_release_rows(db, blue_release.release_id)
    assert dropped["doc_builds"] == 2 and dropped["chunk_vectors"] == 2 and dropped["chunks"] == 2
    assert dropped["doc_parses"] == 0, "the parser version is shared with green"
    assert dropped["embedding_cache"] >= 1
    assert count(db, vectors, blue.versions.embedding_model_id) == 0
    assert count(db, vectors, green.versions.embedding_model_id) == 2
    pack = switched.retrieve(TENANT, QUESTION, as_of=AS_OF).pack
    assert pack["evidence"][0]["chunk_id"] == "faq_v1_000"
    assert get_release(db, blue_release.release_id).dropped_at is not None
    with pytest.raises(LookupError, match="dropped"):
        promote_release(db, blue_release.release_id)
    assert drop_release_rows(db, blue_release.release_id)["doc_builds"] == 0
