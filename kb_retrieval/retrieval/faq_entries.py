"""An FAQ chunk read entry by entry for the verdict's confidence.

A chunk of a long FAQ holds a dozen independent questions and answers. Its whole-chunk coverage
and BM25 reward a chunk whose entries each share one word of the e-mail (trip photos, the pack's
weight, "clothing", the week) although no entry answers it. An answer to a guest's question is
one entry, so an FAQ chunk of two or more questions that the verdict's lexical confidence would
let ground a draft is held to the entry it scores highest (`scoring.faq_entry_capped`): that
entry's coverage and BM25 (its own length against the average), the chunk's cosine and passage
coverage unchanged. Ranking, floors and the pack's score breakdown keep the whole chunk's values.

An entry is a run of paragraphs (blank-line separated) that starts at a question or a heading
(a paragraph ending in "?", or a short line that does not end a sentence); a heading directly
followed by a question stays one entry with it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from functools import lru_cache

from kb_retrieval.text.analyzer import analyze

HEADING_MAX_WORDS = 12
MIN_QUESTIONS = 2


@dataclass(frozen=True)
class EntryTerms:
    """One entry's analyzed term counts and length (in terms)."""

    counts: dict[str, int]
    length: int


def _opens_entry(paragraph: str) -> bool:
    line = paragraph.strip()
    if line.endswith("?"):
        return True
    return len(line.split()) <= HEADING_MAX_WORDS and not line.endswith((".", "!", ":", ";"))


def split_entries(text: str) -> list[list[str]]:
    """The paragraphs of `text` grouped into entries (see the module docstring)."""
    entries: list[list[str]] = []
    for paragraph in (p for p in text.split("\n\n") if p.strip()):
        heading_run = bool(entries) and all(_opens_entry(p) for p in entries[-1])
        if not entries or (_opens_entry(paragraph) and not heading_run):
            entries.append([paragraph])
        else:
            entries[-1].append(paragraph)
    return entries


@lru_cache(maxsize=8192)
def faq_entries(text: str) -> tuple[EntryTerms, ...]:
    """The entries of an FAQ chunk, or () when it holds fewer than `MIN_QUESTIONS` questions
    or a single entry (cached: a chunk's text never changes)."""
    entries = split_entries(text)
    questions = sum(1 for entry in entries for p in entry if p.strip().endswith("?"))
    if len(entries) < 2 or questions < MIN_QUESTIONS:
        return ()
    found = []
    for entry in entries:
        counts = Counter(analyze("\n".join(entry)))
        found.append(EntryTerms(dict(counts), sum(counts.values())))
    return tuple(found)
