"""DOCX parser: python-docx opens the package; the body XML is walked in document order.

- Headings: paragraph style "Heading N" (level N) or "Title" (level 1), or an outline level
  set on the paragraph or its style chain.
- Lists: numbering on the paragraph or its style chain; bullets are dropped, ordinals are
  rendered from numbering.xml ("1.", "a)", "2.1.") and counted per list and level.
- Tables: one TABLE span per table, a row per line, cells joined by " | " (nested tables and
  multi-paragraph cells flattened into their cell; empty rows dropped).
- Also kept: text boxes (after their anchor paragraph), footnotes and endnotes (right after
  the paragraph that references them), content controls, hyperlinks, simple fields.
  Dropped: page headers and footers, comments, deleted revisions, hidden (vanish) runs and
  the VML fallback copies of drawings.
- ISO 29500 Strict packages are rewritten to transitional namespaces before opening.
- Encrypted DOCX files (an OLE2 container holding an EncryptedPackage) fail with
  PARSE_ENCRYPTED; any other OLE2 file (legacy binary Word) with PARSE_UNSUPPORTED_FORMAT.
"""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import docx
from docx.oxml.parser import parse_xml

from kb_retrieval.models import IngestReason, SpanKind
from kb_retrieval.parsing.errors import ParseError
from kb_retrieval.parsing.normalize import SpanCollector

OLE2_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
MAX_UNCOMPRESSED_BYTES = 512 * 1024 * 1024
_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_MC_FALLBACK = "{http://schemas.openxmlformats.org/markup-compatibility/2006}Fallback"
_STRICT = re.compile(
    rb"http://purl\.oclc\.org/ooxml/(officeDocument|drawingml|wordprocessingml)/(\w+)"
)
_STRICT_RENAMES = {
    b"extendedProperties": b"extended-properties",
    b"customProperties": b"custom-properties",
}
_SKIPPED = frozenset(
    {_W + "del", _W + "moveFrom", _W + "rPr", _W + "pPr", _W + "instrText", _MC_FALLBACK}
)
_CONTAINERS = frozenset(
    {_W + "sdt", _W + "sdtContent", _W + "customXml", _W + "ins", _W + "moveTo"}
)
_HEADING_STYLE = re.compile(r"^heading\s*([1-9])$")


def _w(element: Any, name: str) -> str | None:
    return element.get(_W + name)


def _strict_to_transitional(archive: zipfile.ZipFile) -> bytes:
    def rename(match: re.Match[bytes]) -> bytes:
        family, name = match.groups()
        return b"http://schemas.openxmlformats.org/%s/2006/%s" % (
            family,
            _STRICT_RENAMES.get(name, name),
        )

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as target:
        for info in archive.infolist():
            content = archive.read(info)
            if info.filename.endswith((".xml", ".rels")):
                content = _STRICT.sub(rename, content)
            target.writestr(info.filename, content)
    return buffer.getvalue()


def _open(data: bytes, path: Path) -> Any:
    if data.startswith(OLE2_MAGIC):
        if "EncryptedPackage".encode("utf-16-le") in data:
            raise ParseError.for_file(
                IngestReason.PARSE_ENCRYPTED, path, "password-protected Word document"
            )
        raise ParseError.for_file(
            IngestReason.PARSE_UNSUPPORTED_FORMAT,
            path,
            "legacy binary Word (OLE2) file, not OOXML; save it as .docx",
        )
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile as exc:
        raise ParseError.for_file(
            IngestReason.PARSE_CORRUPT_FILE, path, f"not a DOCX (zip) package: {exc}"
        ) from exc
    if sum(info.file_size for info in archive.infolist()) > MAX_UNCOMPRESSED_BYTES:
        raise ParseError.for_file(
            IngestReason.PARSE_TOO_LARGE, path, "DOCX package expands beyond 512 MB"
        )
    names = set(archive.namelist())
    if "_rels/.rels" in names and b"purl.oclc.org/ooxml" in archive.read("_rels/.rels"):
        data = _strict_to_transitional(archive)
    try:
        return docx.Document(io.BytesIO(data))
    except Exception as exc:
        if isinstance(exc, MemoryError):
            raise
        raise ParseError.for_file(
            IngestReason.PARSE_CORRUPT_FILE, path, f"unreadable DOCX ({type(exc).__name__}: {exc})"
        ) from exc


def _part_xml(document: Any, reltype_suffix: str) -> Any | None:
    for rel in document.part.rels.values():
        if rel.is_external or not rel.reltype.endswith(reltype_suffix):
            continue
        part = rel.target_part
        element = getattr(part, "element", None)
        return element if element is not None else parse_xml(part.blob)
    return None


class _Styles:
    """Heading level and numbering of each paragraph style, following `basedOn` chains."""

    def __init__(self, root: Any | None) -> None:
        self.raw: dict[str, Any] = {}
        if root is not None:
            for style in root.iter(_W + "style"):
                style_id = _w(style, "styleId")
                if style_id and style_id not in self.raw:
                    self.raw[style_id] = style

    def chain(self, style_id: str | None) -> Iterator[Any]:
        seen: set[str] = set()
        while style_id and style_id in self.raw and style_id not in seen and len(seen) < 32:
            seen.add(style_id)
            style = self.raw[style_id]
            yield style
            based = style.find(_W + "basedOn")
            style_id = _w(based, "val") if based is not None else None

    def heading_level(self, style_id: str | None) -> int | None:
        for style in self.chain(style_id):
            name_el = style.find(_W + "name")
            name = (_w(name_el, "val") or "").strip().lower() if name_el is not None else ""
            match = _HEADING_STYLE.match(name)
            if match:
                return int(match.group(1))
            if name == "title":
                return 1
            outline = style.find(f"{_W}pPr/{_W}outlineLvl")
            if outline is not None:
                return _outline_level(outline)
        return None

    def numbering(self, style_id: str | None) -> Any | None:
        for style in self.chain(style_id):
            num_pr = style.find(f"{_W}pPr/{_W}numPr")
            if num_pr is not None:
                return num_pr
        return None


def _outline_level(element: Any) -> int | None:
    value = _w(element, "val") or ""
    return int(value) + 1 if value.isdigit() and int(value) < 9 else None


def _format_number(value: int, fmt: str) -> str:
    if fmt in ("lowerLetter", "upperLetter") and value > 0:
        letter = chr(ord("a") + (value - 1) % 26) * ((value - 1) // 26 + 1)
        return letter.upper() if fmt == "upperLetter" else letter
    if fmt in ("lowerRoman", "upperRoman") and 0 < value < 4000:
        numerals = ((1000, "m"), (900, "cm"), (500, "d"), (400, "cd"), (100, "c"), (90, "xc"))
        numerals += ((50, "l"), (40, "xl"), (10, "x"), (9, "ix"), (5, "v"), (4, "iv"), (1, "i"))
        roman = ""
        for amount, numeral in numerals:
            count, value = divmod(value, amount)
            roman += numeral * count
        return roman.upper() if fmt == "upperRoman" else roman
    return str(value)


class _Numbering:
    """List markers from numbering.xml, with per-list counters (bullets render as '')."""

    def __init__(self, root: Any | None) -> None:
        self.levels: dict[str, dict[int, tuple[str, int, str]]] = {}
        self.counters: dict[str, list[int]] = {}
        if root is None:
            return
        abstract: dict[str, dict[int, tuple[str, int, str]]] = {}
        for node in root.iter(_W + "abstractNum"):
            levels: dict[int, tuple[str, int, str]] = {}
            for lvl in node.iter(_W + "lvl"):
                fmt_el, start_el, text_el = (
                    lvl.find(_W + tag) for tag in ("numFmt", "start", "lvlText")
                )
                start = _w(start_el, "val") if start_el is not None else "1"
                levels[int(_w(lvl, "ilvl") or 0)] = (
                    (_w(fmt_el, "val") or "decimal") if fmt_el is not None else "decimal",
                    int(start) if start and start.isdigit() else 1,
                    (_w(text_el, "val") or "") if text_el is not None else "",
                )
            abstract[_w(node, "abstractNumId") or ""] = levels
        for num in root.iter(_W + "num"):
            ref = num.find(_W + "abstractNumId")
            if ref is not None:
                self.levels[_w(num, "numId") or ""] = abstract.get(_w(ref, "val") or "", {})

    def marker(self, num_id: str, ilvl: int) -> str:
        levels = self.levels.get(num_id, {})
        fmt, _, template = levels.get(ilvl, ("bullet", 1, ""))
        counters = self.counters.setdefault(num_id, [0] * 9)
        if fmt in ("bullet", "none"):
            return ""
        ilvl = max(0, min(ilvl, 8))
        counters[ilvl] = counters[ilvl] + 1 if counters[ilvl] else levels.get(ilvl, ("", 1, ""))[1]
        for deeper in range(ilvl + 1, 9):
            counters[deeper] = 0

        def render(match: re.Match[str]) -> str:
            level = int(match.group(1)) - 1
            level_fmt, level_start, _ = levels.get(level, ("decimal", 1, ""))
            return _format_number(counters[level] or level_start, level_fmt)

        return re.sub(r"%([1-9])", render, template or f"%{ilvl + 1}.").strip()


def _hidden(run: Any) -> bool:
    vanish = run.find(f"{_W}rPr/{_W}vanish")
    return vanish is not None and (_w(vanish, "val") or "true") not in ("0", "false", "off")


class _Walker:
    """Turns body XML into spans, in document order."""

    def __init__(self, document: Any, out: SpanCollector) -> None:
        self.out = out
        self.styles = _Styles(_part_xml(document, "/styles"))
        self.numbering = _Numbering(_part_xml(document, "/numbering"))
        self.notes: dict[tuple[str, str], Any] = {}
        for kind in ("footnote", "endnote"):
            root = _part_xml(document, f"/{kind}s")
            for note in root.iterchildren(_W + kind) if root is not None else ():
                self.notes.setdefault((kind, _w(note, "id") or ""), note)
        self.emitted_notes: set[tuple[str, str]] = set()

    def blocks(self, parent: Any) -> None:
        for child in parent.iterchildren():
            if child.tag == _W + "p":
                self.paragraph(child)
            elif child.tag == _W + "tbl":
                self.table(child)
            elif child.tag in _CONTAINERS:
                self.blocks(child)

    def inline(self, paragraph: Any) -> tuple[str, list[Any], list[tuple[str, str]]]:
        """Visible text of a paragraph, plus its text boxes and note references."""
        parts: list[str] = []
        boxes: list[Any] = []
        refs: list[tuple[str, str]] = []
        stack = [paragraph.iterchildren()]
        while stack:
            element = next(stack[-1], None)
            if element is None:
                stack.pop()
                continue
            tag = element.tag
            if not isinstance(tag, str) or tag in _SKIPPED:
                continue
            if tag == _W + "t":
                parts.append(element.text or "")
            elif tag == _W + "tab":
                parts.append("\t")
            elif tag in (_W + "br", _W + "cr"):
                parts.append("\n")
            elif tag == _W + "noBreakHyphen":
                parts.append("-")
            elif tag == _W + "txbxContent":
                boxes.append(element)
            elif tag in (_W + "footnoteReference", _W + "endnoteReference"):
                refs.append((tag[len(_W) : -len("Reference")], _w(element, "id") or ""))
            elif not (tag == _W + "r" and _hidden(element)):
                stack.append(element.iterchildren())
        return "".join(parts), boxes, refs

    def paragraph(self, paragraph: Any) -> None:
        text, boxes, refs = self.inline(paragraph)
        style = paragraph.find(f"{_W}pPr/{_W}pStyle")
        style_id = _w(style, "val") if style is not None else None
        outline = paragraph.find(f"{_W}pPr/{_W}outlineLvl")
        level = _outline_level(outline) if outline is not None else None
        level = level or self.styles.heading_level(style_id)
        num_pr = paragraph.find(f"{_W}pPr/{_W}numPr")
        num_pr = num_pr if num_pr is not None else self.styles.numbering(style_id)
        marker = ""
        if num_pr is not None and text.strip():
            num_id, ilvl = num_pr.find(_W + "numId"), num_pr.find(_W + "ilvl")
            num_value = _w(num_id, "val") if num_id is not None else None
            ilvl_value = _w(ilvl, "val") if ilvl is not None else "0"
            if num_value and num_value != "0":
                level_index = int(ilvl_value) if ilvl_value and ilvl_value.isdigit() else 0
                marker = self.numbering.marker(num_value, level_index)
            else:
                num_pr = None
        labelled = f"{marker} {text}" if marker else text
        if level is not None:
            self.out.heading(labelled, level)
        elif num_pr is not None:
            self.out.block(labelled, SpanKind.LIST_ITEM, keep_lines=True)
        else:
            self.out.block(text, keep_lines=True)
        for box in boxes:
            self.blocks(box)
        for ref in refs:
            if ref in self.notes and ref not in self.emitted_notes:
                self.emitted_notes.add(ref)
                self.blocks(self.notes[ref])

    def table(self, table: Any) -> None:
        rows: list[str] = []
        for row in table.iter(_W + "tr"):
            if next(row.iterancestors(_W + "tbl")) is not table:
                continue
            cells = [self.cell_text(cell) for cell in row.iter(_W + "tc") if self._owned(cell, row)]
            if any(cells):
                rows.append(" | ".join(cells))
        self.out.block("\n".join(rows), SpanKind.TABLE, keep_lines=True)

    @staticmethod
    def _owned(cell: Any, row: Any) -> bool:
        return next(cell.iterancestors(_W + "tr")) is row

    def cell_text(self, cell: Any) -> str:
        texts = []
        for paragraph in cell.iter(_W + "p"):
            if next(paragraph.iterancestors(_MC_FALLBACK), None) is None:
                texts.append(" ".join(self.inline(paragraph)[0].split()))
        return " ".join(text for text in texts if text)


def parse_docx(data: bytes, path: Path) -> SpanCollector:
    """Parse a DOCX file (see the module docstring)."""
    document = _open(data, path)
    out = SpanCollector()
    _Walker(document, out).blocks(document.element.body)
    return out
