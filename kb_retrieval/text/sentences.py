"""Sentence and line boundaries of normalised text (the chunker's smallest natural cut points)."""

from __future__ import annotations

import re

_BREAK = re.compile(r"[.!?…]+[\"'”’)\]]*[ \t]+|[ \t]*\n\s*")
_WORD = re.compile(r"\S+")
_ABBREVIATIONS = frozenset(
    _WORD.findall(
        "e.g. i.e. etc. mr. mrs. ms. dr. st. no. nos. approx. vs. incl. excl. min. max. p. pp. "
        "fig. ca. jr. sr. dept. est. tel."
    )
)


def sentence_bounds(text: str) -> list[tuple[int, int]]:
    """(start, end) of the sentences and lines of text, without surrounding whitespace."""
    first, last = len(text) - len(text.lstrip()), len(text.rstrip())
    if first >= last:
        return []
    bounds: list[tuple[int, int]] = []
    start = first
    for match in _BREAK.finditer(text, first, last):
        nxt = match.end()
        if nxt >= last:
            break
        if "\n" not in match.group():
            word = text[max(first, match.start() - 12) : match.start() + 1].split()[-1].lower()
            initial = len(word) == 2 and word[0].isalpha()
            if text[nxt].islower() or word in _ABBREVIATIONS or initial:
                continue
        bounds.append((start, match.start() + len(match.group().rstrip())))
        start = nxt
    bounds.append((start, last))
    return bounds
