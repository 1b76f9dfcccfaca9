"""A build's stored state and what every ingestion step shares: the reports, the per-version
advisory lock, the build-row reads and writes, and the settled check.

`BuildSteps` holds the pipeline's database, embedder and versions; the embed step
(`embed_step.EmbedSteps`) and the other steps (`pipeline.IngestionPipeline`) build on it.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from kb_retrieval.db.connection import Database
from kb_retrieval.embedding import Embedder
from kb_retrieval.ingestion import sql, stored_state
from kb_retrieval.ingestion.chunking import ChunkerConfig
from kb_retrieval.models import LifecycleState, PipelineVersions
from kb_retrieval.parsing import PARSER_VERSION
from kb_retrieval.text.analyzer import ANALYZER_VERSION

FAILED_PARSE_HASH = "failed_parse_hash"


@dataclass(frozen=True)
class BuildState:
    """One build's row of `doc_builds` (the columns of `sql.SELECT_BUILD`, in that order)."""

    state: str
    reason_code: str | None
    message: str | None
    chunk_count: int | None
    window_count: int | None
    embedded_count: int | None
    stats: dict[str, Any]


@dataclass
class StepReport:
    """What one step did to one document version."""

    doc_version_id: str
    state: str
    reason_code: str | None = None
    message: str | None = None
    skipped: bool = False
    metrics: dict[str, Any] = field(default_factory=dict)


def text_sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def skipped_report(doc_version_id: str, build: BuildState, **metrics: Any) -> StepReport:
    """A step's report when it skips on the build it has just read (nothing written since)."""
    return StepReport(doc_version_id, build.state, build.reason_code, build.message, True, metrics)


def skipped_reports(doc_version_id: str, build: BuildState) -> list[StepReport]:
    """What parse, chunk, embed and publish report for a settled version (all skipped)."""
    return [
        skipped_report(doc_version_id, build, **metrics)
        for metrics in ({}, {}, {"embedded_chunks": 0, "embedded_windows": 0}, {})
    ]


Step = Callable[..., "StepReport"]


def one_at_a_time(step: Step) -> Step:
    """Run the step under the (tenant, version) advisory lock: two ingests of the same tenant
    never work on one version at once; the later one finds the step done and skips it."""

    @functools.wraps(step)
    def locked(self: BuildSteps, tenant_id: str, doc_version_id: str, *args: Any) -> StepReport:
        with self.db.exclusive(tenant_id, doc_version_id):
            return step(self, tenant_id, doc_version_id, *args)

    return locked


class BuildSteps:
    """The database, embedder and versions of the steps, and their reads and writes of builds."""

    def __init__(
        self,
        db: Database,
        embedder: Embedder,
        chunker_config: ChunkerConfig | None = None,
        sentence_vectors: bool = True,
    ) -> None:
        """`sentence_vectors`: store each chunk's sentence vectors (migration 0008) too."""
        self.db = db
        self.sentence_vectors = sentence_vectors
        self.embedder = embedder
        self.chunker_config = chunker_config or ChunkerConfig()
        self.versions = PipelineVersions(
            parser_version=PARSER_VERSION,
            chunker_version=f"{self.chunker_config.version}+{ANALYZER_VERSION}",
            embedding_model_id=embedder.model_id,
        )

    def _key(self, doc_version_id: str) -> dict[str, str]:
        return {"doc_version_id": doc_version_id, **asdict(self.versions)}

    @contextlib.contextmanager
    def _step(self, tenant_id: str) -> Iterator[Any]:
        """A tenant transaction of parse, chunk or embed: its commit does not wait for the WAL
        flush (see `sql.ASYNC_COMMIT`); register, publish and backfills use `db.tenant`."""
        with self.db.tenant(tenant_id) as conn:
            conn.execute(sql.ASYNC_COMMIT)
            yield conn

    def settled(self, tenant_id: str, doc_version_ids: Sequence[str]) -> dict[str, BuildState]:
        """The versions that no step would change, with their builds, in one query: indexed
        (with every chunk's sentence vectors when they are stored), or failed to parse these
        same bytes before. Callers skip their steps (`skipped_reports` is what they report)."""
        with self.db.tenant(tenant_id) as conn:
            rows = stored_state.settled_builds(
                conn,
                tenant_id,
                self.versions,
                doc_version_ids,
                sentence_vectors=self.sentence_vectors,
                failed_parse_hash=FAILED_PARSE_HASH,
            )
        return {version: BuildState(*row) for version, row in rows.items()}

    def build_state(self, tenant_id: str, doc_version_id: str) -> BuildState:
        """The stored state of this version's build under the pipeline's versions."""
        with self.db.tenant(tenant_id) as conn:
            return self._build_in(conn, tenant_id, doc_version_id)

    def _build_in(self, conn: Any, tenant_id: str, doc_version_id: str) -> BuildState:
        """`build_state` inside the caller's tenant transaction (one round trip, no BEGIN)."""
        row = conn.execute(sql.SELECT_BUILD, self._key(doc_version_id)).fetchone()
        if row is None:
            raise LookupError(f"{tenant_id}/{doc_version_id} is not registered for {self.versions}")
        return BuildState(*row)

    def _set_state(
        self,
        conn: Any,
        doc_version_id: str,
        state: LifecycleState,
        reason: str | None = None,
        message: str | None = None,
    ) -> None:
        conn.execute(
            sql.SET_BUILD_STATE,
            {
                **self._key(doc_version_id),
                "state": state.value,
                "reason_code": reason,
                "message": message,
            },
        )

    def _report(
        self, conn: Any, tenant_id: str, doc_version_id: str, skipped: bool, **metrics: Any
    ) -> StepReport:
        """The step's report from the build as the step's own last transaction (`conn`) left it."""
        build = self._build_in(conn, tenant_id, doc_version_id)
        return StepReport(
            doc_version_id, build.state, build.reason_code, build.message, skipped, metrics
        )
