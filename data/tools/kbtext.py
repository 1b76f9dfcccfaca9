"""Read the demo tenants' manifests and the text of every document version (for the checks)."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from datetime import date
from functools import cache
from pathlib import Path
from typing import Any

import docx
import pypdf
import yaml
from docspecs import SPECS, TENANTS, source_path
from mdlite import parse, text_units
from selectolax.lexbor import LexborHTMLParser

STALE_AFTER_DAYS = 180
CATEGORIES = (
    "structured_policy",
    "terms_policy",
    "waiver_release",
    "safety_medical",
    "trip_itinerary",
    "faq",
    "packing_list",
    "operations_internal",
    "marketing",
)
_HTML_BLOCKS = "p, li, h1, h2, h3, h4, h5, h6, td, th, dt, dd"
_MD_MARKER = re.compile(r"^(#{1,6} |- |\* |\d+\. )")


def normalise(text: str) -> str:
    """Contract normalisation: Unicode NFKC, case-folded, whitespace collapsed."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def _as_date(value: Any) -> date | None:
    if value is None or isinstance(value, date):
        return value
    return date.fromisoformat(str(value))


@dataclass(frozen=True)
class Version:
    """One document version of a manifest."""

    tenant_id: str
    doc_id: str
    doc_version_id: str
    title: str
    category: str
    folder: Path
    source: str | None
    entries: tuple[tuple[str, str], ...]
    priority: int
    effective_date: date | None
    last_reviewed_at: date | None
    supersedes: str | None

    def stale(self, as_of: date) -> bool:
        """Never reviewed, or last reviewed more than 180 days before as_of."""
        if self.last_reviewed_at is None:
            return True
        return (as_of - self.last_reviewed_at).days > STALE_AFTER_DAYS

    def effective(self, as_of: date) -> bool:
        return self.effective_date is None or self.effective_date <= as_of

    def live(self, as_of: date, manifest: Manifest) -> bool:
        """Effective, has text, and not superseded by a successor that is itself effective."""
        if not self.effective(as_of) or not any(unit.strip() for unit in version_units(self)):
            return False
        return not any(
            other.supersedes == self.doc_version_id and other.effective(as_of)
            for other in manifest.versions.values()
        )


@dataclass
class Manifest:
    tenant_id: str
    folder: Path
    versions: dict[str, Version] = field(default_factory=dict)


def load_manifest(folder: Path) -> Manifest:
    data = yaml.safe_load((folder / "kb.yaml").read_text(encoding="utf-8"))
    manifest = Manifest(data["tenant_id"], folder)
    for doc in data["documents"]:
        version = Version(
            tenant_id=data["tenant_id"],
            doc_id=doc["doc_id"],
            doc_version_id=doc["doc_version_id"],
            title=doc["title"],
            category=doc["category"],
            folder=folder,
            source=doc.get("source"),
            entries=tuple((e["section"], e["text"]) for e in doc.get("entries", [])),
            priority=int(doc.get("priority", 0)),
            effective_date=_as_date(doc.get("effective_date")),
            last_reviewed_at=_as_date(doc.get("last_reviewed_at")),
            supersedes=doc.get("supersedes_doc_version_id"),
        )
        if version.doc_version_id in manifest.versions:
            raise ValueError(f"{folder}: duplicate doc_version_id {version.doc_version_id}")
        manifest.versions[version.doc_version_id] = version
    return manifest


def load_manifests(root: Path = TENANTS) -> dict[str, Manifest]:
    manifests = [load_manifest(path.parent) for path in sorted(root.glob("*/kb.yaml"))]
    return {manifest.tenant_id: manifest for manifest in manifests}


def manifest_problems(manifest: Manifest) -> list[str]:
    """Sanity problems of a manifest (categories, files, supersedes links, entries xor file)."""
    problems: list[str] = []
    for version in manifest.versions.values():
        where = f"{manifest.tenant_id}/{version.doc_version_id}"
        if version.category not in CATEGORIES:
            problems.append(f"{where}: unknown category {version.category}")
        if (version.source is None) == (not version.entries):
            problems.append(f"{where}: needs exactly one of source and entries")
        if version.source and not (version.folder / version.source).is_file():
            problems.append(f"{where}: missing file {version.source}")
        if version.supersedes and version.supersedes not in manifest.versions:
            problems.append(f"{where}: supersedes unknown {version.supersedes}")
    return problems


def _split_paragraphs(text: str) -> list[str]:
    units = []
    for block in re.split(r"\n\s*\n", text):
        lines = [_MD_MARKER.sub("", line.strip()) for line in block.splitlines()]
        units.append(" ".join(line for line in lines if line))
    return units


def _file_units(path: Path) -> tuple[str, ...]:
    suffix = path.suffix.lower()
    if suffix == ".pdf":
        return tuple(page.extract_text() or "" for page in pypdf.PdfReader(path).pages)
    if suffix == ".docx":
        document = docx.Document(str(path))
        cells = [cell.text for table in document.tables for row in table.rows for cell in row.cells]
        return tuple([p.text for p in document.paragraphs] + cells)
    if suffix in (".html", ".htm"):
        tree = LexborHTMLParser(path.read_text(encoding="utf-8"))
        return tuple(node.text(deep=True, separator=" ") for node in tree.css(_HTML_BLOCKS))
    if suffix in (".md", ".txt"):
        return tuple(_split_paragraphs(path.read_text(encoding="utf-8")))
    raise ValueError(f"unsupported document type: {path}")


@cache
def version_units(version: Version) -> tuple[str, ...]:
    """Text units of the version as stored: entry texts, or units extracted from its file."""
    if version.entries:
        return tuple(unit for section, text in version.entries for unit in (section, text))
    return _file_units(version.folder / str(version.source))


def source_units(version: Version) -> list[str] | None:
    """Paragraph-level units of the hand-written source of a generated file (None if none)."""
    for spec in SPECS:
        if spec.tenant == version.tenant_id and spec.output == version.source:
            return text_units(parse(source_path(spec).read_text(encoding="utf-8")))
    return None
