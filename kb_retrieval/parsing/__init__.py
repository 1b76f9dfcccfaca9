"""Document parsers of the ingestion pipeline: bytes in, normalised spans out.

`parse_file(path)` dispatches on the extension (.pdf .docx .txt .md .html .htm);
`parse_entries(entries)` turns structured policy entries into spans. Both either return a
`ParsedDocument` with at least one span or raise `ParseError` with an `IngestReason`:
needs_attention for PARSE_EMPTY_TEXT_SCAN_DETECTED (PDF pages without a text layer) and
PARSE_EMPTY_DOCUMENT (no text at all, including a 0-byte file of any type); failed for
PARSE_ENCRYPTED, PARSE_CORRUPT_FILE, PARSE_UNSUPPORTED_FORMAT (.doc and any other extension)
and PARSE_TOO_LARGE (files over MAX_FILE_BYTES). An unexpected exception inside a parser
library becomes PARSE_CORRUPT_FILE naming the file, so one bad document never stops the
others; `guard.parse_file_guarded` adds a time and memory bound in a worker process.

Spans: headings are separate HEADING spans whose `section_title` is their own text; every
other span carries the nearest preceding heading text (None before the first heading).
`page` is 1-based for PDF and None otherwise. Output is deterministic: the same bytes give
the same ParsedDocument.

PARSER_VERSION is part of the ingestion idempotency key. Bump it (parser-v2, ...) whenever
a change can alter the spans or text produced for some existing input: normalisation rules,
heading/list/table heuristics, dropped or added content, library upgrades that change
extracted text. Pure refactors, new error messages, and support for inputs that
previously failed do not need a bump.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from kb_retrieval.models import IngestReason, ParsedDocument
from kb_retrieval.parsing.docx import parse_docx
from kb_retrieval.parsing.errors import ParseError
from kb_retrieval.parsing.html import parse_html
from kb_retrieval.parsing.normalize import SpanCollector
from kb_retrieval.parsing.pdf import parse_pdf
from kb_retrieval.parsing.structured import SOURCE_LABEL, collect_entries
from kb_retrieval.parsing.text import parse_markdown, parse_txt

PARSER_VERSION = "parser-v1"
MAX_FILE_BYTES = 256 * 1024 * 1024

__all__ = ["MAX_FILE_BYTES", "PARSER_VERSION", "ParseError", "parse_entries", "parse_file"]


_PARSERS: dict[str, Callable[[bytes, Path], SpanCollector]] = {
    ".pdf": parse_pdf,
    ".docx": parse_docx,
    ".txt": parse_txt,
    ".md": parse_markdown,
    ".html": parse_html,
    ".htm": parse_html,
}


def _finish(collected: SpanCollector, source: str) -> ParsedDocument:
    if not collected.spans:
        raise ParseError(IngestReason.PARSE_EMPTY_DOCUMENT, f"{source}: document has no text")
    return ParsedDocument(
        spans=tuple(collected.spans),
        parser_version=PARSER_VERSION,
        page_count=collected.page_count,
        warnings=tuple(collected.warnings),
    )


def _read(path: Path) -> bytes:
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise ParseError.for_file(
                IngestReason.PARSE_TOO_LARGE, path, f"{size} bytes exceeds {MAX_FILE_BYTES}"
            )
        return path.read_bytes()
    except OSError as exc:
        raise ParseError.for_file(
            IngestReason.PARSE_CORRUPT_FILE, path, f"cannot read file ({exc.strerror or exc})"
        ) from exc


def parse_file(path: Path) -> ParsedDocument:
    """Parse one document file into normalised spans, or raise ParseError."""
    path = Path(path)
    parser = _PARSERS.get(path.suffix.lower())
    if parser is None:
        suffix = path.suffix.lower()
        what = "legacy binary Word (.doc) file" if suffix == ".doc" else f"file type {suffix!r}"
        if not suffix:
            what = "file without extension"
        raise ParseError.for_file(
            IngestReason.PARSE_UNSUPPORTED_FORMAT,
            path,
            f"unsupported {what}; supported: .pdf .docx .txt .md .html .htm",
        )
    data = _read(path)
    if not data:
        raise ParseError.for_file(
            IngestReason.PARSE_EMPTY_DOCUMENT, path, "file is empty (0 bytes)"
        )
    try:
        collected = parser(data, path)
    except ParseError:
        raise
    except MemoryError as exc:
        raise ParseError.for_file(IngestReason.PARSE_TOO_LARGE, path, "out of memory") from exc
    except RecursionError as exc:
        raise ParseError.for_file(
            IngestReason.PARSE_CORRUPT_FILE, path, "structure nested too deeply"
        ) from exc
    except Exception as exc:
        raise ParseError.for_file(
            IngestReason.PARSE_CORRUPT_FILE, path, f"unreadable ({type(exc).__name__}: {exc})"
        ) from exc
    return _finish(collected, str(path))


def parse_entries(entries: list[dict[str, Any]]) -> ParsedDocument:
    """Parse structured policy entries ({section, text}) into HEADING + PARAGRAPH spans."""
    return _finish(collect_entries(entries), SOURCE_LABEL)
