"""Ingestion steps (register, parse, chunk, embed, publish) as plain, idempotent functions.

Each step reads and writes PostgreSQL inside tenant-scoped transactions. A document version's
rows stay invisible to retrieval until `publish` flips its build to `indexed` in one statement,
so a run killed halfway leaves nothing half-visible and the next run completes it.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from statistics import mean, median
from typing import Any

from psycopg.types.json import Jsonb

from kb_retrieval.db.connection import Database
from kb_retrieval.embedding import Embedder
from kb_retrieval.ingestion import sentence_vectors as sentences
from kb_retrieval.ingestion import sql, stored_state
from kb_retrieval.ingestion.chunking import ChunkerConfig, WordPieceCounter, chunk_document
from kb_retrieval.ingestion.manifest import (
    DocumentProblem,
    DocumentSpec,
    check_supersedes,
    load_manifest,
)
from kb_retrieval.ingestion.source_copy import parse_private_copy
from kb_retrieval.model_files import load_fast_tokenizer
from kb_retrieval.models import (
    IngestReason,
    LifecycleState,
    ParsedDocument,
    PipelineVersions,
    Span,
    SpanKind,
)
from kb_retrieval.parsing import PARSER_VERSION, parse_entries
from kb_retrieval.parsing.errors import ParseError
from kb_retrieval.parsing.guard import parse_file_guarded
from kb_retrieval.text.analyzer import ANALYZER_VERSION, term_frequencies

EMBED_BATCH = 64
FAILED_PARSE_HASH = "failed_parse_hash"
Parser = Callable[[Path], ParsedDocument]


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


@dataclass
class Registration:
    tenant_id: str
    registered: list[str] = field(default_factory=list)
    problems: list[DocumentProblem] = field(default_factory=list)


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _content_changed(doc: DocumentSpec, stored: dict[str, Any] | None) -> DocumentProblem | None:
    """The problem of a manifest entry whose id is stored with other content or category."""
    if stored is None or (
        stored["content_hash"] == doc.content_hash and stored["category"] == doc.category
    ):
        return None
    return DocumentProblem(
        doc.doc_version_id,
        IngestReason.VERSION_CONTENT_CHANGED,
        f"{doc.source or 'entries'} ({doc.doc_version_id}): doc_version_id is immutable and "
        f"already holds other content ({stored['content_hash'][:19]}…, category "
        f"{stored['category']}); give the changed document a new doc_version_id. Nothing stored "
        "was changed.",
    )


def _skipped(doc_version_id: str, build: BuildState, **metrics: Any) -> StepReport:
    """A step's report when it skips on the build it has just read (nothing written since)."""
    return StepReport(doc_version_id, build.state, build.reason_code, build.message, True, metrics)


def skipped_reports(doc_version_id: str, build: BuildState) -> list[StepReport]:
    """What parse, chunk, embed and publish report for a settled version (all skipped)."""
    return [
        _skipped(doc_version_id, build, **metrics)
        for metrics in ({}, {}, {"embedded_chunks": 0, "embedded_windows": 0}, {})
    ]


def spans_to_json(doc: ParsedDocument) -> list[dict[str, Any]]:
    return [asdict(span) for span in doc.spans]


def spans_from_json(
    rows: Sequence[dict[str, Any]], parser_version: str, pages: int | None
) -> ParsedDocument:
    spans = tuple(Span(**{**row, "kind": SpanKind(row["kind"])}) for row in rows)
    return ParsedDocument(spans=spans, parser_version=parser_version, page_count=pages)


Step = Callable[..., "StepReport"]
# (chunk pk, chunk id, window index, window text, text hash)
_Window = tuple[int, str, int, str, str]


@dataclass
class _Prepared:
    """What `embed_many` read and embedded for one chunked build, handed to its `embed`."""

    units: list[sentences.SentenceUnit]
    windows: list[_Window]
    vectors: dict[str, Any] = field(default_factory=dict)


def write_postings(conn: Any, tenant_id: str, key: dict[str, str]) -> None:
    """The BM25 postings of the version's stored chunks and its builds' `term_total`, for a
    tenant that keeps postings (opted in by `kb index postings`); other tenants' PostgreSQL
    lexical leg reads the chunks."""
    params = {**key, "tenant_id": tenant_id, "versions": [key["doc_version_id"]]}
    if not conn.execute(sql.TENANT_KEEPS_POSTINGS, params).fetchone()[0]:
        return
    conn.execute(sql.INSERT_POSTINGS, params)
    conn.execute(sql.SET_BUILD_TERM_TOTAL, params)


def one_at_a_time(step: Step) -> Step:
    """Run the step under the (tenant, version) advisory lock: two ingests of the same tenant
    never work on one version at once; the later one finds the step done and skips it."""

    @functools.wraps(step)
    def locked(
        self: IngestionPipeline, tenant_id: str, doc_version_id: str, *args: Any
    ) -> StepReport:
        with self.db.exclusive(tenant_id, doc_version_id):
            return step(self, tenant_id, doc_version_id, *args)

    return locked


class IngestionPipeline:
    """The ingestion steps for one database, embedder and chunker configuration."""

    def __init__(
        self,
        db: Database,
        embedder: Embedder,
        chunker_config: ChunkerConfig | None = None,
        parser: Parser = parse_file_guarded,
        sentence_vectors: bool = True,
    ) -> None:
        """`sentence_vectors`: store each chunk's sentence vectors (migration 0008) too."""
        self.db = db
        self.sentence_vectors = sentence_vectors
        self.embedder = embedder
        self.chunker_config = chunker_config or ChunkerConfig()
        self.parser = parser
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

    # -- registration ---------------------------------------------------------------------
    def register(self, folder: Path) -> Registration:
        """Validate the manifest and record its versions; a changed immutable version is refused.

        The tenant's stored versions are read once; an entry already stored as it is (and its
        build row) is not written again, so an unchanged folder registers without a write; the
        others are written in one transaction (all or none of them)."""
        manifest = load_manifest(folder)
        tenant_id = manifest.tenant_id
        with self.db.tenant(tenant_id) as conn:
            stored = stored_state.registered_versions(conn, tenant_id, self.versions)
        if not stored:  # a stored version's tenant row exists (foreign key)
            self.db.ensure_tenant(tenant_id)
        check_supersedes(manifest, frozenset(stored))
        result = Registration(tenant_id=manifest.tenant_id, problems=list(manifest.problems))
        problems = {
            doc.doc_version_id: _content_changed(doc, stored.get(doc.doc_version_id))
            for doc in manifest.documents
        }
        writes = [
            doc
            for doc in manifest.documents
            if problems[doc.doc_version_id] is None
            and stored_state.needs_write(doc, stored.get(doc.doc_version_id))
        ]
        if writes:  # one transaction, one WAL flush, for the folder's new or changed entries
            with self.db.tenant(tenant_id) as conn:
                problems |= {doc.doc_version_id: self._register_one(conn, doc) for doc in writes}
        for doc in manifest.documents:
            problem = problems[doc.doc_version_id]
            if problem is None:
                result.registered.append(doc.doc_version_id)
            else:
                result.problems.append(problem)
        return result

    def _register_one(self, conn: Any, doc: DocumentSpec) -> DocumentProblem | None:
        existing = conn.execute(
            sql.SELECT_VERSION, {"doc_version_id": doc.doc_version_id}
        ).fetchone()
        if existing is not None:
            problem = _content_changed(doc, {"content_hash": existing[11], "category": existing[3]})
            if problem is not None:
                return problem
        fields = stored_state.version_fields(doc)
        conn.execute(sql.INSERT_VERSION, {**fields, "metadata": Jsonb(fields["metadata"])})
        conn.execute(
            sql.ENSURE_BUILD, {"tenant_id": doc.tenant_id, **self._key(doc.doc_version_id)}
        )
        return None

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

    # -- helpers --------------------------------------------------------------------------
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

    # -- parse ----------------------------------------------------------------------------
    @one_at_a_time
    def parse(self, tenant_id: str, doc_version_id: str) -> StepReport:
        with self._step(tenant_id) as conn:
            build = self._build_in(conn, tenant_id, doc_version_id)
            if build.state == LifecycleState.INDEXED:
                return _skipped(doc_version_id, build)
            version = conn.execute(
                sql.SELECT_VERSION, {"doc_version_id": doc_version_id}
            ).fetchone()
            stored = conn.execute(sql.SELECT_PARSE, self._key(doc_version_id)).fetchone()
            failed = build.state in (LifecycleState.FAILED, LifecycleState.NEEDS_ATTENTION)
            if failed and build.stats.get(FAILED_PARSE_HASH) == version[11]:
                return self._report(conn, tenant_id, doc_version_id, True)  # these bytes failed
            if (
                stored is not None
                and stored[0] == version[11]
                and build.state
                not in (
                    LifecycleState.FAILED,
                    LifecycleState.NEEDS_ATTENTION,
                )
            ):
                if build.state in (
                    LifecycleState.QUEUED,
                    LifecycleState.RECEIVED,
                    LifecycleState.PARSING,
                ):
                    self._set_state(conn, doc_version_id, LifecycleState.PARSED)
                return self._report(conn, tenant_id, doc_version_id, True, spans=len(stored[2]))
            self._set_state(conn, doc_version_id, LifecycleState.PARSING)
        source_path, metadata = version[5], version[12]
        try:
            if source_path is None:
                parsed = parse_entries(list(metadata.get("entries", [])))
            else:
                parsed = parse_private_copy(Path(source_path), version[11], self.parser)
        except ParseError as error:
            with self._step(tenant_id) as conn:
                self._set_state(
                    conn,
                    doc_version_id,
                    LifecycleState(error.state),
                    error.reason.value,
                    str(error),
                )
                if error.reason != IngestReason.VERSION_CONTENT_CHANGED:
                    # These bytes are not parsed again until the parser version changes.
                    memo = {FAILED_PARSE_HASH: version[11]}
                    conn.execute(
                        sql.MERGE_BUILD_STATS, {**self._key(doc_version_id), "stats": Jsonb(memo)}
                    )
                return self._report(conn, tenant_id, doc_version_id, False)
        with self._step(tenant_id) as conn:
            conn.execute(
                sql.UPSERT_PARSE,
                {
                    "tenant_id": tenant_id,
                    **self._key(doc_version_id),
                    "content_hash": version[11],
                    "page_count": parsed.page_count,
                    "spans": Jsonb(spans_to_json(parsed)),
                },
            )
            self._set_state(conn, doc_version_id, LifecycleState.PARSED)
            return self._report(
                conn,
                tenant_id,
                doc_version_id,
                False,
                spans=len(parsed.spans),
                pages=parsed.page_count,
                characters=len(parsed.text),
            )

    # -- chunk ----------------------------------------------------------------------------
    @one_at_a_time
    def chunk(self, tenant_id: str, doc_version_id: str) -> StepReport:
        ready = (
            LifecycleState.PARSED,
            LifecycleState.CHUNKING,
            LifecycleState.CHUNKED,
            LifecycleState.EMBEDDING,
        )
        key = self._key(doc_version_id)
        with self._step(tenant_id) as conn:
            build = self._build_in(conn, tenant_id, doc_version_id)
            if build.state not in ready:
                return _skipped(doc_version_id, build)
            stored = conn.execute(sql.COUNT_CHUNKS, key).fetchone()[0]
            if stored > 0:
                # Chunks are written in one transaction and are a pure function of the immutable
                # version, parser and chunker: another build (e.g. a new embedding model) reuses
                # them instead of replacing rows that the serving build's vectors point at.
                if build.state in (LifecycleState.PARSED, LifecycleState.CHUNKING):
                    conn.execute(
                        sql.SET_BUILD_CHUNKED,
                        {
                            **key,
                            "chunk_count": stored,
                            "stats": Jsonb({"chunks": stored, "reused": True}),
                        },
                    )
                    write_postings(conn, tenant_id, key)
                return self._report(conn, tenant_id, doc_version_id, True, chunks=stored)
            version = conn.execute(
                sql.SELECT_VERSION, {"doc_version_id": doc_version_id}
            ).fetchone()
            parse_row = conn.execute(sql.SELECT_PARSE, key).fetchone()
        parsed = spans_from_json(parse_row[2], self.versions.parser_version, parse_row[1])
        counter = WordPieceCounter(load_fast_tokenizer())
        chunks = chunk_document(
            parsed, doc_version_id, counter, self.chunker_config, category=version[3]
        )
        rows = []
        for chunk in chunks:
            freqs = term_frequencies(chunk.text)
            rows.append(
                {
                    "tenant_id": tenant_id,
                    **key,
                    "doc_id": version[1],
                    "category": version[3],
                    "chunk_id": chunk.chunk_id,
                    "chunk_index": chunk.chunk_index,
                    "section_title": chunk.section_title,
                    "page_start": chunk.page_start,
                    "page_end": chunk.page_end,
                    "source_locator": chunk.source_locator,
                    "token_count": chunk.token_count,
                    "text": chunk.text,
                    "text_hash": _sha(chunk.text),
                    "policy_likeness_hint": chunk.policy_likeness_hint.value,
                    "term_count": sum(freqs.values()),
                    "term_freqs": Jsonb(dict(sorted(freqs.items()))),
                    "terms": sorted(freqs),
                }
            )
        tokens = [c.token_count for c in chunks]
        stats = {
            "chunks": len(chunks),
            "tokens_total": sum(tokens),
            "tokens_min": min(tokens, default=0),
            "tokens_median": median(tokens) if tokens else 0,
            "tokens_max": max(tokens, default=0),
            "tokens_mean": round(mean(tokens), 1) if tokens else 0,
        }
        with self._step(tenant_id) as conn:
            conn.execute(sql.DELETE_CHUNKS, key)
            with conn.cursor() as cur:
                cur.executemany(sql.INSERT_CHUNK, rows)
            write_postings(conn, tenant_id, key)
            conn.execute(
                sql.SET_BUILD_CHUNKED, {**key, "chunk_count": len(chunks), "stats": Jsonb(stats)}
            )
            # Ids, counts and hashes only: no document text leaves the database (Dagster events).
            chunk_refs = [
                {"chunk_id": c.chunk_id, "tokens": c.token_count, "text_hash": _sha(c.text)[:16]}
                for c in chunks[:5]
            ]
            return self._report(
                conn, tenant_id, doc_version_id, False, **stats, chunk_refs=chunk_refs
            )

    # -- embed ----------------------------------------------------------------------------
    def embed_many(self, tenant_id: str, doc_version_ids: Sequence[str]) -> list[StepReport]:
        """`embed` for several versions of one tenant, their missing windows embedded together
        first (sorted by length, `EMBED_BATCH` per forward pass) instead of version by version,
        under the advisory locks of all of them (taken in sorted order: no deadlock).
        Each freshly embedded window is credited to the first version that needs it, so every
        report equals what `embed` in the same order reports."""
        with contextlib.ExitStack() as locks:
            for doc_version_id in sorted(set(doc_version_ids)):
                locks.enter_context(self.db.exclusive(tenant_id, doc_version_id))
            return self._embed_many_locked(tenant_id, doc_version_ids)

    def _embed_many_locked(
        self, tenant_id: str, doc_version_ids: Sequence[str]
    ) -> list[StepReport]:
        texts: dict[str, str] = {}
        owner: dict[str, str] = {}
        pending: set[str] = set()
        prepared: dict[str, _Prepared] = {}
        builds = self.settled(tenant_id, doc_version_ids)
        for doc_version_id in doc_version_ids:
            if doc_version_id in builds:
                continue
            with self.db.tenant(tenant_id) as conn:
                build = builds[doc_version_id] = self._build_in(conn, tenant_id, doc_version_id)
                if build.state not in (LifecycleState.CHUNKED, LifecycleState.EMBEDDING) and not (
                    build.state == LifecycleState.INDEXED and self.sentence_vectors
                ):
                    continue
                chunks = conn.execute(
                    sql.SELECT_CHUNKS_FOR_EMBEDDING, self._key(doc_version_id)
                ).fetchall()
                units = self._missing_units(conn, doc_version_id, chunks)
            texts.update(sentences.unit_texts(units))
            if build.state == LifecycleState.INDEXED:
                if units:
                    pending.add(doc_version_id)
                continue
            pending.add(doc_version_id)
            windows = self._windows(chunks)
            for *_ids, window, digest in windows:
                texts[digest] = window
                owner.setdefault(digest, doc_version_id)
            if build.state == LifecycleState.CHUNKED:
                prepared[doc_version_id] = _Prepared(units, windows)
        by_length = sorted(texts, key=lambda h: (len(texts[h]), h))
        vectors = self._vectors_for(tenant_id, by_length, texts) if texts else {"__fresh__": set()}
        fresh = vectors.pop("__fresh__")
        credited: dict[str, set[str]] = {}
        for digest in fresh & owner.keys():
            credited.setdefault(owner[digest], set()).add(digest)
        for item in prepared.values():
            item.vectors = vectors
        # A version with nothing to embed gets `embed`'s skip report from the build read above
        # (the locks are held: no state changed since).
        return [
            self.embed(
                tenant_id,
                doc_version_id,
                credited.get(doc_version_id, set()),
                prepared.get(doc_version_id),
            )
            if doc_version_id in pending
            else _skipped(
                doc_version_id, builds[doc_version_id], embedded_chunks=0, embedded_windows=0
            )
            for doc_version_id in doc_version_ids
        ]

    def _windows(self, chunks: Sequence[tuple[int, str, str]]) -> list[_Window]:
        """Each chunk's windows as (chunk pk, chunk id, window index, text, text hash)."""
        return [
            (pk, cid, i, w, _sha(w))
            for pk, cid, text in chunks
            for i, w in enumerate(self.embedder.windows(text))
        ]

    def embed(
        self,
        tenant_id: str,
        doc_version_id: str,
        embedded_before: set[str] | None = None,
        prepared: _Prepared | None = None,
    ) -> StepReport:
        """Window vectors of the version's chunks (from the cache, else embedded now);
        `embedded_before`: hashes `embed_many` just embedded for it, reported as embedded here;
        `prepared`: what `embed_many` read and embedded for this chunked build under the lock it
        still holds (units, windows, vectors), so nothing is read, tokenized or locked twice."""
        if prepared is not None:
            return self._store_vectors(
                tenant_id, doc_version_id, prepared, embedded_before or set()
            )
        return self._embed_locked(tenant_id, doc_version_id, embedded_before)

    @one_at_a_time
    def _embed_locked(
        self, tenant_id: str, doc_version_id: str, embedded_before: set[str] | None
    ) -> StepReport:
        key = self._key(doc_version_id)
        with self._step(tenant_id) as conn:
            build = self._build_in(conn, tenant_id, doc_version_id)
            if build.state not in (LifecycleState.CHUNKED, LifecycleState.EMBEDDING):
                backfill = build.state == LifecycleState.INDEXED and self.sentence_vectors
                if not backfill:
                    return _skipped(doc_version_id, build, embedded_chunks=0, embedded_windows=0)
            else:
                backfill = False
                chunks = conn.execute(sql.SELECT_CHUNKS_FOR_EMBEDDING, key).fetchall()
                done = conn.execute(sql.COUNT_EMBEDDED_CHUNKS, key).fetchone()[0]
                units = self._missing_units(conn, doc_version_id, chunks)
                if build.state == LifecycleState.EMBEDDING and done == len(chunks) and not units:
                    return self._report(
                        conn, tenant_id, doc_version_id, True, embedded_chunks=0, embedded_windows=0
                    )
                self._set_state(conn, doc_version_id, LifecycleState.EMBEDDING)
        if backfill:
            return self._backfill_sentences(tenant_id, doc_version_id)
        windows = self._windows(chunks)
        texts = {**sentences.unit_texts(units), **{w[4]: w[3] for w in windows}}
        vectors = self._vectors_for(tenant_id, sorted(texts), texts)
        fresh = vectors.pop("__fresh__") | (embedded_before or set())
        return self._store_vectors(
            tenant_id, doc_version_id, _Prepared(units, windows, vectors), fresh, set_state=False
        )

    def _store_vectors(
        self,
        tenant_id: str,
        doc_version_id: str,
        prepared: _Prepared,
        fresh: set[str],
        set_state: bool = True,
    ) -> StepReport:
        """One transaction: the units' and windows' vectors, the build's window counts (and its
        state `embedding` when `set_state`), then the report."""
        key = self._key(doc_version_id)
        units, windows, vectors = prepared.units, prepared.windows, prepared.vectors
        fresh_hashes = fresh & {w[4] for w in windows}
        with self._step(tenant_id) as conn:
            if set_state:
                self._set_state(conn, doc_version_id, LifecycleState.EMBEDDING)
            sentences.store_units(conn, tenant_id, self.versions, doc_version_id, units, vectors)
            with conn.cursor() as cur:
                cur.executemany(
                    sql.INSERT_VECTOR,
                    [
                        (
                            pk,
                            tenant_id,
                            doc_version_id,
                            self.versions.chunker_version,
                            cid,
                            self.versions.embedding_model_id,
                            index,
                            vectors[h],
                        )
                        for pk, cid, index, _w, h in windows
                    ],
                )
            embedded_chunks = len({w[0] for w in windows if w[4] in fresh_hashes})
            conn.execute(
                sql.SET_BUILD_EMBEDDED,
                {**key, "window_count": len(windows), "embedded_count": embedded_chunks},
            )
            return self._report(
                conn,
                tenant_id,
                doc_version_id,
                False,
                embedded_chunks=embedded_chunks,
                embedded_windows=len(fresh_hashes),
                windows=len(windows),
                cached_windows=len(windows) - sum(1 for w in windows if w[4] in fresh_hashes),
                sentence_units=len(units),
            )

    def _missing_units(
        self, conn: Any, doc_version_id: str, chunks: Sequence[tuple[int, str, str]]
    ) -> list[sentences.SentenceUnit]:
        if not self.sentence_vectors:
            return []
        return sentences.missing_units(conn, self.versions, doc_version_id, chunks)

    def _backfill_sentences(self, tenant_id: str, doc_version_id: str) -> StepReport:
        """An indexed build from before migration 0008: its chunks' missing sentence vectors,
        stored with a new `indexed_at` in one transaction (snapshots reload the version)."""
        with self.db.tenant(tenant_id) as conn:
            chunks = conn.execute(
                sql.SELECT_CHUNKS_FOR_EMBEDDING, self._key(doc_version_id)
            ).fetchall()
            units = self._missing_units(conn, doc_version_id, chunks)
            if not units:
                return self._report(
                    conn, tenant_id, doc_version_id, True, embedded_chunks=0, embedded_windows=0
                )
        texts = sentences.unit_texts(units)
        vectors = self._vectors_for(tenant_id, sorted(texts), texts)
        with self.db.tenant(tenant_id) as conn:
            sentences.store_units(conn, tenant_id, self.versions, doc_version_id, units, vectors)
            sentences.touch_indexed(conn, self.versions, doc_version_id)
            return self._report(
                conn,
                tenant_id,
                doc_version_id,
                False,
                embedded_chunks=0,
                embedded_windows=0,
                sentence_units=len(units),
            )

    def _vectors_for(
        self, tenant_id: str, hashes: list[str], texts: dict[str, str]
    ) -> dict[str, Any]:
        """Vectors by text hash: from the cache, else embedded now (cached batch by batch)."""
        model = self.versions.embedding_model_id
        with self.db.tenant(tenant_id) as conn, conn.cursor(binary=True) as cur:
            # Binary rows: the float4 values as stored, without parsing 384 decimals per vector.
            found = dict(
                cur.execute(
                    sql.SELECT_CACHED_EMBEDDINGS, {"embedding_model_id": model, "hashes": hashes}
                ).fetchall()
            )
        missing = [h for h in hashes if h not in found]
        for start in range(0, len(missing), EMBED_BATCH):
            batch = missing[start : start + EMBED_BATCH]
            matrix = self.embedder.embed([texts[h] for h in batch])
            with self._step(tenant_id) as conn, conn.cursor() as cur:
                cur.executemany(
                    sql.INSERT_CACHED_EMBEDDING,
                    [(tenant_id, model, h, matrix[i]) for i, h in enumerate(batch)],
                )
            found.update({h: matrix[i] for i, h in enumerate(batch)})
        found["__fresh__"] = set(missing)
        return found

    # -- publish --------------------------------------------------------------------------
    @one_at_a_time
    def publish(self, tenant_id: str, doc_version_id: str) -> StepReport:
        key = self._key(doc_version_id)
        with self.db.tenant(tenant_id) as conn:
            build = self._build_in(conn, tenant_id, doc_version_id)
            if build.state != LifecycleState.EMBEDDING:
                return _skipped(doc_version_id, build)
            chunks = conn.execute(sql.COUNT_CHUNKS, key).fetchone()[0]
            embedded = conn.execute(sql.COUNT_EMBEDDED_CHUNKS, key).fetchone()[0]
            rows = conn.execute(sql.SELECT_CHUNKS_FOR_EMBEDDING, key).fetchall()
            lacking = len({u.chunk_pk for u in self._missing_units(conn, doc_version_id, rows)})
            if chunks == 0 or chunks != build.chunk_count or embedded != chunks or lacking:
                self._set_state(
                    conn,
                    doc_version_id,
                    LifecycleState.FAILED,
                    IngestReason.EMBEDDING_FAILED.value,
                    f"{doc_version_id}: {embedded} of {chunks} chunks have vectors"
                    + (f", {lacking} lack sentence vectors" if lacking else "")
                    + "; not published",
                )
            else:
                conn.execute(sql.PUBLISH_BUILD, key)
            return self._report(conn, tenant_id, doc_version_id, False, chunks=chunks)

    def run_all(self, tenant_id: str, doc_version_id: str) -> list[StepReport]:
        """Every step in order for one version (what the Dagster assets do, without Dagster);
        a settled version's skip reports come from one query."""
        build = self.settled(tenant_id, [doc_version_id]).get(doc_version_id)
        if build is not None:
            return skipped_reports(doc_version_id, build)
        return [
            step(tenant_id, doc_version_id)
            for step in (self.parse, self.chunk, self.embed, self.publish)
        ]
