"""A guest message that mixes another language into English is read with that language's booking
words in English ("how big is the depositum" -> "how big is the deposit").

The knowledge bases, the analyzer and the embedder are English; a question whose key words are
German or Norwegian shares none of them with the chunk that answers it. A language is read only
when a message holds at least `MIN_MARKERS` distinct marker words of it, so an English message is
returned unchanged, byte for byte.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

from kb_retrieval.query.vocabularies import LANGUAGES, MIN_MARKERS, MONTHS_EN

_WORD_RE = re.compile(r"[^\W\d_]+")
_LETTER_FOLDS = str.maketrans({"ø": "o", "æ": "ae", "œ": "oe", "ł": "l", "đ": "d"})
_ORDINAL_DAY = re.compile(r"\b(\d{1,2})\.\s*(?=(?:" + "|".join(MONTHS_EN) + r")\b)", re.IGNORECASE)


@dataclass(frozen=True)
class Language:
    """One language: its marker words and its entries (folded word sequence -> English)."""

    code: str
    markers: frozenset[str]
    entries: Mapping[tuple[str, ...], str]


@dataclass(frozen=True)
class Reading:
    """The entries of the detected languages merged (the most present language first wins),
    and the longest entry in words."""

    entries: Mapping[tuple[str, ...], str]
    longest: int


@lru_cache(maxsize=65536)
def fold(word: str) -> str:
    """Case and accents off ("Grüße" -> "grusse", "Før" -> "for"), as the vocabulary is written."""
    decomposed = unicodedata.normalize("NFKD", word.casefold().translate(_LETTER_FOLDS))
    return "".join(char for char in decomposed if not unicodedata.combining(char))


def parse_entries(spec: str) -> dict[tuple[str, ...], str]:
    """Lines "english: foreign foreign+phrase | ..." (a line starting "|" continues the last)."""
    lines: list[str] = []
    for raw in spec.strip().splitlines():
        line = raw.strip()
        if line.startswith("|") and lines:
            lines[-1] += " " + line
        elif line:
            lines.append(line)
    entries: dict[tuple[str, ...], str] = {}
    for line in lines:
        english, sep, foreign = line.partition(":")
        if not sep:
            raise ValueError(f"vocabulary line without ':': {line!r}")
        for item in foreign.replace("|", " ").split():
            key = tuple(fold(part) for part in item.split("+"))
            entries.setdefault(key, english.strip())
    return entries


@lru_cache(maxsize=1)
def languages() -> tuple[Language, ...]:
    """The vocabulary of `vocabularies.LANGUAGES`, parsed once."""
    parsed = []
    for code, spec in LANGUAGES.items():
        entries = parse_entries(spec["phrases"])
        for key, english in parse_entries(spec["words"]).items():
            entries.setdefault(key, english)
        for month, english in zip(spec["months"].split(), MONTHS_EN, strict=True):
            entries.setdefault((fold(month),), english)
        markers = frozenset(fold(word) for word in spec["markers"].split())
        parsed.append(Language(code, markers, entries))
    return tuple(parsed)


def detect_languages(text: str) -> tuple[str, ...]:
    """Codes of the languages with at least MIN_MARKERS distinct marker words, most first."""
    return _detect({fold(match.group()) for match in _WORD_RE.finditer(text)})


def _detect(present: set[str]) -> tuple[str, ...]:
    counts = [(len(lang.markers & present), lang.code) for lang in languages()]
    found = sorted((-count, code) for count, code in counts if count >= MIN_MARKERS)
    return tuple(code for _, code in found)


@lru_cache(maxsize=64)
def _reading(codes: tuple[str, ...]) -> Reading:
    """The merged entries of `codes` (built once per combination of detected languages)."""
    by_code = {lang.code: lang for lang in languages()}
    entries: dict[tuple[str, ...], str] = {}
    for code in codes:
        for key, english in by_code[code].entries.items():
            entries.setdefault(key, english)
    return Reading(entries, max(len(key) for key in entries))


def read_as_english(text: str) -> str:
    """`text` with the booking words of every detected language in English (longest phrase
    first; whitespace and punctuation kept). Unchanged when no language is detected."""
    words = list(_WORD_RE.finditer(text))
    folded = [fold(word.group()) for word in words]
    codes = _detect(set(folded))
    if not codes:
        return text
    reading = _reading(codes)
    parts: list[str] = []
    position = index = 0
    while index < len(words):
        span = _longest_entry(text, words, folded, index, reading)
        if span is None:
            index += 1
            continue
        length, english = span
        parts.append(text[position : words[index].start()])
        parts.append(english)
        position = words[index + length - 1].end()
        index += length
    parts.append(text[position:])
    return _ORDINAL_DAY.sub(r"\1 ", "".join(parts))


def _longest_entry(
    text: str,
    words: list[re.Match[str]],
    folded: list[str],
    index: int,
    reading: Reading,
) -> tuple[int, str] | None:
    """The longest entry starting at words[index] whose words are separated by spaces only."""
    for length in range(min(reading.longest, len(words) - index), 0, -1):
        english = reading.entries.get(tuple(folded[index : index + length]))
        if english is None:
            continue
        run = words[index : index + length]
        if not any(text[a.end() : b.start()].strip() for a, b in itertools.pairwise(run)):
            return length, english
    return None
