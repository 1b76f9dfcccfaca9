"""Run a golden set through the same `retrieve` call `kb ask` uses; store the run in PostgreSQL."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

from psycopg.types.json import Jsonb

from kb_eval.golden import GoldenCase
from kb_eval.metrics import CaseResult, EvidenceRef, aggregate, case_details
from kb_retrieval.db.connection import Database
from kb_retrieval.retrieval.retriever import Retriever

INSERT_RUN = """
INSERT INTO eval_runs (run_id, kind, golden_path, golden_sha256, as_of, config_version, release_id, metrics)
VALUES (%s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (run_id) DO NOTHING
"""
INSERT_CASE = """
INSERT INTO eval_case_results (run_id, case_id, tenant_id, result) VALUES (%s, %s, %s, %s)
ON CONFLICT (run_id, case_id) DO NOTHING
"""


@dataclass
class EvalRun:
    run_id: str
    metrics: dict[str, Any]
    details: list[dict[str, Any]]
    results: dict[str, CaseResult]
    packs: dict[str, dict[str, Any]]


def _email_payload(case: GoldenCase) -> Any:
    email = case.email
    return email if isinstance(email, str) else email.model_dump(exclude_none=True)


def _refs(items: Sequence[Any]) -> list[EvidenceRef]:
    return [
        EvidenceRef(
            e["doc_version_id"],
            e["chunk_id"],
            e["text"],
            e["category"],
            e["confidence_score"],
            e.get("scores", {}).get("relevance", 0.0),
        )
        for e in items
    ]


def retrieve_case(retriever: Retriever, case: GoldenCase, as_of: date) -> Any:
    """The retrieval of one golden case: its e-mail, trip context and sensitivity."""
    trip = case.trip_context.model_dump(exclude_none=True) if case.trip_context else None
    return retriever.retrieve(
        case.tenant_id,
        _email_payload(case),
        as_of=as_of,
        trip_context=trip,
        sensitivity=list(case.sensitivity) or None,
    )


def case_result(case: GoldenCase, outcome: Any, case_probability: float | None) -> CaseResult:
    """What the metrics read of one retrieval (`outcome`: its pack and ranked candidates)."""
    pack = outcome.pack
    return CaseResult(
        case_id=case.case_id,
        outcome=pack["outcome"],
        reason_codes=list(pack["reason_codes"]),
        flags=dict(pack["flags"]),
        evidence=_refs(pack["evidence"]),
        candidates=[
            EvidenceRef(
                c.version.doc_version_id, c.chunk_id, c.text, c.version.category.value, c.confidence
            )
            for c in outcome.candidates
        ],
        confidence_top=max((e["confidence_score"] for e in pack["evidence"]), default=None),
        case_probability=case_probability,
        near_answer_cosine=(pack.get("near_answer") or {}).get("cosine"),
    )


def evaluate_cases(retriever: Retriever, cases: Sequence[GoldenCase], as_of: date) -> EvalRun:
    """Retrieve every case; compute the contract metrics and per-case details."""
    results: dict[str, CaseResult] = {}
    packs: dict[str, dict[str, Any]] = {}
    for case in cases:
        outcome = retrieve_case(retriever, case, as_of)
        packs[case.case_id] = outcome.pack
        results[case.case_id] = case_result(
            case,
            outcome,
            retriever.config.answerability.case_probability(
                [c.features for c in outcome.candidates]
            ),
        )
    details = case_details(list(cases), results)
    metrics = aggregate(details)
    digest = hashlib.sha256(
        json.dumps(
            [
                as_of.isoformat(),
                retriever.config.config_version,
                sorted(c.case_id for c in cases),
                metrics,
            ],
            sort_keys=True,
            default=str,
        ).encode()
    ).hexdigest()[:16]
    return EvalRun(f"eval-{digest}", metrics, details, results, packs)


def store_run(
    db: Database,
    run: EvalRun,
    *,
    golden_path: Path | None,
    as_of: date,
    config_version: str,
    release_id: str | None = None,
    kind: str = "golden",
) -> None:
    """Persist the run and its per-case results (idempotent on run_id)."""
    sha = hashlib.sha256(golden_path.read_bytes()).hexdigest() if golden_path else None
    with db.admin() as conn:
        conn.execute(
            INSERT_RUN,
            (
                run.run_id,
                kind,
                str(golden_path) if golden_path else None,
                sha,
                as_of,
                config_version,
                release_id,
                Jsonb(run.metrics),
            ),
        )
        with conn.cursor() as cur:
            cur.executemany(
                INSERT_CASE,
                [
                    (
                        run.run_id,
                        d["case_id"],
                        d.get("tenant_id", ""),
                        Jsonb(json.loads(json.dumps(d, default=str))),
                    )
                    for d in run.details
                ],
            )
