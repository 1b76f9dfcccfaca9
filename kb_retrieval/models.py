"""Shared vocabulary of the knowledge base: categories, lifecycle states, reason codes, records."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum


class Category(StrEnum):
    """The nine document categories, declared in precedence order (highest first)."""

    STRUCTURED_POLICY = "structured_policy"
    TERMS_POLICY = "terms_policy"
    WAIVER_RELEASE = "waiver_release"
    SAFETY_MEDICAL = "safety_medical"
    TRIP_ITINERARY = "trip_itinerary"
    FAQ = "faq"
    PACKING_LIST = "packing_list"
    OPERATIONS_INTERNAL = "operations_internal"
    MARKETING = "marketing"

    @property
    def tier(self) -> int:
        """Precedence tier: 1 is highest (structured_policy), 9 lowest (marketing)."""
        return _TIERS[self]


_TIERS = {category: index for index, category in enumerate(Category, start=1)}


HIGH_PRECEDENCE = frozenset(
    {Category.STRUCTURED_POLICY, Category.TERMS_POLICY, Category.WAIVER_RELEASE}
)
SENSITIVE_CATEGORIES = frozenset(
    {
        Category.STRUCTURED_POLICY,
        Category.TERMS_POLICY,
        Category.WAIVER_RELEASE,
        Category.SAFETY_MEDICAL,
    }
)


class LifecycleState(StrEnum):
    RECEIVED = "received"
    QUEUED = "queued"
    PARSING = "parsing"
    PARSED = "parsed"
    CHUNKING = "chunking"
    CHUNKED = "chunked"
    EMBEDDING = "embedding"
    INDEXED = "indexed"
    FAILED = "failed"
    NEEDS_ATTENTION = "needs_attention"


class IngestReason(StrEnum):
    """Reason codes of ingestion (a document ends failed/needs_attention with one of these)."""

    PARSE_EMPTY_TEXT_SCAN_DETECTED = "PARSE_EMPTY_TEXT_SCAN_DETECTED"
    PARSE_EMPTY_DOCUMENT = "PARSE_EMPTY_DOCUMENT"
    PARSE_ENCRYPTED = "PARSE_ENCRYPTED"
    PARSE_CORRUPT_FILE = "PARSE_CORRUPT_FILE"
    PARSE_UNSUPPORTED_FORMAT = "PARSE_UNSUPPORTED_FORMAT"
    PARSE_TIMEOUT = "PARSE_TIMEOUT"
    PARSE_TOO_LARGE = "PARSE_TOO_LARGE"
    MANIFEST_INVALID = "MANIFEST_INVALID"
    MANIFEST_UNKNOWN_CATEGORY = "MANIFEST_UNKNOWN_CATEGORY"
    MANIFEST_MISSING_FILE = "MANIFEST_MISSING_FILE"
    MANIFEST_DUPLICATE_VERSION = "MANIFEST_DUPLICATE_VERSION"
    MANIFEST_BAD_DATE = "MANIFEST_BAD_DATE"
    MANIFEST_DANGLING_SUPERSEDES = "MANIFEST_DANGLING_SUPERSEDES"
    VERSION_CONTENT_CHANGED = "VERSION_CONTENT_CHANGED"
    EMBEDDING_FAILED = "EMBEDDING_FAILED"


class Outcome(StrEnum):
    OK_TO_DRAFT = "OK_TO_DRAFT"
    ASK_CLARIFYING_QUESTION = "ASK_CLARIFYING_QUESTION"
    NEEDS_REVIEW = "NEEDS_REVIEW"
    UNKNOWN = "UNKNOWN"


class ReasonCode(StrEnum):
    """The v1 set of ten retrieval reason codes (spec 9)."""

    NO_EVIDENCE = "NO_EVIDENCE"
    LOW_CONFIDENCE = "LOW_CONFIDENCE"
    STALE_ONLY_EVIDENCE = "STALE_ONLY_EVIDENCE"
    CONFLICT_DETECTED = "CONFLICT_DETECTED"
    MISSING_REQUIRED_PRECEDENCE = "MISSING_REQUIRED_PRECEDENCE"
    MARKETING_ONLY_EVIDENCE = "MARKETING_ONLY_EVIDENCE"
    EXCEPTION_REQUEST = "EXCEPTION_REQUEST"
    SENSITIVE_TOPIC = "SENSITIVE_TOPIC"
    QUERY_TOO_VAGUE = "QUERY_TOO_VAGUE"
    AMBIGUOUS_CONTEXT = "AMBIGUOUS_CONTEXT"


class PolicyLikeness(StrEnum):
    LOW = "Low"
    MEDIUM = "Medium"
    HIGH = "High"


class SpanKind(StrEnum):
    HEADING = "heading"
    PARAGRAPH = "paragraph"
    LIST_ITEM = "list_item"
    TABLE = "table"


@dataclass(frozen=True)
class Span:
    """One block of normalised text from a parser, with its anchors."""

    text: str
    kind: SpanKind = SpanKind.PARAGRAPH
    page: int | None = None
    section_title: str | None = None
    heading_level: int | None = None


@dataclass(frozen=True)
class ParsedDocument:
    spans: tuple[Span, ...]
    parser_version: str
    page_count: int | None = None
    warnings: tuple[str, ...] = field(default_factory=tuple)

    @property
    def text(self) -> str:
        return "\n\n".join(span.text for span in self.spans)


@dataclass(frozen=True)
class Chunk:
    """A deterministic unit of a document version's normalised text (spec 3.3-3.4)."""

    chunk_id: str
    chunk_index: int
    text: str
    token_count: int
    section_title: str | None
    page_start: int | None
    page_end: int | None
    source_locator: str
    policy_likeness_hint: PolicyLikeness

    @property
    def page_range(self) -> str | None:
        if self.page_start is None:
            return None
        return f"{self.page_start}-{self.page_end}"


@dataclass(frozen=True)
class PipelineVersions:
    """The idempotency tuple of spec 2.3, minus tenant and version."""

    parser_version: str
    chunker_version: str
    embedding_model_id: str
