"""Golden-set cases (spec 10): pydantic models, JSON Schema and a JSONL loader."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import date
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    StrictBool,
    Tag,
    ValidationError,
    field_validator,
)

from kb_retrieval.models import Outcome, ReasonCode

FlagName = Literal["stale_only_evidence", "conflicting_evidence", "low_confidence"]
Sensitivity = Literal["refund", "safety", "medical", "legal", "exceptions"]
Split = Literal["tune", "holdout"]

TENANT_ID_PATTERN = r"^[a-z0-9][a-z0-9_-]{1,62}$"
ISO_DATE_PATTERN = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$"
NON_BLANK_PATTERN = r"\S"


def _real_date(value: str) -> str:
    date.fromisoformat(value)
    return value


NonBlank = Annotated[str, Field(min_length=1, pattern=NON_BLANK_PATTERN)]
IsoDate = Annotated[str, Field(pattern=ISO_DATE_PATTERN), AfterValidator(_real_date)]


def _unique(values: list[Any]) -> list[Any]:
    if len(set(values)) != len(values):
        raise ValueError("items must be unique")
    return values


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Message(_Strict):
    role: Literal["guest", "operator"]
    text: NonBlank


class EmailThread(_Strict):
    """An email thread, oldest message first; the latest guest message is emphasised."""

    subject: str | None = None
    messages: list[Message] = Field(min_length=1)

    @field_validator("messages")
    @classmethod
    def _has_guest(cls, messages: list[Message]) -> list[Message]:
        if not any(message.role == "guest" for message in messages):
            raise ValueError("at least one message must have role 'guest'")
        return messages

    @property
    def latest_guest_text(self) -> str:
        return next(m.text for m in reversed(self.messages) if m.role == "guest")


def _email_kind(value: Any) -> str | None:
    if isinstance(value, str):
        return "text"
    if isinstance(value, dict | EmailThread):
        return "thread"
    return None


Email = Annotated[
    Annotated[NonBlank, Tag("text")] | Annotated[EmailThread, Tag("thread")],
    Discriminator(
        _email_kind,
        custom_error_type="email_type",
        custom_error_message="email must be a string or an object with subject and messages",
    ),
]


class TripContext(_Strict):
    trip_id: NonBlank | None = None
    trip_date: IsoDate | None = None
    product_name: NonBlank | None = None

    @property
    def trip_date_value(self) -> date | None:
        return None if self.trip_date is None else date.fromisoformat(self.trip_date)


class RelevantItem(_Strict):
    """A passage that answers the case: covered when a chunk of the version contains the quote."""

    doc_version_id: NonBlank
    quote: NonBlank


class GoldenCase(_Strict):
    """One line of a golden set; unknown keys are rejected so that typos do not pass silently."""

    case_id: NonBlank
    tenant_id: Annotated[str, Field(pattern=TENANT_ID_PATTERN)]
    email: Email
    trip_context: TripContext | None = None
    sensitivity: Annotated[list[Sensitivity], AfterValidator(_unique)] = Field(default_factory=list)
    relevant: list[RelevantItem]
    must_not_cite: Annotated[list[NonBlank], AfterValidator(_unique)] = Field(default_factory=list)
    expected_outcome: Outcome
    expected_flags: dict[FlagName, StrictBool] = Field(default_factory=dict)
    expected_reason_codes: Annotated[list[ReasonCode], AfterValidator(_unique)] | None = None
    split: Split | None = None
    note: str | None = None
    tags: Annotated[list[NonBlank], AfterValidator(_unique)] = Field(default_factory=list)

    @property
    def email_text(self) -> str:
        """The email as one string: the text itself, or the latest guest message of a thread."""
        return self.email if isinstance(self.email, str) else self.email.latest_guest_text


@dataclass(frozen=True)
class GoldenIssue:
    """One problem in a golden file: where it is and what is wrong."""

    path: Path
    line: int
    field: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.field}: {self.message}"


class GoldenFormatError(ValueError):
    """A golden file has invalid lines; `issues` lists every one of them."""

    def __init__(self, issues: list[GoldenIssue]) -> None:
        self.issues = issues
        super().__init__("invalid golden set:\n" + "\n".join(f"  {issue}" for issue in issues))


def _field_path(loc: tuple[int | str, ...]) -> str:
    parts: list[str] = []
    for index, item in enumerate(loc):
        if index == 1 and loc[0] == "email" and item in ("text", "thread"):
            continue
        if item == "[key]":
            parts.append(" (key)")
        elif isinstance(item, int):
            parts.append(f"[{item}]")
        else:
            parts.append(f".{item}" if parts else str(item))
    return "".join(parts) or "(case)"


def _validation_issues(path: Path, line: int, error: ValidationError) -> list[GoldenIssue]:
    issues = []
    for detail in error.errors(include_url=False):
        message = detail["msg"]
        if detail["type"] == "extra_forbidden":
            message = "unknown field"
        elif detail["type"] == "model_type" and not detail["loc"]:
            message = "a case must be a JSON object"
        elif detail["type"] == "value_error":
            message = message.removeprefix("Value error, ")
        issues.append(GoldenIssue(path, line, _field_path(tuple(detail["loc"])), message))
    return issues


def parse_golden_lines(lines: list[str], path: Path) -> list[GoldenCase]:
    """Validate JSONL lines (blank lines skipped); raise GoldenFormatError listing every issue."""
    cases: list[GoldenCase] = []
    issues: list[GoldenIssue] = []
    first_line: dict[str, int] = {}
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            data = json.loads(raw)
        except json.JSONDecodeError as exc:
            issues.append(GoldenIssue(path, number, "(line)", f"invalid JSON: {exc.msg}"))
            continue
        try:
            case = GoldenCase.model_validate(data)
        except ValidationError as exc:
            issues.extend(_validation_issues(path, number, exc))
            continue
        if case.case_id in first_line:
            message = (
                f"duplicate case_id {case.case_id!r} (first on line {first_line[case.case_id]})"
            )
            issues.append(GoldenIssue(path, number, "case_id", message))
            continue
        first_line[case.case_id] = number
        for index, item in enumerate(case.relevant):
            if item.doc_version_id in case.must_not_cite:
                message = f"{item.doc_version_id!r} is also listed in must_not_cite"
                issues.append(
                    GoldenIssue(path, number, f"relevant[{index}].doc_version_id", message)
                )
        cases.append(case)
    if issues:
        raise GoldenFormatError(issues)
    return cases


def load_golden(path: Path) -> list[GoldenCase]:
    """Read a golden set (JSON Lines, UTF-8) in file order."""
    text = Path(path).read_text(encoding="utf-8-sig")
    return parse_golden_lines(text.split("\n"), Path(path))


@cache
def _schema_text() -> str:
    return resources.files("kb_eval").joinpath("golden.schema.json").read_text(encoding="utf-8")


def golden_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of one golden case, as shipped in golden.schema.json."""
    schema: dict[str, Any] = json.loads(_schema_text())
    return schema
