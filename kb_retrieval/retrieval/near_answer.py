"""The knowledge base's nearest sentence to the guest's question, read before "I don't know".

The verdict's confidence is lexical: it misses an answer written in other words ("clothes
washed" / "laundry", "wifi on the yacht" / "Wi-Fi on board"). When the verdict would be
`UNKNOWN`, the candidates' stored sentence vectors (migration 0008; a chunk without them is not
read) are compared with the guest's question: the latest guest message as read and each of its
sentences that asks something (an earlier message of a thread may ask what was answered since).
A sentence at `near_answer_threshold` or above says the knowledge base likely answers the
e-mail in other words, so the verdict sends it to a person (`NEEDS_REVIEW`, `LOW_CONFIDENCE`)
instead. It never grounds a draft: a cosine says two texts are about the same thing, not that
one answers the other (docs/retrieval.md, session 18).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

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
        return asdict(self)


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
    candidates: Sequence[Candidate], nearest: Mapping[int, tuple[int, float]]
) -> NearAnswer | None:
    """The readable candidate whose nearest sentence (`nearest`: chunk_pk -> sentence index
    and cosine, `sentence_vectors.nearest_stored_sentences`) is closest to the question; the
    first in `candidates` order wins a tie. Cosines are rounded to `COSINE_DIGITS`."""
    best: NearAnswer | None = None
    for candidate in candidates:
        found = nearest.get(candidate.chunk_pk)
        if found is None or not readable(candidate):
            continue
        index, raw = found
        cosine = round(raw, COSINE_DIGITS)
        if best is None or cosine > best.cosine:
            texts = sentence_units(candidate.text)
            best = NearAnswer(
                candidate.chunk_id,
                candidate.version.doc_version_id,
                texts[index] if index < len(texts) else "",
                cosine,
            )
    return best


def admit_near_answer(
    pack: Sequence[Candidate], outside: Sequence[Candidate], near: NearAnswer, pack_max: int
) -> list[Candidate]:
    """The pack with the chunk of the near answer, so that the person it is sent to reads the
    sentence in its place; it takes the last place when the pack is full."""
    if any(c.chunk_id == near.chunk_id for c in pack):
        return list(pack)
    joining = [c for c in outside if c.chunk_id == near.chunk_id][:1]
    if not joining:
        return list(pack)
    return [*pack[: max(0, pack_max - 1)], *joining]


def reaches(near: NearAnswer | None, threshold: float) -> bool:
    """Whether the nearest sentence is close enough to send the e-mail to a person."""
    return near is not None and near.cosine >= threshold
