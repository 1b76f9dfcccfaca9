"""Draft metrics over golden cases: evidence from each case's retrieve call, drafts graded.

`evidence_sources` turns the packs (and candidates) of one evaluation run into the two callables
`grade_drafts` needs; `grade_golden_drafts` drafts every golden case from its pack (extractive
drafter by default) and grades the drafts, as the release evaluation does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kb_eval.drafts.drafters import Draft, Drafter, ExtractiveDrafter
from kb_eval.drafts.metrics import CaseEvidence, DraftRecord, EvidenceLookup, grade_drafts
from kb_eval.golden import GoldenCase
from kb_eval.metrics import EvidenceRef

DRAFT_METRICS = ("policy_citation_coverage", "unsupported_claim_rate", "invented_policy_incidents")


def pack_texts(pack: Mapping[str, Any]) -> dict[str, str]:
    """chunk_id -> full text of every evidence item of a pack, in pack order."""
    return {
        str(item["chunk_id"]): str(item.get("text") or item.get("snippet") or "")
        for item in pack.get("evidence") or ()
        if item.get("chunk_id")
    }


def evidence_sources(
    packs: Mapping[str, Mapping[str, Any]],
    candidates: Mapping[str, Sequence[EvidenceRef]] | None = None,
) -> tuple[EvidenceLookup, CaseEvidence]:
    """(evidence_lookup, case_evidence) of one retrieval per case.

    A citation resolves to a chunk of the case's pack, else to one of its candidates (a chunk the
    same retrieve call returned before the pack cut-off); `case_evidence` is the pack's texts.
    """
    in_pack = {case_id: pack_texts(pack) for case_id, pack in packs.items()}
    lookup_texts = {
        case_id: {
            **{ref.chunk_id: ref.text for ref in (candidates or {}).get(case_id, ())},
            **texts,
        }
        for case_id, texts in in_pack.items()
    }

    def evidence_lookup(case_id: str, chunk_id: str) -> str | None:
        return lookup_texts.get(case_id, {}).get(chunk_id)

    def case_evidence(case_id: str) -> list[str]:
        return list(in_pack.get(case_id, {}).values())

    return evidence_lookup, case_evidence


def draft_cases(
    cases: Sequence[GoldenCase],
    packs: Mapping[str, Mapping[str, Any]],
    drafter: Drafter | None = None,
) -> list[Draft]:
    """One draft per case, written from the case's pack and latest guest message."""
    writer = drafter or ExtractiveDrafter()
    missing = [case.case_id for case in cases if case.case_id not in packs]
    if missing:
        raise KeyError(f"no evidence pack for cases {missing}")
    return [writer.draft(packs[case.case_id], case.email_text, case.case_id) for case in cases]


def draft_records(drafts: Sequence[Draft]) -> list[DraftRecord]:
    """Drafts as `kb eval-drafts` reads them (citations attributed to their sentences)."""
    records = []
    for draft in drafts:
        record = draft.to_record()
        records.append(
            DraftRecord(str(record["case_id"]), record["text"], tuple(record["citations"]))
        )
    return records


def grade_golden_drafts(
    cases: Sequence[GoldenCase],
    packs: Mapping[str, Mapping[str, Any]],
    candidates: Mapping[str, Sequence[EvidenceRef]] | None = None,
    drafter: Drafter | None = None,
) -> dict[str, Any]:
    """Draft every case from its pack and grade the drafts (result of `grade_drafts`)."""
    records = draft_records(draft_cases(cases, packs, drafter))
    lookup, case_evidence = evidence_sources(packs, candidates)
    return grade_drafts(records, lookup, case_evidence)
