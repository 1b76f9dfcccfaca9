"""Sentence vectors at ingestion (migration 0008): each chunk's sentence units, embedded with the
model of its windows in the same batched pass, stored per chunk.

A chunk's units are written in one transaction, so a chunk either has all its sentence vectors
or none; "missing" is decided per chunk. Unit texts go through the embedding cache like windows
(keyed by text hash and model): a re-run or a rebuild embeds no unit twice.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kb_retrieval.models import PipelineVersions
from kb_retrieval.text.sentence_units import UNITS_VERSION, sentence_units

CHUNK_KEY = """c.doc_version_id = %(doc_version_id)s AND c.parser_version = %(parser_version)s
  AND c.chunker_version = %(chunker_version)s"""

# Chunks of the version (this parser and chunker) that already hold sentence vectors.
CHUNKS_WITH_SENTENCES = f"""
SELECT DISTINCT s.chunk_pk FROM chunk_sentence_vectors s JOIN chunks c ON c.id = s.chunk_pk
WHERE {CHUNK_KEY} AND s.embedding_model_id = %(embedding_model_id)s
  AND s.units_version = %(units_version)s
"""

INSERT_SENTENCE_VECTOR = """
INSERT INTO chunk_sentence_vectors (tenant_id, chunk_pk, doc_version_id, chunker_version,
    chunk_id, embedding_model_id, units_version, sentence_index, embedding)
VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)
ON CONFLICT DO NOTHING
"""

# A backfilled build gets a new indexed_at: snapshots reload its rows (snapshot_store.py).
TOUCH_INDEXED_BUILD = """
UPDATE doc_builds SET indexed_at = now(), updated_at = now()
WHERE doc_version_id = %(doc_version_id)s AND parser_version = %(parser_version)s
  AND chunker_version = %(chunker_version)s AND embedding_model_id = %(embedding_model_id)s
  AND state = 'indexed'
"""


@dataclass(frozen=True)
class SentenceUnit:
    """One sentence unit of one chunk, with the hash its vector is cached under."""

    chunk_pk: int
    chunk_id: str
    index: int
    text: str
    digest: str


def _params(versions: PipelineVersions, doc_version_id: str) -> dict[str, str]:
    return {
        "doc_version_id": doc_version_id,
        "parser_version": versions.parser_version,
        "chunker_version": versions.chunker_version,
        "embedding_model_id": versions.embedding_model_id,
        "units_version": UNITS_VERSION,
    }


def missing_units(
    conn: Any,
    versions: PipelineVersions,
    doc_version_id: str,
    chunks: Sequence[tuple[int, str, str]],
) -> list[SentenceUnit]:
    """The units of the chunks (`SELECT_CHUNKS_FOR_EMBEDDING` rows) that have no stored vectors."""
    done = {
        row[0] for row in conn.execute(CHUNKS_WITH_SENTENCES, _params(versions, doc_version_id))
    }
    return [
        SentenceUnit(pk, chunk_id, index, unit, _sha(unit))
        for pk, chunk_id, text in chunks
        if pk not in done
        for index, unit in enumerate(sentence_units(text))
    ]


def unit_texts(units: Sequence[SentenceUnit]) -> dict[str, str]:
    return {unit.digest: unit.text for unit in units}


def store_units(
    conn: Any,
    tenant_id: str,
    versions: PipelineVersions,
    doc_version_id: str,
    units: Sequence[SentenceUnit],
    vectors: dict[str, Any],
) -> None:
    """Insert the units' vectors (`vectors` by text hash) inside the caller's transaction."""
    if not units:
        return
    with conn.cursor() as cur:
        cur.executemany(
            INSERT_SENTENCE_VECTOR,
            [
                (
                    tenant_id,
                    unit.chunk_pk,
                    doc_version_id,
                    versions.chunker_version,
                    unit.chunk_id,
                    versions.embedding_model_id,
                    UNITS_VERSION,
                    unit.index,
                    vectors[unit.digest],
                )
                for unit in units
            ],
        )


def touch_indexed(conn: Any, versions: PipelineVersions, doc_version_id: str) -> None:
    """Mark an indexed build's searchable rows as changed (after a backfill of its sentences)."""
    conn.execute(TOUCH_INDEXED_BUILD, _params(versions, doc_version_id))


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
