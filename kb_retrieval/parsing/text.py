"""Plain text and Markdown parsers, byte decoding, and the heading heuristic for plain lines.

Plain text: blocks are separated by blank lines; a line underlined with === (level 1) or
--- (level 2) is a heading, and so is a block of one line that passes `guess_heading_level`;
lines starting with a bullet or an ordinal ("1.", "a)") are list items; the wrapped lines
of any other block are joined into one paragraph.

Markdown (CommonMark subset): ATX (`# Title`) and setext (`===`/`---`) headings with their
markers removed, bulleted and ordered list items (bullets dropped, ordinals kept), pipe
tables (rows as `a | b`), fenced code kept line by line, block quotes unwrapped, YAML front
matter skipped, link/image/emphasis/code markup reduced to its text.
"""

from __future__ import annotations

import codecs
import re
from pathlib import Path

from kb_retrieval.models import IngestReason, SpanKind
from kb_retrieval.parsing.errors import ParseError
from kb_retrieval.parsing.normalize import SpanCollector, join_wrapped_lines

_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
_SMALL_WORDS = frozenset(
    {"a", "an", "and", "as", "at", "but", "by", "de", "for", "from", "in", "into", "nor"}
    | {"of", "on", "or", "per", "the", "to", "vs", "via", "with", "&", "-"}
)
HEADING_NUMBER = re.compile(r"^(\d{1,2}(?:\.\d{1,2}){0,3})(\.?)\s+(\S.*)$")
_TERMINAL = tuple(".,;:!?")
_BULLET = re.compile(r"^\s*[-*+\u2022\u25e6\u25aa\u25cf\u2023\u2043\u2013\u2014]\s+(.*)$")
_UNDERLINE = re.compile(r"^\s*(={3,}|-{3,})\s*$")
_ORDINAL = re.compile(
    r"^\s*((?:\d{1,3}|[a-z]|[ivx]{1,5})[.)]|\((?:\d{1,3}|[a-z]|[ivx]{1,5})\))\s+(.*)$"
)


def decode_bytes(data: bytes, path: Path, declared: str | None = None) -> tuple[str, list[str]]:
    """Decode text bytes: BOM, then the declared charset, then UTF-8, then cp1252 (warned)."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            return data.decode(encoding, errors="replace"), []
    if declared:
        try:
            return data.decode(codecs.lookup(declared).name), []
        except (LookupError, UnicodeDecodeError):
            pass
    try:
        return data.decode("utf-8"), []
    except UnicodeDecodeError:
        pass
    if b"\x00" in data:
        raise ParseError.for_file(
            IngestReason.PARSE_CORRUPT_FILE, path, "binary content, not a text file"
        )
    warning = "not valid UTF-8; decoded as Windows-1252"
    return data.decode("cp1252", errors="replace"), [warning]


def guess_heading_level(line: str) -> int | None:
    """Heading level of a standalone plain line, or None (a cheap, conservative heuristic).

    - numbered: "3. Cancellations and Refunds" or "3.2 Refund Window" (a dotted number or a
      number with a trailing dot, then a capitalised title of at most 10 words not ending in
      a digit) -> level = depth of the number;
    - all capitals: at least 4 cased letters, all upper case, at most 10 words -> level 1;
    - title case: 2 to 8 words (two of them with 3+ characters), at most 60 characters, no
      comma or semicolon, every word except small words ("and", "of", ...) capitalised, not
      ending in a digit -> level 1.
    Lines longer than 80 characters or ending in . , ; : ! ? are never headings.
    """
    line = " ".join(line.split())
    if not line or len(line) > 80 or line.endswith(_TERMINAL):
        return None
    letters = [char for char in line if char.isalpha()]
    if len(letters) < 3 or len(letters) < 0.5 * len(line.replace(" ", "")):
        return None
    numbered = HEADING_NUMBER.match(line)
    if numbered:
        number, dot, rest = numbered.groups()
        words = rest.split()
        accepted = (dot or "." in number) and rest[0].isupper() and len(words) <= 10
        if accepted and not rest[-1].isdigit() and any(len(word) >= 3 for word in words):
            return min(number.count(".") + 1, 6)
        return None
    words = line.split()
    cased = [char for char in letters if char.isupper() or char.islower()]
    if len(cased) >= 4 and all(char.isupper() for char in cased) and len(words) <= 10:
        return 1
    if not 2 <= len(words) <= 8 or len(line) > 60 or line[-1].isdigit():
        return None
    if "," in line or ";" in line or sum(len(word) >= 3 for word in words) < 2:
        return None
    if not words[0][0].isupper():
        return None
    for word in words[1:]:
        first = next((char for char in word if char.isalpha()), "")
        if first and first.islower() and word.lower() not in _SMALL_WORDS:
            return None
    return 1


def list_item_text(line: str) -> str | None:
    """The text of a list-item line (bullet dropped, ordinal kept), or None."""
    bullet = _BULLET.match(line)
    if bullet:
        return bullet.group(1)
    ordinal = _ORDINAL.match(line)
    if ordinal:
        return f"{ordinal.group(1)} {ordinal.group(2)}"
    return None


def _emit_plain_block(out: SpanCollector, lines: list[str]) -> None:
    underline = _UNDERLINE.match(lines[1]) if len(lines) >= 2 else None
    if underline and len(lines[0].strip()) <= 100:
        out.heading(lines[0], 1 if underline.group(1)[0] == "=" else 2)
        if len(lines) > 2:
            _emit_plain_block(out, lines[2:])
        return
    if len(lines) == 1:
        level = guess_heading_level(lines[0])
        if level is not None:
            out.heading(lines[0], level)
            return
    items: list[list[str]] = []
    prose: list[str] = []
    for line in lines:
        item = list_item_text(line)
        if item is not None:
            if prose:
                out.block(join_wrapped_lines(prose))
                prose = []
            items.append([item])
        elif items:
            items[-1].append(line)
        else:
            prose.append(line)
    out.block(join_wrapped_lines(prose))
    for item_lines in items:
        out.block(join_wrapped_lines(item_lines), SpanKind.LIST_ITEM)


def parse_txt(data: bytes, path: Path) -> SpanCollector:
    """Parse a plain text file (see the module docstring)."""
    text, warnings = decode_bytes(data, path)
    out = SpanCollector()
    out.warnings.extend(warnings)
    block: list[str] = []
    for line in [*text.splitlines(), ""]:
        if line.strip():
            block.append(line)
        elif block:
            _emit_plain_block(out, block)
            block = []
    return out


_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_THEMATIC = re.compile(r"^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_MD_ITEM = re.compile(r"^ *(?:[-*+]|(\d{1,9})[.)])[ \t]+(.*)$")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")
_LINK_DEF = re.compile(r"^ {0,3}\[[^\]]+\]:\s+\S+")
_INLINE_RULES = (
    (re.compile(r"!\[([^\]]*)\]\([^)]*\)"), r"\1"),
    (re.compile(r"\[([^\]]+)\]\([^)]*\)"), r"\1"),
    (re.compile(r"\[([^\]]+)\]\[[^\]]*\]"), r"\1"),
    (re.compile(r"<(https?://[^>\s]+|mailto:[^>\s]+)>"), r"\1"),
    (re.compile(r"</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>"), ""),
    (re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1"), r"\2"),
    (re.compile(r"(?<![\w*])\*(?=[^\s*])([^*]+?)(?<=[^\s*])\*(?![\w*])"), r"\1"),
    (re.compile(r"(?<![\w_])_(?=[^\s_])([^_]+?)(?<=[^\s_])_(?![\w_])"), r"\1"),
    (re.compile(r"`+([^`]+?)`+"), r"\1"),
    (re.compile(r"\\([\\`*_{}\[\]()#+\-.!|>~])"), r"\1"),
)


def markdown_inline(text: str) -> str:
    """Reduce inline Markdown markup (links, images, emphasis, code, tags) to its text."""
    for pattern, replacement in _INLINE_RULES:
        text = pattern.sub(replacement, text)
    return text


class _MarkdownState:
    def __init__(self) -> None:
        self.out = SpanCollector()
        self.para: list[str] = []
        self.item: list[str] | None = None
        self.table: list[str] = []

    def flush(self) -> None:
        if self.para:
            self.out.block(markdown_inline(join_wrapped_lines(self.para)))
        if self.item is not None:
            self.out.block(markdown_inline(join_wrapped_lines(self.item)), SpanKind.LIST_ITEM)
        if self.table:
            rows = [row.strip().strip("|").split("|") for row in self.table]
            text = "\n".join(" | ".join(cell.strip() for cell in row) for row in rows)
            self.out.block(markdown_inline(text), SpanKind.TABLE, keep_lines=True)
        self.para, self.item, self.table = [], None, []


def _skip_front_matter(lines: list[str]) -> list[str]:
    if lines and lines[0].strip() == "---":
        for index, line in enumerate(lines[1:60], start=1):
            if line.strip() in ("---", "..."):
                return lines[index + 1 :]
    return lines


def _markdown_line(state: _MarkdownState, line: str) -> None:
    stripped = line.strip()
    if not stripped or _LINK_DEF.match(line):
        state.flush()
        return
    setext = _SETEXT.match(line)
    if setext and state.para and state.item is None:
        text = join_wrapped_lines(state.para)
        state.para = []
        state.out.heading(markdown_inline(text), 1 if setext.group(1)[0] == "=" else 2)
        return
    atx = _ATX.match(line)
    if atx or _THEMATIC.match(line):
        state.flush()
        if atx:
            state.out.heading(markdown_inline(atx.group(2) or ""), len(atx.group(1)))
        return
    if stripped.startswith("|") or (state.table and "|" in stripped):
        if not state.table:
            state.flush()
        if not _TABLE_RULE.match(stripped):
            state.table.append(stripped)
        return
    item = _MD_ITEM.match(line)
    if item:
        state.flush()
        ordinal, text = item.groups()
        state.item = [f"{ordinal}. {text}" if ordinal else text]
    elif state.item is not None:
        state.item.append(stripped)
    else:
        if state.table:
            state.flush()
        state.para.append(stripped)


def parse_markdown(data: bytes, path: Path) -> SpanCollector:
    """Parse a Markdown file (see the module docstring)."""
    text, warnings = decode_bytes(data, path)
    state = _MarkdownState()
    state.out.warnings.extend(warnings)
    fence: str | None = None
    code: list[str] = []
    for raw in _skip_front_matter(text.splitlines()):
        line = raw.expandtabs(4)
        if fence is not None:
            if line.strip().startswith(fence):
                state.out.block("\n".join(code), keep_lines=True)
                fence, code = None, []
            else:
                code.append(line)
            continue
        opening = _FENCE.match(line)
        if opening:
            state.flush()
            fence = opening.group(1)
            continue
        while line.lstrip().startswith(">"):
            line = line.lstrip()[1:]
        _markdown_line(state, line)
    state.flush()
    if code:
        state.out.block("\n".join(code), keep_lines=True)
    return state.out
