"""Structured policy entries from the manifest: a list of {section, text}."""

from __future__ import annotations

from typing import Any

from kb_retrieval.models import IngestReason
from kb_retrieval.parsing.errors import ParseError
from kb_retrieval.parsing.normalize import SpanCollector, normalize_inline

SOURCE_LABEL = "structured policy entries"


def collect_entries(entries: list[dict[str, Any]]) -> SpanCollector:
    """One HEADING span (level 1) per section and one PARAGRAPH span per entry text.

    An entry without a section continues the previous one (before the first section its
    paragraph has no section title); entries whose text is blank are skipped with a warning.
    """
    out = SpanCollector()
    if not isinstance(entries, list):
        raise ParseError(
            IngestReason.PARSE_CORRUPT_FILE,
            f"{SOURCE_LABEL}: expected a list of {{section, text}}, got {type(entries).__name__}",
        )
    for number, entry in enumerate(entries, start=1):
        if not isinstance(entry, dict):
            raise ParseError(
                IngestReason.PARSE_CORRUPT_FILE,
                f"{SOURCE_LABEL}: entry {number} is not a mapping with section and text",
            )
        section, text = entry.get("section"), entry.get("text")
        if not isinstance(section, str | None) or not isinstance(text, str | None):
            raise ParseError(
                IngestReason.PARSE_CORRUPT_FILE,
                f"{SOURCE_LABEL}: entry {number} has a section or text that is not a string",
            )
        if not normalize_inline(text or ""):
            out.warnings.append(f"entry {number} has no text; skipped")
            continue
        if section and normalize_inline(section):
            out.heading(section, 1)
        out.block(text or "", keep_lines=True)
    return out
