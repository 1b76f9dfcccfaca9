"""Draft metrics of spec 10.2 over drafts written by any system (`kb eval-drafts FILE.jsonl`).

A drafts file has one JSON object a line: {"case_id": str, "text": str, "citations": [...]},
where a citation is a chunk_id string or an object with a "chunk_id" (and optionally the other
fields of a citation, spec 3.5). Which claim a citation belongs to:

- inline markers in the text, "[1]" or "[1, 3]" (1-based positions in `citations`) or
  "[chunk_id]", cite the sentence they are in (markers are removed before claims are split);
- otherwise a citation object with a "claim" (or "sentence") string cites the claims that
  contain that text or are contained in it;
- otherwise (a plain list) every citation of the draft counts for every claim of the draft.

Claims come from kb_eval.judge.claims.split_claims (greetings and closings are not claims) and only
policy-like claims (kb_eval.judge.claims.is_policy_like) are counted:

- policy_citation_coverage: share of policy-like claims with at least one citation;
- unsupported_claim_rate: share of policy-like claims that their cited chunks do not support
  (kb_eval.judge.claim_judge); an uncited claim is unsupported;
- invented_policy_incidents: number of policy-like claims that no evidence of their case
  supports, judged against all evidence texts available for the case (`case_evidence`, or the
  resolvable cited chunks when no such callable is given).
With no policy-like claim at all, coverage is 1.0 and the unsupported rate 0.0.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kb_eval.judge.claim_judge import judge_claim
from kb_eval.judge.claims import is_policy_like, split_claims

EvidenceLookup = Callable[[str, str], str | None]
CaseEvidence = Callable[[str], Sequence[str]]
CitationRef = str | Mapping[str, Any]
_MARKER = re.compile(r"\s*\[([^\[\]]{1,200})\]")
_MARKERS_AFTER_STOP = re.compile(r"([.!?])((?:\s*\[[^\[\]]{1,200}\])+)")


class DraftFormatError(ValueError):
    """A drafts file line is not a valid draft record."""


@dataclass(frozen=True)
class DraftRecord:
    case_id: str
    text: str
    citations: tuple[CitationRef, ...] = ()


def citation_id(citation: CitationRef) -> str:
    """chunk_id of a citation given as a string or as an object."""
    return citation if isinstance(citation, str) else str(citation["chunk_id"])


def load_draft_records(path: str | Path) -> list[DraftRecord]:
    """Read a drafts JSONL file; errors name the file, the line and the field."""
    records = []
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            row = json.loads(line)
        except json.JSONDecodeError as error:
            raise DraftFormatError(f"{where}: invalid JSON ({error.msg})") from error
        if not isinstance(row, dict):
            raise DraftFormatError(f"{where}: expected a JSON object")
        if not isinstance(row.get("case_id"), str) or not row["case_id"].strip():
            raise DraftFormatError(f"{where}: field 'case_id' must be a non-empty string")
        if not isinstance(row.get("text"), str):
            raise DraftFormatError(f"{where}: field 'text' must be a string")
        citations = row.get("citations")
        if not isinstance(citations, list):
            raise DraftFormatError(f"{where}: field 'citations' must be a list")
        for index, citation in enumerate(citations):
            valid = isinstance(citation, str) or (
                isinstance(citation, dict) and isinstance(citation.get("chunk_id"), str)
            )
            if not valid:
                raise DraftFormatError(
                    f"{where}: field 'citations[{index}]' must be a chunk_id string or an object "
                    "with a string 'chunk_id'"
                )
        records.append(DraftRecord(row["case_id"], row["text"], tuple(citations)))
    return records


def _marker_ids(inner: str, ids: list[str]) -> list[str] | None:
    """Chunk ids named by the inside of a [..] marker, or None when it is not a citation."""
    parts = [part.strip() for part in inner.split(",")]
    if all(part.isdigit() for part in parts):
        return [ids[int(p) - 1] for p in parts if 1 <= int(p) <= len(ids)]
    if all(part in ids for part in parts):
        return parts
    return None


def _norm(text: str) -> str:
    return " ".join(text.lower().split()).rstrip(".!?")


def attribute_citations(record: DraftRecord) -> list[tuple[str, list[str]]]:
    """Claims of a draft, each with the chunk ids that cite it (see the module docstring)."""
    ids = [citation_id(citation) for citation in record.citations]
    markers = [m for m in _MARKER.finditer(record.text) if _marker_ids(m.group(1), ids) is not None]
    if markers:
        text = _MARKERS_AFTER_STOP.sub(lambda m: f"{m.group(2)}{m.group(1)}", record.text)
        result = []
        for claim_text in split_claims(text):
            cited: list[str] = []
            for m in _MARKER.finditer(claim_text):
                cited.extend(_marker_ids(m.group(1), ids) or ())

            def strip(match: re.Match[str]) -> str:
                return "" if _marker_ids(match.group(1), ids) is not None else match.group(0)

            clean = re.sub(
                r"\s+([.!?,;:])", r"\1", " ".join(_MARKER.sub(strip, claim_text).split())
            )
            if clean:
                result.append((clean, list(dict.fromkeys(cited))))
        return result
    claims = split_claims(record.text)
    claimed = [
        (citation_id(c), _norm(str(c.get("claim") or c.get("sentence"))))
        for c in record.citations
        if not isinstance(c, str) and (c.get("claim") or c.get("sentence"))
    ]
    if not claimed:
        return [(claim, list(dict.fromkeys(ids))) for claim in claims]
    draft_level = [
        citation_id(c)
        for c in record.citations
        if isinstance(c, str) or not (c.get("claim") or c.get("sentence"))
    ]
    result = []
    for claim in claims:
        key = _norm(claim)
        cited = [cid for cid, text in claimed if text and (text in key or key in text)]
        result.append((claim, list(dict.fromkeys(cited + draft_level))))
    return result


def grade_drafts(
    drafts: Iterable[DraftRecord],
    evidence_lookup: EvidenceLookup,
    case_evidence: CaseEvidence | None = None,
) -> dict[str, Any]:
    """The three draft metrics, their counts and a per-claim breakdown.

    evidence_lookup(case_id, chunk_id) gives the text of a cited chunk (None when unknown);
    case_evidence(case_id) gives every evidence text available for the case."""
    details: list[dict[str, Any]] = []
    policy = cited = unsupported = invented = unresolved = drafts_count = 0
    for record in drafts:
        drafts_count += 1
        resolved_cache: dict[str, str | None] = {}
        for claim, chunk_ids in attribute_citations(record):
            if not is_policy_like(claim):
                details.append({"case_id": record.case_id, "claim": claim, "policy_like": False})
                continue
            policy += 1
            texts = []
            for chunk_id in chunk_ids:
                if chunk_id not in resolved_cache:
                    resolved_cache[chunk_id] = evidence_lookup(record.case_id, chunk_id)
                    unresolved += resolved_cache[chunk_id] is None
                if resolved_cache[chunk_id] is not None:
                    texts.append(str(resolved_cache[chunk_id]))
            cited += bool(chunk_ids)
            verdict = judge_claim(claim, texts) if texts else None
            supported = verdict is not None and verdict.label == "supported"
            unsupported += not supported
            pool = list(case_evidence(record.case_id)) if case_evidence is not None else texts
            anywhere = supported or (bool(pool) and judge_claim(claim, pool).label == "supported")
            invented += not anywhere
            details.append(
                {
                    "case_id": record.case_id,
                    "claim": claim,
                    "policy_like": True,
                    "citations": chunk_ids,
                    "verdict": verdict.label if verdict else "uncited",
                    "reason": verdict.reason if verdict else "no resolvable citation",
                    "invented": not anywhere,
                }
            )
    return {
        "policy_citation_coverage": cited / policy if policy else 1.0,
        "unsupported_claim_rate": unsupported / policy if policy else 0.0,
        "invented_policy_incidents": invented,
        "drafts": drafts_count,
        "policy_claims": policy,
        "cited_policy_claims": cited,
        "unsupported_policy_claims": unsupported,
        "unresolved_citations": unresolved,
        "details": details,
    }
