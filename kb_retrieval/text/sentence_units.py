"""A chunk's sentences as embedding units: short lines join the next one, long ones are cut."""

from __future__ import annotations

from kb_retrieval.text.sentences import sentence_bounds

MIN_WORDS = 6
MAX_WORDS = 60
# Part of the key of stored sentence vectors (migration 0008): change it when the cut changes.
UNITS_VERSION = f"units{MIN_WORDS}-{MAX_WORDS}+v1"


def sentence_units(text: str, min_words: int = MIN_WORDS, max_words: int = MAX_WORDS) -> list[str]:
    """Sentences of `text`; a unit under `min_words` words (a heading, "Q:") is joined to the
    next, and one over `max_words` is cut into pieces of at most `max_words` words."""
    units: list[str] = []
    pending: list[str] = []
    for start, end in sentence_bounds(text):
        pending.extend(text[start:end].split())
        if len(pending) >= min_words:
            units.extend(_cut(pending, max_words))
            pending = []
    if pending:
        if units and len(pending) < min_words:
            units[-1] = " ".join([*units[-1].split(), *pending][-max_words:])
        else:
            units.extend(_cut(pending, max_words))
    return units


def _cut(words: list[str], max_words: int) -> list[str]:
    return [" ".join(words[i : i + max_words]) for i in range(0, len(words), max_words)]
