"""Staleness report of a tenant's document versions as of a date (pure: no database, no Dagster).

Three sections, each grouped by category with the sensitive categories first (terms, waiver,
safety/medical, structured policy, then the others in precedence order):

- `stale`: current versions (already effective, not superseded by an effective version) whose
  last review is missing or more than `stale_after_days` (180) days before the as-of date;
- `superseded_live`: versions superseded by an effective version whose build is still indexed
  ("still served" when no successor is indexed, so retrieval still returns the old text);
- `upcoming`: versions becoming effective within `horizon_days` (30) after the as-of date.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import date, timedelta
from typing import Any

from kb_retrieval.models import Category

STALE_AFTER_DAYS = 180
HORIZON_DAYS = 30
SENSITIVE_ORDER = (
    Category.TERMS_POLICY,
    Category.WAIVER_RELEASE,
    Category.SAFETY_MEDICAL,
    Category.STRUCTURED_POLICY,
)
CATEGORY_ORDER = (*SENSITIVE_ORDER, *(c for c in Category if c not in SENSITIVE_ORDER))
SECTIONS = ("stale", "superseded_live", "upcoming")


@dataclass(frozen=True)
class VersionFacts:
    """What the report needs to know about one registered document version."""

    doc_version_id: str
    doc_id: str
    title: str
    category: str
    effective_date: date | None = None
    last_reviewed_at: date | None = None
    supersedes_doc_version_id: str | None = None
    indexed: bool = False


@dataclass(frozen=True)
class StalenessItem:
    section: str
    category: str
    sensitive: bool
    doc_version_id: str
    doc_id: str
    title: str
    last_reviewed_at: date | None
    days_since_review: int | None
    effective_date: date | None
    detail: str


@dataclass(frozen=True)
class StalenessReport:
    tenant_id: str
    as_of: date
    items: list[StalenessItem] = field(default_factory=list)

    def section(self, name: str) -> list[StalenessItem]:
        return [item for item in self.items if item.section == name]

    @property
    def stale_sensitive(self) -> list[StalenessItem]:
        return [item for item in self.section("stale") if item.sensitive]

    def counts(self) -> dict[str, int]:
        counts = {name: len(self.section(name)) for name in SECTIONS}
        return {**counts, "stale_sensitive": len(self.stale_sensitive)}

    def rows(self) -> list[dict[str, Any]]:
        """JSON-ready rows (dates as ISO strings) in report order, tenant included."""
        return [
            {
                "tenant_id": self.tenant_id,
                **{
                    key: value.isoformat() if isinstance(value, date) else value
                    for key, value in asdict(item).items()
                },
            }
            for item in self.items
        ]


def category_rank(category: str) -> int:
    """Position of a category in the report (sensitive first); unknown categories last."""
    names = [c.value for c in CATEGORY_ORDER]
    return names.index(category) if category in names else len(names)


def is_sensitive(category: str) -> bool:
    return category in {c.value for c in SENSITIVE_ORDER}


def _effective(version: VersionFacts, as_of: date) -> bool:
    return version.effective_date is None or version.effective_date <= as_of


def _item(section: str, version: VersionFacts, as_of: date, detail: str) -> StalenessItem:
    reviewed = version.last_reviewed_at
    return StalenessItem(
        section=section,
        category=version.category,
        sensitive=is_sensitive(version.category),
        doc_version_id=version.doc_version_id,
        doc_id=version.doc_id,
        title=version.title,
        last_reviewed_at=reviewed,
        days_since_review=(as_of - reviewed).days if reviewed else None,
        effective_date=version.effective_date,
        detail=detail,
    )


def staleness_report(
    tenant_id: str,
    versions: Sequence[VersionFacts],
    as_of: date,
    *,
    stale_after_days: int = STALE_AFTER_DAYS,
    horizon_days: int = HORIZON_DAYS,
) -> StalenessReport:
    """The report of one tenant (see the module docstring); deterministic order."""
    successors: dict[str, list[VersionFacts]] = {}
    for version in versions:
        if version.supersedes_doc_version_id and _effective(version, as_of):
            successors.setdefault(version.supersedes_doc_version_id, []).append(version)
    items = []
    for version in versions:
        newer = sorted(successors.get(version.doc_version_id, []), key=lambda v: v.doc_version_id)
        reviewed = version.last_reviewed_at
        if newer:
            if version.indexed:
                served = not any(v.indexed for v in newer)
                names = ", ".join(v.doc_version_id for v in newer)
                detail = (
                    f"still served: successor {names} is not indexed"
                    if served
                    else f"superseded by {names}; rows can be retired"
                )
                items.append(_item("superseded_live", version, as_of, detail))
        elif _effective(version, as_of):
            if reviewed is None:
                items.append(_item("stale", version, as_of, "never reviewed"))
            elif (as_of - reviewed).days > stale_after_days:
                days = (as_of - reviewed).days
                items.append(_item("stale", version, as_of, f"last reviewed {days} days ago"))
        if (
            version.effective_date is not None
            and as_of < version.effective_date <= as_of + timedelta(days=horizon_days)
        ):
            days = (version.effective_date - as_of).days
            items.append(_item("upcoming", version, as_of, f"effective in {days} days"))
    items.sort(
        key=lambda i: (
            SECTIONS.index(i.section),
            category_rank(i.category),
            i.doc_id,
            i.doc_version_id,
        )
    )
    return StalenessReport(tenant_id, as_of, items)
