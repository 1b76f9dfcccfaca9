"""Canonical, deterministic text normalisation shared by every parser.

`normalize_text` (a block that keeps its lines) does, in this order:
1. line breaks: CRLF, CR, U+2028/U+2029, VT, FF and NEL become LF;
2. a soft hyphen (U+00AD) at the end of a line joins the line with the next one;
3. control characters are removed: C0/C1 controls (tab becomes a space), soft hyphens,
   zero-width space, BOM, word joiners, bidirectional marks and embeddings (the text of
   right-to-left scripts stays in logical order), private-use glyphs (the Symbol/Wingdings
   bullets U+F0A7/U+F0B7/U+F0FC become U+2022), surrogates and non-characters; ZWJ/ZWNJ stay;
4. Unicode NFKC (ligatures, full-width forms, compatibility spaces);
5. per line: runs of whitespace become one space, lines are stripped;
6. runs of blank lines become one blank line; leading and trailing blank lines go.
The result is idempotent: normalising it again changes nothing.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable

from kb_retrieval.models import Span, SpanKind

_NEWLINES = re.compile(r"\r\n|[\r\u2028\u2029\x0b\x0c\x85]")
_SOFT_HYPHEN_EOL = re.compile(r"\u00ad[ \t]*\n[ \t]*")
_BLANK_RUNS = re.compile(r"\n{3,}")
_PRIVATE_BULLETS = {"\uf0a7": "\u2022", "\uf0b7": "\u2022", "\uf0fc": "\u2022"}
_DROPPED_FORMAT = frozenset(
    "\u00ad\u061c\u180e\u200b\u200e\u200f\u202a\u202b\u202c\u202d\u202e"
    "\u2060\u2061\u2062\u2063\u2064\u2066\u2067\u2068\u2069\ufeff"
)
_HYPHENS = ("-", "\u2010")
_SUSPECT = re.compile(r"[^\n\x20-\x7e]")
_ASCII_CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f]")
_BREAK_CHARS = "\r\u2028\u2029\x0b\x0c\x85"


@functools.cache
def _clean_char(char: str) -> str:
    if char == "\t":
        return " "
    if char in _PRIVATE_BULLETS:
        return _PRIVATE_BULLETS[char]
    if char in _DROPPED_FORMAT:
        return ""
    category = unicodedata.category(char)
    if category in ("Cc", "Co", "Cs", "Cn"):
        return ""
    return char


def strip_controls(text: str) -> str:
    """Remove control, invisible-format and private-use characters (steps 1-3)."""
    if any(char in text for char in _BREAK_CHARS):
        text = _NEWLINES.sub("\n", text)
    if "\u00ad" in text:
        text = _SOFT_HYPHEN_EOL.sub("", text)
    if text.isascii():
        if _ASCII_CONTROL.search(text) is None:
            return text
        return _ASCII_CONTROL.sub(lambda match: _clean_char(match.group()), text)
    return _SUSPECT.sub(lambda match: _clean_char(match.group()), text)


def normalize_text(text: str) -> str:
    """Normalise a block of text, keeping its line structure (see the module docstring)."""
    text = unicodedata.normalize("NFKC", strip_controls(text))
    text = "\n".join(" ".join(line.split()) for line in text.split("\n"))
    if "\n\n\n" in text:
        text = _BLANK_RUNS.sub("\n\n", text)
    return text.strip("\n")


def normalize_inline(text: str) -> str:
    """Normalise text to one line: as `normalize_text`, then every line break is a space."""
    return " ".join(normalize_text(text).split())


def join_wrapped_lines(lines: Iterable[str]) -> str:
    """Join the visual lines of one paragraph into a single line.

    A line ending in a hyphen right after a lower-case letter, followed by a line starting
    with a lower-case letter, is de-hyphenated ("cancel-" + "lation" -> "cancellation");
    every other line break becomes one space.
    """
    joined = ""
    for raw in lines:
        line = raw.strip()
        if not line:
            continue
        if (
            joined.endswith(_HYPHENS)
            and len(joined) >= 2
            and joined[-2].islower()
            and line[0].islower()
        ):
            joined = joined[:-1] + line
        elif joined:
            joined = f"{joined} {line}"
        else:
            joined = line
    return joined


class SpanCollector:
    """Collects normalised spans in order (plus warnings and page count) for one document.

    A heading span carries its own text as `section_title`; every other span carries the
    text of the nearest preceding heading (None before the first one). Spans whose text is
    empty after normalisation are dropped, and no span contains a blank line.
    """

    def __init__(self) -> None:
        self.spans: list[Span] = []
        self.section: str | None = None
        self.warnings: list[str] = []
        self.page_count: int | None = None

    def heading(self, text: str, level: int, page: int | None = None) -> None:
        """Add a heading span and make it the current section."""
        title = normalize_inline(text)
        if not title:
            return
        self.section = title
        self.spans.append(Span(title, SpanKind.HEADING, page, title, max(1, min(level, 6))))

    def block(
        self,
        text: str,
        kind: SpanKind = SpanKind.PARAGRAPH,
        page: int | None = None,
        keep_lines: bool = False,
    ) -> None:
        """Add a non-heading span; `keep_lines` keeps its line breaks (tables, <br>, code)."""
        if keep_lines:
            body = "\n".join(line for line in normalize_text(text).split("\n") if line)
        else:
            body = normalize_inline(text)
        if body:
            self.spans.append(Span(body, kind, page, self.section, None))
