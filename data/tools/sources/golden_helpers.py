"""Small constructors that keep the hand-written golden cases short and uniform."""

from __future__ import annotations

from typing import Any

Case = dict[str, Any]


def rel(doc_version_id: str, quote: str) -> dict[str, str]:
    """A relevant item: a short phrase copied from the text of that document version."""
    return {"doc_version_id": doc_version_id, "quote": quote}


def thread(subject: str, *messages: tuple[str, str]) -> dict[str, Any]:
    """An email thread, oldest message first."""
    return {"subject": subject, "messages": [{"role": r, "text": t} for r, t in messages]}


def g(
    case_id: str,
    tenant_id: str,
    email: str | dict[str, Any],
    outcome: str,
    relevant: list[dict[str, str]],
    *,
    reasons: list[str] | None = None,
    trip: dict[str, str] | None = None,
    sensitivity: list[str] | None = None,
    must_not_cite: list[str] | None = None,
    flags: dict[str, bool] | None = None,
) -> Case:
    """A golden case in contract section 2 format (optional fields only when given)."""
    case: Case = {"case_id": case_id, "tenant_id": tenant_id, "email": email}
    if trip is not None:
        case["trip_context"] = trip
    if sensitivity is not None:
        case["sensitivity"] = sensitivity
    case["relevant"] = relevant
    if must_not_cite is not None:
        case["must_not_cite"] = must_not_cite
    case["expected_outcome"] = outcome
    if flags is not None:
        case["expected_flags"] = flags
    case["expected_reason_codes"] = list(reasons or [])
    return case


def o(
    case_id: str,
    tenant_id: str,
    email: str | dict[str, Any],
    relevant: list[dict[str, str]],
    **kwargs: Any,
) -> Case:
    """An OK_TO_DRAFT case."""
    return g(case_id, tenant_id, email, "OK_TO_DRAFT", relevant, **kwargs)


def unknown(
    case_id: str,
    tenant_id: str,
    email: str | dict[str, Any],
    *,
    sensitive: bool = False,
    **kwargs: Any,
) -> Case:
    """An UNKNOWN case: nothing in the tenant's live documents answers it."""
    reasons = ["NO_EVIDENCE", "SENSITIVE_TOPIC"] if sensitive else ["NO_EVIDENCE"]
    return g(case_id, tenant_id, email, "UNKNOWN", [], reasons=reasons, **kwargs)


def ask(
    case_id: str,
    tenant_id: str,
    email: str | dict[str, Any],
    relevant: list[dict[str, str]] | None = None,
    **kwargs: Any,
) -> Case:
    """An ASK_CLARIFYING_QUESTION case: chit-chat when no relevant items, else ambiguous."""
    reasons = ["AMBIGUOUS_CONTEXT"] if relevant else ["QUERY_TOO_VAGUE"]
    return g(
        case_id,
        tenant_id,
        email,
        "ASK_CLARIFYING_QUESTION",
        relevant or [],
        reasons=reasons,
        **kwargs,
    )
