"""Digital PDF parser (pypdf): text per page, 1-based page numbers on every span.

Decisions:
- Encrypted PDFs are first tried with the empty password. When that succeeds (the usual
  "owner password only" case: any viewer opens the file without asking) the document is
  parsed and a warning recorded; otherwise it fails with PARSE_ENCRYPTED. A file without
  `startxref` gets one appended so that pypdf rebuilds the cross-reference table (warned).
- No text layer: when no page yields any letter or digit, or when every page is either
  empty or an image page with fewer than MIN_PAGE_CHARS letters/digits (a scan with a stray
  label), the document ends needs_attention with PARSE_EMPTY_TEXT_SCAN_DETECTED; a file
  without text or images whose page content streams do not decode is PARSE_CORRUPT_FILE. Individual
  pages without text in an otherwise digital PDF are only listed in the warnings.
- Structure, per page: blank lines and headings end paragraphs; a line ending in . ! ? or :
  that is shorter than 70 % of the page's median line ends its paragraph too; wrapped lines
  are joined and de-hyphenated. A line is a heading when `guess_heading_level` accepts it,
  the previous line closed a sentence (or the page/paragraph just began) and the next line
  does not start in lower case; an unnumbered heading must also be shorter than 60 % of
  the page's median line (pages of 5+ lines), which keeps wrapped lines of narrow columns
  out. Bullet lines and "1." / "a)" lines start list items, which end at a line closing a
  sentence.
- Page furniture: among the first and last two lines of each page, bare page numbers
  ("7", "Page 3 of 10") and running headers/footers (the same line, digits ignored, at the
  edges of at least half of the pages of a 3+ page document) are dropped (counted in the
  warnings).
"""

from __future__ import annotations

import io
import re
import statistics
from collections import Counter
from pathlib import Path
from typing import Any

from pypdf import PasswordType, PdfReader
from pypdf.errors import FileNotDecryptedError

from kb_retrieval.models import IngestReason, SpanKind
from kb_retrieval.parsing.errors import ParseError
from kb_retrieval.parsing.normalize import SpanCollector, join_wrapped_lines, normalize_text
from kb_retrieval.parsing.text import HEADING_NUMBER, guess_heading_level, list_item_text

MIN_PAGE_CHARS = 16
_EDGE_LINES = 2
_PAGE_NUMBER = re.compile(
    r"^[-\u2013\u2014 ]*(page\s*)?\d{1,4}(\s*(/|of)\s*\d{1,4})?[-\u2013\u2014 ]*$", re.I
)
_SENTENCE_END = tuple(".!?:;")
_DO = re.compile(rb"/([^\s/\[\]()<>{}%]+)\s*Do\b")
_INLINE_IMAGE = re.compile(rb"(?:^|\s)BI\s.{0,2048}?\sID\s", re.S)


def _open(data: bytes, path: Path, out: SpanCollector) -> PdfReader:
    if b"%PDF-" not in data[:1024]:
        raise ParseError.for_file(
            IngestReason.PARSE_CORRUPT_FILE, path, "not a PDF (no %PDF header)"
        )
    if b"startxref" not in data[-4096:]:
        data = data + b"\nstartxref\n0\n%%EOF\n"
        out.warnings.append("no startxref: cross-reference table rebuilt by scanning the file")
    reader = PdfReader(io.BytesIO(data), strict=False)
    if reader.is_encrypted:
        try:
            result = reader.decrypt("")
        except MemoryError:
            raise
        except Exception as exc:
            detail = f"encrypted PDF that cannot be decrypted ({type(exc).__name__}: {exc})"
            raise ParseError.for_file(IngestReason.PARSE_ENCRYPTED, path, detail) from exc
        if result == PasswordType.NOT_DECRYPTED:
            raise ParseError.for_file(
                IngestReason.PARSE_ENCRYPTED, path, "encrypted PDF needs a password"
            )
        out.warnings.append("encrypted, but opened with the empty password")
    return reader


def _draws_image(content: bytes, resources: Any, depth: int = 0) -> bool:
    """Whether a content stream paints an image: inline, or an image XObject it invokes."""
    if _INLINE_IMAGE.search(content):
        return True
    names = set(_DO.findall(content))
    xobjects = resources.get("/XObject") if resources is not None else None
    if not names or xobjects is None:
        return False
    xobjects = xobjects.get_object()
    for name in sorted(names):
        ref = xobjects.get("/" + name.decode("latin-1"))
        xobject = ref.get_object() if ref is not None else None
        if xobject is None:
            continue
        if xobject.get("/Subtype") == "/Image":
            return True
        if xobject.get("/Subtype") == "/Form" and depth < 4:
            inner = xobject.get("/Resources")
            inner = inner.get_object() if inner is not None else resources
            if _draws_image(xobject.get_data(), inner, depth + 1):
                return True
    return False


def _has_image(page: Any) -> bool:
    """Whether the page paints an image (directly or through form XObjects)."""
    try:
        contents = page.get_contents()
        if contents is None:
            return False
        resources = page.get("/Resources")
        return _draws_image(contents.get_data(), resources.get_object() if resources else None)
    except MemoryError:
        raise
    except Exception:
        return False


def _alnum(text: str) -> int:
    return sum(char.isalnum() for char in text)


def _content_lost(page: Any) -> bool:
    """Whether the page has encoded content that decodes to nothing (a damaged stream)."""
    try:
        contents = page.get("/Contents")
        if contents is None:
            return False
        contents = contents.get_object()
        streams = [s.get_object() for s in contents] if isinstance(contents, list) else [contents]
        return any(getattr(s, "_data", b"") and not s.get_data() for s in streams)
    except MemoryError:
        raise
    except Exception:
        return True


def _extract_pages(reader: PdfReader, path: Path, out: SpanCollector) -> list[str]:
    try:
        pages = list(reader.pages)
    except FileNotDecryptedError as exc:
        raise ParseError.for_file(IngestReason.PARSE_ENCRYPTED, path, str(exc)) from exc
    if not pages:
        raise ParseError.for_file(IngestReason.PARSE_EMPTY_DOCUMENT, path, "PDF has no pages")
    texts: list[str] = []
    failed = 0
    for number, page in enumerate(pages, start=1):
        try:
            texts.append(normalize_text(page.extract_text() or ""))
        except MemoryError:
            raise
        except Exception as exc:
            failed += 1
            texts.append("")
            out.warnings.append(f"page {number}: text extraction failed ({type(exc).__name__})")
    if failed == len(pages):
        raise ParseError.for_file(
            IngestReason.PARSE_CORRUPT_FILE, path, "text extraction failed on every page"
        )
    counts = [_alnum(text) for text in texts]
    images = [
        count < MIN_PAGE_CHARS and _has_image(page)
        for count, page in zip(counts, pages, strict=True)
    ]
    scan_like = all(count == 0 or image for count, image in zip(counts, images, strict=True))
    if sum(counts) == 0 and not any(images) and any(_content_lost(page) for page in pages):
        raise ParseError.for_file(
            IngestReason.PARSE_CORRUPT_FILE,
            path,
            f"damaged PDF: page content cannot be decoded ({len(pages)} page(s), no text, no image)",
        )
    if sum(counts) == 0 or (scan_like and any(images)):
        raise ParseError.for_file(
            IngestReason.PARSE_EMPTY_TEXT_SCAN_DETECTED,
            path,
            f"{len(pages)} page(s) but no text layer (scanned or image-only PDF; OCR is not supported)",
        )
    empty = [str(number) for number, count in enumerate(counts, start=1) if count == 0]
    if empty:
        out.warnings.append(f"pages without a text layer: {', '.join(empty)}")
    return texts


def _edge_indices(lines: list[str]) -> set[int]:
    filled = [index for index, line in enumerate(lines) if line]
    return set(filled[:_EDGE_LINES] + filled[-_EDGE_LINES:])


def _edge_key(line: str) -> str:
    return re.sub(r"\d+", "#", line.casefold())


def _running_keys(pages: list[list[str]]) -> set[str]:
    """Keys of lines repeated at the page edges of >= half the pages (and >= 3 pages)."""
    if len(pages) < 3:
        return set()
    counter: Counter[str] = Counter()
    for lines in pages:
        counter.update({_edge_key(lines[index]) for index in _edge_indices(lines)})
    threshold = max(3, (len(pages) + 1) // 2)
    return {key for key, count in counter.items() if count >= threshold}


def _strip_page_furniture(pages: list[list[str]], out: SpanCollector) -> list[list[str]]:
    """Drop bare page numbers and running headers/footers from the edges of each page."""
    running = _running_keys(pages)
    stripped, dropped = [], 0
    for lines in pages:
        edges = _edge_indices(lines)
        drop = {
            index
            for index in edges
            if _PAGE_NUMBER.match(lines[index]) or _edge_key(lines[index]) in running
        }
        dropped += sum(1 for index in drop if not _PAGE_NUMBER.match(lines[index]))
        stripped.append([line for index, line in enumerate(lines) if index not in drop])
    if dropped:
        out.warnings.append(f"dropped {dropped} running header/footer line(s)")
    return stripped


class _PageBuilder:
    def __init__(self, out: SpanCollector, page: int) -> None:
        self.out, self.page = out, page
        self.lines: list[str] = []
        self.kind = SpanKind.PARAGRAPH

    def flush(self) -> None:
        self.out.block(join_wrapped_lines(self.lines), self.kind, self.page)
        self.lines, self.kind = [], SpanKind.PARAGRAPH


def _emit_page(out: SpanCollector, lines: list[str], page: int) -> None:
    body = [line for line in lines if line]
    median = statistics.median(len(line) for line in body) if body else 0.0
    short = 0.7 * median
    narrow = 0.6 * median if len(body) >= 5 else 80.0
    builder = _PageBuilder(out, page)
    closed = True
    for index, line in enumerate(lines):
        if not line:
            builder.flush()
            closed = True
            continue
        following = lines[index + 1] if index + 1 < len(lines) else ""
        level = guess_heading_level(line)
        if level is not None and len(line) > narrow and not HEADING_NUMBER.match(line):
            level = None
        if level is not None and (closed or not builder.lines) and not following[:1].islower():
            builder.flush()
            out.heading(line, level, page)
            closed = True
            continue
        item = list_item_text(line)
        if item is not None:
            builder.flush()
            builder.kind = SpanKind.LIST_ITEM
            line = item
        elif builder.kind == SpanKind.LIST_ITEM and closed:
            builder.flush()
        builder.lines.append(line)
        closed = line.endswith(_SENTENCE_END)
        if closed and len(line) < short:
            builder.flush()
    builder.flush()


def parse_pdf(data: bytes, path: Path) -> SpanCollector:
    """Parse a digital PDF (see the module docstring)."""
    out = SpanCollector()
    reader = _open(data, path, out)
    texts = _extract_pages(reader, path, out)
    out.page_count = len(texts)
    pages = _strip_page_furniture([text.split("\n") for text in texts], out)
    for number, lines in enumerate(pages, start=1):
        _emit_page(out, lines, number)
    return out
