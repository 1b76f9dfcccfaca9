"""The evidence pack (spec 7): building it, serialising it, validating it."""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import lru_cache
from importlib import resources
from typing import Any

import jsonschema

from kb_retrieval.query.plan import QueryPlan
from kb_retrieval.retrieval.answerability import pack_confidences
from kb_retrieval.retrieval.candidates import Candidate
from kb_retrieval.retrieval.near_answer import NearAnswer
from kb_retrieval.retrieval.verdict import Verdict

SNIPPET_CHARS = 240
SCORE_DIGITS = 4


def _round(value: float) -> float:
    return round(float(value), SCORE_DIGITS)


def snippet_of(text: str, section_title: str | None) -> str:
    """The chunk's first sentences (without the repeated heading), at most 240 characters."""
    body = text
    if section_title and body.startswith(section_title):
        body = body[len(section_title) :].lstrip()
    body = " ".join(body.split())
    if len(body) <= SNIPPET_CHARS:
        return body
    cut = body[: SNIPPET_CHARS - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > SNIPPET_CHARS // 2 else cut) + "…"


def evidence_item(
    rank: int,
    c: Candidate,
    lexical_max: float,
    low_relevance_line: float = 0.0,
    confidence: float | None = None,
) -> dict[str, Any]:
    """One pack chunk; `confidence` = its `confidence_score` (default: the verdict's)."""
    item = {
        "rank": rank,
        "doc_title": c.version.title,
        "doc_id": c.version.doc_id,
        "doc_version_id": c.version.doc_version_id,
        "category": c.version.category.value,
        "chunk_id": c.chunk_id,
        "source_locator": c.source_locator,
        "section_title": c.section_title,
        "page_range": f"{c.page_start}-{c.page_end}" if c.page_start is not None else None,
        "snippet": snippet_of(c.text, c.section_title),
        "text": c.text,
        "confidence_score": _round(c.confidence if confidence is None else confidence),
        "stale": c.stale,
        "policy_likeness_hint": c.policy_likeness_hint,
        "last_reviewed_at": c.version.last_reviewed_at.isoformat()
        if c.version.last_reviewed_at
        else None,
        "seen_in_queries": sorted(c.seen_in_queries),
        "scores": {
            "vector": _round(c.vector),
            "lexical": _round(c.bm25 / lexical_max) if lexical_max > 0 else 0.0,
            "bm25": _round(c.bm25),
            "coverage": _round(c.coverage),
            "passage_coverage": _round(c.passage),
            "relevance": _round(c.relevance),
            "fused": _round(c.rank_score),
        },
    }
    if c.version.superseded:
        item["superseded"] = True
    if c.relevance < low_relevance_line:
        item["low_relevance"] = True
    return item


def build_pack(
    tenant_id: str,
    plan: QueryPlan,
    verdict: Verdict,
    evidence: Sequence[Candidate],
    candidates: Sequence[Candidate],
    *,
    config_version: str,
    as_of: str,
    audit_mode: bool,
    low_relevance_line: float = 0.0,
    near_answer: NearAnswer | None = None,
) -> dict[str, Any]:
    lexical_max = max((c.bm25 for c in candidates), default=0.0)
    shown = pack_confidences([c.confidence for c in evidence], [c.relevance for c in evidence])
    pack = {
        "tenant_id": tenant_id,
        "outcome": verdict.outcome.value,
        "reason_codes": [r.value for r in verdict.reason_codes],
        "flags": dict(verdict.flags),
        "policy_like": plan.policy_like,
        "sensitivity": list(plan.sensitivity),
        "exception_request": plan.exception_request,
        "intents": list(plan.intents),
        "query_variants": [{"kind": v.kind, "text": v.text} for v in plan.variants],
        "evidence": [
            evidence_item(i, c, lexical_max, low_relevance_line, confidence)
            for i, (c, confidence) in enumerate(zip(evidence, shown, strict=True), start=1)
        ],
        "conflicts": [c.to_json() for c in verdict.conflicts],
        "candidate_count": len(candidates),
        "as_of": as_of,
        "audit_mode": audit_mode,
        "config_version": config_version,
    }
    if near_answer is not None:
        pack["near_answer"] = near_answer.to_json()
    return pack


def dumps_pack(pack: dict[str, Any]) -> str:
    """Canonical bytes: the same pack always serialises identically."""
    return json.dumps(pack, sort_keys=True, ensure_ascii=False, indent=2)


@lru_cache(maxsize=1)
def pack_schema() -> dict[str, Any]:
    text = (
        resources.files("kb_retrieval.retrieval").joinpath("evidence_pack.schema.json").read_text()
    )
    return json.loads(text)


def validate_pack(pack: dict[str, Any]) -> None:
    """Raise jsonschema.ValidationError when the pack breaks the published schema."""
    jsonschema.validate(pack, pack_schema(), format_checker=jsonschema.FormatChecker())
