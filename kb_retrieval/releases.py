"""Releases: immutable (parser, chunker, embedding model, retrieval config) combinations.

A release has a stable id (a hash of its four version strings). Its rows (builds, chunks,
vectors) are built beside those of the active release; retrieval serves the active release only,
so it switches in one statement when a new release is promoted, and the old release's rows can
then be dropped. Plain SQL, no Dagster.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any

from psycopg.types.json import Jsonb

from kb_retrieval.db.connection import Database
from kb_retrieval.embedding import Embedder, FakeHashEmbedder, MiniLMEmbedder, WindowConfig
from kb_retrieval.models import PipelineVersions
from kb_retrieval.retrieval.config import RetrievalConfig

RELEASE_PREFIX = "rel-"
COLUMNS = "release_id, components, created_at, promoted_at, active, dropped_at"
INSERT_RELEASE = """
INSERT INTO releases (release_id, components) VALUES (%s, %s) ON CONFLICT (release_id) DO NOTHING
"""
SELECT_RELEASE = f"SELECT {COLUMNS} FROM releases WHERE release_id = %s"
SELECT_ACTIVE = f"SELECT {COLUMNS} FROM releases WHERE active"
SELECT_ALL = f"SELECT {COLUMNS} FROM releases ORDER BY created_at, release_id"
LOCK_RELEASES = "LOCK TABLE releases IN SHARE ROW EXCLUSIVE MODE"
DEACTIVATE = "UPDATE releases SET active = false WHERE active AND release_id <> %s"
ACTIVATE = """
UPDATE releases SET active = true, promoted_at = now()
WHERE release_id = %s AND dropped_at IS NULL
"""
MARK_DROPPED = "UPDATE releases SET dropped_at = coalesce(dropped_at, now()) WHERE release_id = %s"
KEPT_COMPONENTS = "SELECT components FROM releases WHERE dropped_at IS NULL AND release_id <> %s"
ENSURE_BUILDS = """
INSERT INTO doc_builds (tenant_id, doc_version_id, parser_version, chunker_version,
    embedding_model_id, state)
SELECT tenant_id, doc_version_id, %(parser_version)s, %(chunker_version)s,
    %(embedding_model_id)s, 'queued'
FROM doc_versions WHERE tenant_id = %(tenant_id)s
ON CONFLICT DO NOTHING
"""
SELECT_VERSION_IDS = (
    "SELECT doc_version_id FROM doc_versions WHERE tenant_id = %s ORDER BY doc_version_id"
)
DELETE_BUILDS = """
DELETE FROM doc_builds WHERE tenant_id = %(tenant_id)s AND parser_version = %(parser_version)s
  AND chunker_version = %(chunker_version)s AND embedding_model_id = %(embedding_model_id)s
"""
DELETE_VECTORS = """
DELETE FROM chunk_vectors v USING chunks c
WHERE v.chunk_pk = c.id AND v.tenant_id = %(tenant_id)s AND c.parser_version = %(parser_version)s
  AND c.chunker_version = %(chunker_version)s AND v.embedding_model_id = %(embedding_model_id)s
"""
DELETE_CHUNKS = """
DELETE FROM chunks WHERE tenant_id = %(tenant_id)s AND parser_version = %(parser_version)s
  AND chunker_version = %(chunker_version)s
"""
DELETE_PARSES = (
    "DELETE FROM doc_parses WHERE tenant_id = %(tenant_id)s AND parser_version = %(parser_version)s"
)
DELETE_CACHE = """
DELETE FROM embedding_cache
WHERE tenant_id = %(tenant_id)s AND embedding_model_id = %(embedding_model_id)s
"""
SELECT_RUN = """
SELECT run_id, release_id, metrics FROM eval_runs
WHERE release_id = %s AND kind = %s ORDER BY created_at DESC, run_id DESC LIMIT 1
"""
SELECT_PREVIOUS = """
SELECT r.release_id FROM releases r
WHERE r.release_id <> %(release_id)s AND EXISTS (
    SELECT 1 FROM eval_runs e WHERE e.release_id = r.release_id AND e.kind = %(kind)s)
ORDER BY r.active DESC, r.promoted_at DESC NULLS LAST, r.created_at DESC, r.release_id
LIMIT 1
"""
_MINILM_ID = re.compile(rf"^{re.escape(MiniLMEmbedder.base_model_id)}\+win(\d+)s(\d+)$")
_FAKE_ID = re.compile(r"^fake-hash-bow\+w(\d+)s(\d+)$")


@dataclass(frozen=True)
class Release:
    """The four versions that decide what retrieval returns; `retrieval_config` rebuilds it."""

    parser_version: str
    chunker_version: str
    embedding_model_id: str
    config_version: str
    retrieval_config: Mapping[str, Any] | None = field(
        default=None, compare=False, hash=False, repr=False
    )

    @classmethod
    def of(cls, versions: PipelineVersions, config: RetrievalConfig) -> Release:
        """The release of these versions and config (its hash recomputed: `model_copy` keeps a
        stale cached `config_version`)."""
        dump = config.model_dump(mode="json")
        return cls(
            **asdict(versions),
            config_version=RetrievalConfig.model_validate(dump).config_version,
            retrieval_config=dump,
        )

    @classmethod
    def from_components(cls, components: Mapping[str, Any]) -> Release:
        return cls(
            str(components["parser_version"]),
            str(components["chunker_version"]),
            str(components["embedding_model_id"]),
            str(components["config_version"]),
            components.get("retrieval_config"),
        )

    @property
    def key(self) -> dict[str, str]:
        return {
            "parser_version": self.parser_version,
            "chunker_version": self.chunker_version,
            "embedding_model_id": self.embedding_model_id,
            "config_version": self.config_version,
        }

    @property
    def release_id(self) -> str:
        """Stable: the same four versions give the same id on every machine."""
        digest = hashlib.sha256(json.dumps(self.key, sort_keys=True).encode()).hexdigest()
        return RELEASE_PREFIX + digest[:16]

    @property
    def versions(self) -> PipelineVersions:
        return PipelineVersions(self.parser_version, self.chunker_version, self.embedding_model_id)

    @property
    def components(self) -> dict[str, Any]:
        extra = {"retrieval_config": dict(self.retrieval_config)} if self.retrieval_config else {}
        return {**self.key, **extra}

    def config(self) -> RetrievalConfig:
        """The retrieval configuration of the release; ValueError when it cannot be rebuilt."""
        if self.retrieval_config is None:
            raise ValueError(f"release {self.release_id} stores no retrieval configuration")
        config = RetrievalConfig.model_validate(dict(self.retrieval_config))
        if config.config_version != self.config_version:
            raise ValueError(
                f"release {self.release_id} has retrieval config {self.config_version}; this code "
                f"rebuilds it as {config.config_version} (RetrievalConfig changed since)"
            )
        return config


@dataclass(frozen=True)
class ReleaseRecord:
    release: Release
    created_at: datetime
    promoted_at: datetime | None
    active: bool
    dropped_at: datetime | None

    @property
    def release_id(self) -> str:
        return self.release.release_id


@dataclass(frozen=True)
class ReleaseRun:
    """The stored evaluation run of a release (table eval_runs)."""

    release_id: str
    run_id: str
    metrics: dict[str, Any]


@dataclass(frozen=True)
class Serving:
    """What retrieval serves: the active release's versions with an embedder for its model."""

    versions: PipelineVersions
    embedder: Embedder
    release_id: str | None


def _record(row: Any) -> ReleaseRecord:
    release = Release.from_components(row[1])
    if release.release_id != row[0]:
        raise ValueError(f"release {row[0]} has components that hash to {release.release_id}")
    return ReleaseRecord(release, row[2], row[3], bool(row[4]), row[5])


def register_release(db: Database, release: Release) -> ReleaseRecord:
    """Record the release (idempotent: a registered release is never changed)."""
    with db.admin() as conn:
        conn.execute(INSERT_RELEASE, (release.release_id, Jsonb(release.components)))
        return _record(conn.execute(SELECT_RELEASE, (release.release_id,)).fetchone())


def get_release(db: Database, release_id: str) -> ReleaseRecord | None:
    with db.admin() as conn:
        row = conn.execute(SELECT_RELEASE, (release_id,)).fetchone()
    return _record(row) if row else None


def list_releases(db: Database) -> list[ReleaseRecord]:
    with db.admin() as conn:
        return [_record(row) for row in conn.execute(SELECT_ALL).fetchall()]


def active_release(db: Database) -> ReleaseRecord | None:
    with db.admin() as conn:
        row = conn.execute(SELECT_ACTIVE).fetchone()
    return _record(row) if row else None


def promote_release(db: Database, release_id: str) -> ReleaseRecord:
    """Make the release the only active one in one transaction; LookupError if not promotable."""
    with db.admin() as conn:
        conn.execute(LOCK_RELEASES)
        conn.execute(DEACTIVATE, (release_id,))
        if conn.execute(ACTIVATE, (release_id,)).rowcount != 1:
            raise LookupError(f"release {release_id} is not registered or was dropped")
        return _record(conn.execute(SELECT_RELEASE, (release_id,)).fetchone())


def ensure_builds(db: Database, tenant_id: str, versions: PipelineVersions) -> list[str]:
    """Queue a build of every registered version of the tenant for `versions`; their ids."""
    with db.tenant(tenant_id) as conn:
        conn.execute(ENSURE_BUILDS, {"tenant_id": tenant_id, **asdict(versions)})
        return [row[0] for row in conn.execute(SELECT_VERSION_IDS, (tenant_id,))]


def drop_release_rows(db: Database, release_id: str) -> dict[str, int]:
    """Delete the rows only this release uses (builds, vectors, chunks, parses, cached vectors).

    Refused for the active release. The release is marked dropped first (it can no longer be
    promoted), so an interrupted drop is completed by calling it again. Rows shared with any
    release that is not dropped are kept.
    """
    with db.admin() as conn:
        conn.execute(LOCK_RELEASES)
        row = conn.execute(SELECT_RELEASE, (release_id,)).fetchone()
        if row is None:
            raise LookupError(f"release {release_id} is not registered")
        if row[4]:
            raise ValueError(f"release {release_id} is active; promote another release first")
        conn.execute(MARK_DROPPED, (release_id,))
        kept = [Release.from_components(c[0]) for c in conn.execute(KEPT_COMPONENTS, (release_id,))]
    release = Release.from_components(row[1])
    steps = [
        ("doc_builds", DELETE_BUILDS, {k.versions for k in kept}, release.versions),
        ("chunk_vectors", DELETE_VECTORS, {k.versions for k in kept}, release.versions),
        (
            "chunks",
            DELETE_CHUNKS,
            {(k.parser_version, k.chunker_version) for k in kept},
            (release.parser_version, release.chunker_version),
        ),
        ("doc_parses", DELETE_PARSES, {k.parser_version for k in kept}, release.parser_version),
        (
            "embedding_cache",
            DELETE_CACHE,
            {k.embedding_model_id for k in kept},
            release.embedding_model_id,
        ),
    ]
    counts = dict.fromkeys((name for name, *_ in steps), 0)
    for tenant_id in db.tenants():
        with db.tenant(tenant_id) as conn:
            for name, statement, shared, own in steps:
                if own not in shared:
                    params = {"tenant_id": tenant_id, **asdict(release.versions)}
                    counts[name] += conn.execute(statement, params).rowcount
    return counts


def latest_release_run(db: Database, release_id: str, kind: str = "release") -> ReleaseRun | None:
    with db.admin() as conn:
        row = conn.execute(SELECT_RUN, (release_id, kind)).fetchone()
    return ReleaseRun(row[1], row[0], dict(row[2])) if row else None


def previous_release_run(db: Database, release_id: str, kind: str = "release") -> ReleaseRun | None:
    """The latest run of the release to compare with: the active one, else the last promoted,
    else the last registered release (other than `release_id`) that has a stored run."""
    with db.admin() as conn:
        row = conn.execute(SELECT_PREVIOUS, {"release_id": release_id, "kind": kind}).fetchone()
    return latest_release_run(db, row[0], kind) if row else None


def embedder_for_model(model_id: str, available: Embedder) -> Embedder:
    """`available` when it has `model_id`, else a new embedder of the known kinds with that id."""
    if available.model_id == model_id:
        return available
    if match := _MINILM_ID.match(model_id):
        return MiniLMEmbedder(WindowConfig(int(match[1]), int(match[2])))
    if match := _FAKE_ID.match(model_id):
        return FakeHashEmbedder(int(match[1]), int(match[2]))
    raise LookupError(f"no embedder of this installation has model id {model_id!r}")


def serving(db: Database, embedder: Embedder, versions: PipelineVersions) -> Serving:
    """The active release's versions and embedder; the pipeline's own when none is promoted."""
    record = active_release(db)
    if record is None:
        return Serving(versions, embedder, None)
    release = record.release
    return Serving(
        release.versions,
        embedder_for_model(release.embedding_model_id, embedder),
        release.release_id,
    )
