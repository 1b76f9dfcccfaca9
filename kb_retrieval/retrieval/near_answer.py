"""The knowledge base's nearest sentence to the guest's question, read when nothing is usable.

The verdict's confidence is lexical: it misses an answer written in other words ("clothes
washed" / "laundry", "wifi on the yacht" / "Wi-Fi on board"). When no chunk of the pack is
confident enough to draft from, the pack's stored sentence vectors (migration 0008; a chunk
without them is not read) are compared with the guest's question: the latest guest message as
read and each of its sentences that asks something (an earlier message of a thread may ask what
was answered since). A sentence at `near_answer_threshold` or above says the knowledge base
likely answers the e-mail in other words, so the verdict sends it to a person (`NEEDS_REVIEW`,
`LOW_CONFIDENCE`) instead of `UNKNOWN`. It never grounds a draft: a cosine says two texts are
about the same thing, not that one answers the other (docs/retrieval.md, session 18).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from kb_retrieval.models import Category
from kb_retrieval.retrieval.audience import not_for_guests
from kb_retrieval.retrieval.candidates import Candidate
from kb_retrieval.text.sentence_units import sentence_units
from kb_retrieval.text.sentences import sentence_bounds

COSINE_DIGITS = 4


@dataclass(frozen=True)
class NearAnswer:
    """The best-matching sentence of one candidate chunk and its cosine with the question."""

    chunk_id: str
    doc_version_id: str
    sentence: str
    cosine: float

    def to_json(self) -> dict[str, Any]:
        return {
            "chunk_id": self.chunk_id,
            "doc_version_id": self.doc_version_id,
            "sentence": self.sentence,
            "cosine": self.cosine,
        }


def question_texts(question: str) -> list[str]:
    """The question as read, then each of its sentences that asks something (holds "?"),
    without repeats; nothing for an empty question."""
    text = " ".join(question.split())
    if not text:
        return []
    asked = [" ".join(text[a:b].split()) for a, b in sentence_bounds(text)]
    return list(dict.fromkeys([text, *(s for s in asked if "?" in s)]))


def readable(candidate: Candidate) -> bool:
    """A chunk written for guests: current, not an internal document (written for staff, so
    its sentences match how staff run a trip rather than what a guest is told) and not marked
    by its author as not for guests."""
    return (
        not candidate.version.superseded
        and candidate.version.category is not Category.OPERATIONS_INTERNAL
        and not not_for_guests(candidate.text)
    )


def nearest_sentence(
    candidates: Sequence[Candidate],
    sentence_vectors: Mapping[int, np.ndarray],
    queries: np.ndarray,
) -> NearAnswer | None:
    """The readable candidate sentence with the highest cosine to any of the `queries`
    (unit-length rows); the first in `candidates` order wins a tie. Cosines are float64
    products of the stored float32 vectors, rounded to `COSINE_DIGITS`."""
    if len(queries) == 0:
        return None
    right = np.asarray(queries, dtype=np.float64)
    best: NearAnswer | None = None
    for candidate in candidates:
        vectors = sentence_vectors.get(candidate.chunk_pk)
        if vectors is None or vectors.size == 0 or not readable(candidate):
            continue
        sims = (np.asarray(vectors, dtype=np.float64) @ right.T).max(axis=1)
        index = int(sims.argmax())
        cosine = round(float(sims[index]), COSINE_DIGITS)
        if best is None or cosine > best.cosine:
            texts = sentence_units(candidate.text)
            best = NearAnswer(
                candidate.chunk_id,
                candidate.version.doc_version_id,
                texts[index] if index < len(texts) else "",
                cosine,
            )
    return best


def reaches(near: NearAnswer | None, threshold: float) -> bool:
    """Whether the nearest sentence is close enough to send the e-mail to a person."""
    return near is not None and near.cosine >= threshold
