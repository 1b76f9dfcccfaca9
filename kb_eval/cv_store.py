"""A leave-one-operator-out report stored with its release: the run in `eval_runs` (pooled
figures as metrics, per-case results in `eval_case_results`) and one `eval_operator_results`
row per held-out operator (migration 0009). Owner session only: release-level data."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from psycopg.types.json import Jsonb

from kb_eval.cross_validation import CaseSet
from kb_eval.golden_eval import INSERT_CASE, INSERT_RUN
from kb_retrieval.db.connection import Database

KIND = "release_generalisation"
INSERT_OPERATOR = """
INSERT INTO eval_operator_results (run_id, tenant_id, golden_path, as_of, figures, model)
VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (run_id, tenant_id) DO NOTHING
"""
SELECT_LATEST = """
SELECT run_id, metrics FROM eval_runs WHERE release_id = %s AND kind = %s
ORDER BY created_at DESC, run_id DESC LIMIT 1
"""
SELECT_OPERATORS = """
SELECT tenant_id, figures FROM eval_operator_results WHERE run_id = %s ORDER BY tenant_id
"""


@dataclass(frozen=True)
class StoredGeneralisation:
    """The latest stored leave-one-operator-out run of a release."""

    run_id: str
    pooled: dict[str, Any]
    per_operator: dict[str, dict[str, Any]]


def golden_digest(sets: Sequence[CaseSet]) -> str:
    """sha256 over every golden file's path, date and bytes, in the order given."""
    digest = hashlib.sha256()
    for case_set in sets:
        digest.update(f"{case_set.path}@{case_set.as_of.isoformat()}\n".encode())
        digest.update(hashlib.sha256(case_set.path.read_bytes()).digest())
    return digest.hexdigest()


def run_id_of(release_id: str, sets: Sequence[CaseSet], report: dict[str, Any]) -> str:
    """Deterministic: the same release, golden files and figures give the same id."""
    content = json.dumps(
        [golden_digest(sets), report["config_version"], report["pooled"], report["per_operator"]],
        sort_keys=True,
        default=str,
    )
    return f"{release_id}-loo-{hashlib.sha256(content.encode()).hexdigest()[:16]}"


def store_generalisation(
    db: Database, release_id: str, sets: Sequence[CaseSet], report: dict[str, Any]
) -> str:
    """Persist a `cross_validate` report of the release (idempotent on its run id)."""
    run_id = run_id_of(release_id, sets, report)
    golden = ",".join(f"{s.path}@{s.as_of.isoformat()}" for s in sets)
    file_of = {case.tenant_id: s for s in sets for case in s.cases}
    with db.admin() as conn:
        conn.execute(
            INSERT_RUN,
            (
                run_id,
                KIND,
                golden,
                golden_digest(sets),
                None,
                report["config_version"],
                release_id,
                Jsonb(_plain(report["pooled"])),
            ),
        )
        with conn.cursor() as cur:
            cur.executemany(
                INSERT_OPERATOR,
                [
                    (
                        run_id,
                        tenant,
                        str(file_of[tenant].path),
                        file_of[tenant].as_of,
                        Jsonb(_plain(figures)),
                        Jsonb(_plain(report["models"][tenant]))
                        if tenant in report["models"]
                        else None,
                    )
                    for tenant, figures in report["per_operator"].items()
                ],
            )
            cur.executemany(
                INSERT_CASE,
                [
                    (run_id, d["case_id"], d.get("tenant_id", ""), Jsonb(_plain(d)))
                    for d in report["details"]
                ],
            )
    return run_id


def latest_generalisation(db: Database, release_id: str) -> StoredGeneralisation | None:
    """The release's latest stored run, or None when it has none."""
    with db.admin() as conn:
        row = conn.execute(SELECT_LATEST, (release_id, KIND)).fetchone()
        if row is None:
            return None
        operators = conn.execute(SELECT_OPERATORS, (row[0],)).fetchall()
    return StoredGeneralisation(row[0], dict(row[1]), {t: dict(f) for t, f in operators})


def _plain(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))
