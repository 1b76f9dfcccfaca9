"""The tenant knowledge folder: `kb.yaml` plus the files it names (spec 1)."""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

import yaml

from kb_retrieval.db.connection import TENANT_ID_PATTERN
from kb_retrieval.models import Category, IngestReason
from kb_retrieval.parsing import MAX_FILE_BYTES

MANIFEST_NAME = "kb.yaml"
MAX_MANIFEST_BYTES = 1024 * 1024
MAX_YAML_DEPTH = 64  # a manifest nests 3-4 deep
# Ids end up in chunk ids, locators and partition keys: printable, no path separators.
ID_PATTERN = re.compile(r"\A[^\x00-\x1f\x7f/\\]{1,200}\Z")
ID_FIELDS = ("doc_id", "doc_version_id", "supersedes_doc_version_id")
SUPPORTED_SUFFIXES = (".pdf", ".docx", ".txt", ".md", ".html", ".htm")
KNOWN_FIELDS = {
    "doc_id",
    "doc_version_id",
    "title",
    "category",
    "source",
    "entries",
    "priority",
    "effective_date",
    "last_reviewed_at",
    "supersedes_doc_version_id",
}


class ManifestError(Exception):
    """The manifest as a whole is unusable (missing, not YAML, bad tenant_id)."""


@dataclass(frozen=True)
class DocumentSpec:
    """One validated document version of a manifest."""

    tenant_id: str
    doc_id: str
    doc_version_id: str
    title: str
    category: Category
    source: str | None
    source_path: Path | None
    entries: tuple[dict[str, str], ...]
    priority: int
    effective_date: date | None
    last_reviewed_at: date | None
    supersedes_doc_version_id: str | None
    content_hash: str

    @property
    def source_type(self) -> str:
        if self.source_path is None:
            return "entries"
        return self.source_path.suffix.lower().lstrip(".")


@dataclass(frozen=True)
class DocumentProblem:
    """A manifest entry that cannot be ingested, with the reason and where it is."""

    doc_version_id: str
    reason: IngestReason
    message: str


@dataclass
class Manifest:
    tenant_id: str
    folder: Path
    documents: list[DocumentSpec] = field(default_factory=list)
    problems: list[DocumentProblem] = field(default_factory=list)


# libyaml's parser (PyYAML built with it) when present: the pure-Python one was most of an
# unchanged re-ingest's time (docs/benchmarks.md, session 7).
_FastLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class BoundedLoader(_FastLoader):
    """Safe YAML with duplicate keys refused; `check_events` runs first (no alias bombs)."""

    def construct_mapping(self, node: Any, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if isinstance(key, list | dict) or key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate or unhashable key {key!r}", key_node.start_mark
                )
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


class NestingError(ValueError):
    """The YAML nests deeper than `MAX_YAML_DEPTH` collections."""


def check_events(text: str) -> None:
    """Refuse anchors, aliases and deep nesting from the parser's events, before any node is
    built (libyaml's composer recurses in C: a deep document would overflow its stack)."""
    depth = 0
    for event in yaml.parse(text, Loader=_FastLoader):
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
            raise yaml.composer.ComposerError(
                None, None, "YAML anchors and aliases are not allowed in kb.yaml", event.start_mark
            )
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_YAML_DEPTH:
                raise NestingError(f"more than {MAX_YAML_DEPTH} nested collections")
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1


def bytes_hash(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def content_hash_of(path: Path | None, entries: tuple[dict[str, str], ...]) -> str:
    """The version's content hash: the file's bytes, or the entries as canonical JSON."""
    if path is not None:
        return bytes_hash(path.read_bytes())
    return bytes_hash(json.dumps(list(entries), sort_keys=True, ensure_ascii=False).encode())


def _has_nul(value: Any) -> bool:
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(_has_nul(k) or _has_nul(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_nul(v) for v in value)
    return False


def _parse_date(value: Any, field_name: str) -> date | None:
    if value is None:
        return None
    if isinstance(value, date):
        return value
    try:
        return date.fromisoformat(str(value))
    except ValueError as exc:
        raise _Problem(
            IngestReason.MANIFEST_BAD_DATE, f"{field_name} {value!r} is not an ISO date"
        ) from exc


class _Problem(Exception):
    def __init__(self, reason: IngestReason, message: str) -> None:
        super().__init__(message)
        self.reason = reason


def _entries(raw: Any) -> tuple[dict[str, str], ...]:
    if not isinstance(raw, list) or not raw:
        raise _Problem(IngestReason.MANIFEST_INVALID, "entries must be a non-empty list")
    out = []
    for i, entry in enumerate(raw):
        if not isinstance(entry, dict) or not str(entry.get("text", "")).strip():
            raise _Problem(IngestReason.MANIFEST_INVALID, f"entries[{i}] needs a non-empty text")
        out.append({"section": str(entry.get("section") or "").strip(), "text": str(entry["text"])})
    return tuple(out)


def _document(tenant_id: str, folder: Path, raw: dict[str, Any]) -> DocumentSpec:
    for name in ("doc_id", "doc_version_id", "title", "category"):
        if not isinstance(raw.get(name), str) or not raw[name].strip():
            raise _Problem(IngestReason.MANIFEST_INVALID, f"field {name} is required (a string)")
    unknown = sorted(str(key) for key in set(raw) - KNOWN_FIELDS)
    if unknown:
        raise _Problem(IngestReason.MANIFEST_INVALID, f"unknown field(s) {', '.join(unknown)}")
    if _has_nul(raw):
        raise _Problem(IngestReason.MANIFEST_INVALID, "a value contains a NUL byte")
    for name in ID_FIELDS:
        value = raw.get(name)
        if value is not None and not (isinstance(value, str) and ID_PATTERN.match(value.strip())):
            raise _Problem(
                IngestReason.MANIFEST_INVALID,
                f"field {name} {value!r} must be 1-200 printable characters without / or \\",
            )
    try:
        category = Category(raw["category"])
    except ValueError as exc:
        raise _Problem(
            IngestReason.MANIFEST_UNKNOWN_CATEGORY,
            f"category {raw['category']!r} is not one of {', '.join(c.value for c in Category)}",
        ) from exc
    has_source, has_entries = raw.get("source") is not None, raw.get("entries") is not None
    if has_source == has_entries:
        raise _Problem(
            IngestReason.MANIFEST_INVALID, "exactly one of source or entries is required"
        )
    source_path, entries = None, ()
    if has_source:
        source_path = (folder / str(raw["source"])).resolve()
        if not source_path.is_relative_to(folder):  # resolved by load_manifest
            raise _Problem(
                IngestReason.MANIFEST_INVALID, f"source {raw['source']!r} leaves the folder"
            )
        if not source_path.is_file():
            raise _Problem(
                IngestReason.MANIFEST_MISSING_FILE, f"source file {raw['source']!r} not found"
            )
        size = source_path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise _Problem(
                IngestReason.PARSE_TOO_LARGE,
                f"source file {raw['source']!r} has {size} bytes, over the {MAX_FILE_BYTES} limit",
            )
    else:
        entries = _entries(raw["entries"])
    priority = raw.get("priority", 0)
    if not isinstance(priority, int) or isinstance(priority, bool):
        raise _Problem(IngestReason.MANIFEST_INVALID, f"priority {priority!r} is not an integer")
    supersedes = raw.get("supersedes_doc_version_id")
    return DocumentSpec(
        tenant_id=tenant_id,
        doc_id=raw["doc_id"].strip(),
        doc_version_id=raw["doc_version_id"].strip(),
        title=raw["title"].strip(),
        category=category,
        source=str(raw["source"]) if has_source else None,
        source_path=source_path,
        entries=entries,
        priority=priority,
        effective_date=_parse_date(raw.get("effective_date"), "effective_date"),
        last_reviewed_at=_parse_date(raw.get("last_reviewed_at"), "last_reviewed_at"),
        supersedes_doc_version_id=str(supersedes).strip() if supersedes else None,
        content_hash=content_hash_of(source_path, entries),
    )


# Builds of libyaml that bound nesting themselves (0.2.5+) refuse before our own check does.
LIBYAML_NESTING_MESSAGE = "maximum nesting depth"


def read_manifest(folder: Path) -> dict[str, Any]:
    """`folder/kb.yaml` as a mapping with a valid tenant_id; bounded in size and structure."""
    path = folder.resolve() / MANIFEST_NAME
    if not path.is_file():
        raise ManifestError(f"{path}: manifest not found")
    size = path.stat().st_size
    if size > MAX_MANIFEST_BYTES:
        raise ManifestError(f"{path}: {size} bytes, over the {MAX_MANIFEST_BYTES} byte limit")
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ManifestError(f"{path}: not UTF-8 text (byte {exc.start})") from exc
    try:
        check_events(text)
        raw = yaml.load(text, Loader=BoundedLoader)
    except yaml.YAMLError as exc:
        if LIBYAML_NESTING_MESSAGE in str(exc):
            raise ManifestError(f"{path}: YAML nested too deeply") from exc
        raise ManifestError(f"{path}: not valid YAML: {exc}") from exc
    except (RecursionError, NestingError) as exc:
        raise ManifestError(f"{path}: YAML nested too deeply") from exc
    if not isinstance(raw, dict):
        raise ManifestError(f"{path}: expected a mapping with tenant_id and documents")
    tenant_id = raw.get("tenant_id")
    if not isinstance(tenant_id, str) or not TENANT_ID_PATTERN.match(tenant_id):
        raise ManifestError(
            f"{path}: tenant_id {tenant_id!r} must match {TENANT_ID_PATTERN.pattern}"
        )
    return raw


def check_tenant(folder: Path, expected: str) -> None:
    """Refuse a folder whose kb.yaml names another tenant than the one it is ingested for."""
    found = read_manifest(folder)["tenant_id"]
    if found != expected:
        raise ManifestError(
            f"{folder.resolve() / MANIFEST_NAME}: tenant_id {found!r} differs from --tenant "
            f"{expected!r}; nothing was ingested"
        )


def load_manifest(folder: Path) -> Manifest:
    """Validate `folder/kb.yaml`; bad documents become problems, valid ones still load.

    Supersedes links are checked by `check_supersedes` once the stored versions are known.
    """
    folder = folder.resolve()
    path = folder / MANIFEST_NAME
    raw = read_manifest(folder)
    tenant_id = raw["tenant_id"]
    documents = raw.get("documents")
    if not isinstance(documents, list):
        raise ManifestError(f"{path}: documents must be a list")
    manifest = Manifest(tenant_id=tenant_id, folder=folder)
    ids = Counter(
        d["doc_version_id"]
        for d in documents
        if isinstance(d, dict) and isinstance(d.get("doc_version_id"), str)
    )
    for index, doc in enumerate(documents):
        where = f"{path}: documents[{index}]"
        label = doc.get("doc_version_id") if isinstance(doc, dict) else None
        if not (isinstance(label, str) and ID_PATTERN.match(label)):
            label = f"documents[{index}]"
        try:
            if not isinstance(doc, dict):
                raise _Problem(IngestReason.MANIFEST_INVALID, "expected a mapping")
            if ids[label] > 1:
                raise _Problem(
                    IngestReason.MANIFEST_DUPLICATE_VERSION,
                    f"doc_version_id {label!r} appears {ids[label]} times in the manifest",
                )
            manifest.documents.append(_document(tenant_id, folder, doc))
        except _Problem as problem:
            manifest.problems.append(
                DocumentProblem(label, problem.reason, f"{where} ({label}): {problem}")
            )
    return manifest


def check_supersedes(manifest: Manifest, known: frozenset[str]) -> None:
    """A supersedes link must point at a version of the manifest or one already stored."""
    path = manifest.folder / MANIFEST_NAME
    targets = {d.doc_version_id for d in manifest.documents} | set(known)
    kept = []
    for doc in manifest.documents:
        target = doc.supersedes_doc_version_id
        if target is not None and (target not in targets or target == doc.doc_version_id):
            manifest.problems.append(
                DocumentProblem(
                    doc.doc_version_id,
                    IngestReason.MANIFEST_DANGLING_SUPERSEDES,
                    f"{path} ({doc.doc_version_id}): supersedes_doc_version_id {target!r} "
                    "names no other version of this tenant",
                )
            )
        else:
            kept.append(doc)
    manifest.documents = kept
