"""Source locators of chunks: ``docv:{id}#chunk:{000}|p:{start}-{end}|sec:{slug}`` (spec 3.3-3.4)."""

from __future__ import annotations

import re
from typing import Any

_SLUG_RUN = re.compile(r"[\W_]+")
_NUMBER = r"(?:0|[1-9][0-9]*)"
_LOCATOR = re.compile(
    r"docv:(?P<doc_version_id>[^\s#|]+)#chunk:(?P<chunk_index>[0-9]{3}|[1-9][0-9]{3,})"
    rf"\|p:(?:(?P<page_start>{_NUMBER})-(?P<page_end>{_NUMBER})|-)"
    r"\|sec:(?P<section_slug>-|[^\W_]+(?:-[^\W_]+)*)"
)
_DOC_VERSION_ID = re.compile(r"[^\s#|]+")


def validate_doc_version_id(doc_version_id: str) -> None:
    """A locator needs an id without whitespace, # or |; ValueError otherwise."""
    if not _DOC_VERSION_ID.fullmatch(doc_version_id):
        raise ValueError(
            f"doc_version_id may not be empty or hold whitespace, #, |: {doc_version_id!r}"
        )


def slugify_section(title: str | None) -> str:
    """Runs of non-alphanumerics become "-", ends stripped, case kept; "-" when there is none."""
    if title is None:
        return "-"
    return _SLUG_RUN.sub("-", title).strip("-") or "-"


def format_source_locator(
    doc_version_id: str,
    chunk_index: int,
    page_start: int | None,
    page_end: int | None,
    section_title: str | None,
) -> str:
    """``docv:{id}#chunk:{000}|p:{start}-{end}|sec:{slug}`` (p:- without pages)."""
    validate_doc_version_id(doc_version_id)
    if chunk_index < 0:
        raise ValueError(f"negative chunk_index {chunk_index}")
    if page_start is None:
        pages = "-"
    else:
        pages = f"{page_start}-{page_start if page_end is None else page_end}"
    slug = slugify_section(section_title)
    return f"docv:{doc_version_id}#chunk:{chunk_index:03d}|p:{pages}|sec:{slug}"


def parse_source_locator(locator: str) -> dict[str, Any]:
    """Inverse of format_source_locator (section_slug None for "sec:-"); ValueError if malformed."""
    match = _LOCATOR.fullmatch(locator)
    if match is None:
        raise ValueError(f"not a source locator: {locator!r}")
    start, end, slug = match["page_start"], match["page_end"], match["section_slug"]
    return {
        "doc_version_id": match["doc_version_id"],
        "chunk_index": int(match["chunk_index"]),
        "page_start": None if start is None else int(start),
        "page_end": None if end is None else int(end),
        "section_slug": None if slug == "-" else slug,
    }
