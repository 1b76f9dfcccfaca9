"""Ingestion steps (register, parse, chunk, embed, publish) as plain, idempotent functions.

The embed step lives in `embed_step.py`, the build reads and writes every step shares (reports,
the per-version lock, `settled`) in `build_steps.py`; `IngestionPipeline` has them all.

Each step reads and writes PostgreSQL inside tenant-scoped transactions. A document version's
rows stay invisible to retrieval until `publish` flips its build to `indexed` in one statement,
so a run killed halfway leaves nothing half-visible and the next run completes it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from statistics import mean, median
from typing import Any

from psycopg.types.json import Jsonb

from kb_retrieval.db.connection import Database
from kb_retrieval.embedding import Embedder
from kb_retrieval.ingestion import sql, stored_state
from kb_retrieval.ingestion.build_steps import (
    FAILED_PARSE_HASH,
    StepReport,
    one_at_a_time,
    skipped_report,
    skipped_reports,
    text_sha,
)
from kb_retrieval.ingestion.chunking import ChunkerConfig, WordPieceCounter, chunk_document
from kb_retrieval.ingestion.embed_step import EmbedSteps
from kb_retrieval.ingestion.manifest import (
    DocumentProblem,
    DocumentSpec,
    check_supersedes,
    load_manifest,
)
from kb_retrieval.ingestion.source_copy import parse_private_copy
from kb_retrieval.model_files import load_fast_tokenizer
from kb_retrieval.models import IngestReason, LifecycleState, ParsedDocument, Span, SpanKind
from kb_retrieval.parsing import parse_entries
from kb_retrieval.parsing.errors import ParseError
from kb_retrieval.parsing.guard import parse_file_guarded
from kb_retrieval.text.analyzer import term_frequencies

Parser = Callable[[Path], ParsedDocument]


@dataclass
class Registration:
    tenant_id: str
    registered: list[str] = field(default_factory=list)
    problems: list[DocumentProblem] = field(default_factory=list)


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


def spans_to_json(doc: ParsedDocument) -> list[dict[str, Any]]:
    return [asdict(span) for span in doc.spans]


def spans_from_json(
    rows: Sequence[dict[str, Any]], parser_version: str, pages: int | None
) -> ParsedDocument:
    spans = tuple(Span(**{**row, "kind": SpanKind(row["kind"])}) for row in rows)
    return ParsedDocument(spans=spans, parser_version=parser_version, page_count=pages)


def write_postings(conn: Any, tenant_id: str, key: dict[str, str]) -> None:
    """The BM25 postings of the version's stored chunks and its builds' `term_total`, for a
    tenant that keeps postings (opted in by `kb index postings`); other tenants' PostgreSQL
    lexical leg reads the chunks."""
    params = {**key, "tenant_id": tenant_id, "versions": [key["doc_version_id"]]}
    if not conn.execute(sql.TENANT_KEEPS_POSTINGS, params).fetchone()[0]:
        return
    conn.execute(sql.INSERT_POSTINGS, params)
    conn.execute(sql.SET_BUILD_TERM_TOTAL, params)


class IngestionPipeline(EmbedSteps):
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
        super().__init__(db, embedder, chunker_config, sentence_vectors)
        self.parser = parser

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

    # -- parse ----------------------------------------------------------------------------
    @one_at_a_time
    def parse(self, tenant_id: str, doc_version_id: str) -> StepReport:
        with self._step(tenant_id) as conn:
            build = self._build_in(conn, tenant_id, doc_version_id)
            if build.state == LifecycleState.INDEXED:
                return skipped_report(doc_version_id, build)
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
                return skipped_report(doc_version_id, build)
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
                    "text_hash": text_sha(chunk.text),
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
                {
                    "chunk_id": c.chunk_id,
                    "tokens": c.token_count,
                    "text_hash": text_sha(c.text)[:16],
                }
                for c in chunks[:5]
            ]
            return self._report(
                conn, tenant_id, doc_version_id, False, **stats, chunk_refs=chunk_refs
            )

    # -- publish --------------------------------------------------------------------------
    @one_at_a_time
    def publish(self, tenant_id: str, doc_version_id: str) -> StepReport:
        key = self._key(doc_version_id)
        with self.db.tenant(tenant_id) as conn:
            build = self._build_in(conn, tenant_id, doc_version_id)
            if build.state != LifecycleState.EMBEDDING:
                return skipped_report(doc_version_id, build)
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
