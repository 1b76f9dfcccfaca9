"""The embed step: window and sentence vectors of chunked builds, from the embedding cache or
embedded now, one version at a time (`embed`) or a tenant's versions in shared forward passes
(`embed_many`); and the sentence-vector backfill of builds indexed before migration 0008."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from kb_retrieval.ingestion import sentence_vectors as sentences
from kb_retrieval.ingestion import sql
from kb_retrieval.ingestion.build_steps import (
    BuildSteps,
    StepReport,
    one_at_a_time,
    skipped_report,
    text_sha,
)
from kb_retrieval.models import LifecycleState

EMBED_BATCH = 64
# (chunk pk, chunk id, window index, window text, text hash)
_Window = tuple[int, str, int, str, str]


@dataclass
class _Prepared:
    """What `embed_many` read and embedded for one chunked build, handed to its `embed`."""

    units: list[sentences.SentenceUnit]
    windows: list[_Window]
    vectors: dict[str, Any] = field(default_factory=dict)


class EmbedSteps(BuildSteps):
    """`embed` and `embed_many` (the pipeline's embed step) and their reads and writes."""

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
            else skipped_report(
                doc_version_id, builds[doc_version_id], embedded_chunks=0, embedded_windows=0
            )
            for doc_version_id in doc_version_ids
        ]

    def _windows(self, chunks: Sequence[tuple[int, str, str]]) -> list[_Window]:
        """Each chunk's windows as (chunk pk, chunk id, window index, text, text hash)."""
        return [
            (pk, cid, i, w, text_sha(w))
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
                    return skipped_report(
                        doc_version_id, build, embedded_chunks=0, embedded_windows=0
                    )
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
