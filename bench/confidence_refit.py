"""The verdict's confidence refitted in every fold of leave-one-operator-out (issue 12, session 17).

    KB_HOME=... python -m bench.confidence_refit [GOLDEN@AS_OF ...] [--top-k 1] [--label doc] --json

`kb eval --cv tenant` refits the answerability model (chunk, case, ranker) per fold but keeps the
verdict's confidence, the session-3 lexical model `CONFIDENCE_MODEL`, as stored: it was fitted on
the tune split of `data/golden`, so it is in sample for those two operators. Here each fold also
refits that model's recipe (`kb_eval/fit_confidence.py`: a logistic over cosine, coverage,
saturated BM25 and passage coverage with non-negative weights) on the other operators' cases:
the `--top-k` best-ranked candidates of each case, labelled by `--label` (`doc`: a chunk of an
answering version, the session-3 label; `quote`: a chunk holding a quote; `answerable`: the case
has relevant items). The held-out operator runs through `retrieve` with both fitted models.
Prints what `kb eval --cv tenant --json` prints, plus each fold's confidence model.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Sequence
from datetime import date
from typing import Any

import numpy as np

from bench.common import base_parser, log
from kb_eval.answerability_fit import Row, collect_rows, fit_answerability
from kb_eval.cross_validation import (
    HeldOut,
    clone_retriever,
    cv_report,
    load_case_sets,
    parse_golden_spec,
    protocol_config,
)
from kb_eval.fit_confidence import features, fit_nonnegative
from kb_eval.golden_eval import evaluate_cases
from kb_retrieval.retrieval.config import ConfidenceModel, RetrievalConfig
from kb_retrieval.service import open_knowledge_base

GOLDEN = [
    "data/golden/golden.jsonl@2026-11-15",
    "/work/shared/data/devset/golden.jsonl@2026-11-22",
]
LABELS = ("doc", "quote", "answerable")


def target(row: Row, label: str) -> float:
    """The row's label for the refit: `quote` (holds a quote), `answerable` (its case has
    relevant items) or `doc` (a chunk of an answering version, the session-3 label)."""
    if label == "quote":
        return float(row.label)
    if label == "answerable":
        return float(row.case_answerable)
    return float(row.label or row.answering_version)


def fit_lexical(
    rows: Sequence[Row], top_k: int, label: str, bm25_half: float = 8.0
) -> ConfidenceModel:
    """The session-3 recipe on `rows`: the `top_k` best-ranked candidates of each case."""
    chosen = [r for r in rows if r.rank < top_k]
    x = np.array([features(*r.lexical[:3], bm25_half, r.lexical[3]) for r in chosen])
    w = fit_nonnegative(x, np.array([target(r, label) for r in chosen]))
    return ConfidenceModel(
        bias=w[0], w_vector=w[1], w_coverage=w[2], w_bm25=w[3], w_passage=w[4], bm25_half=bm25_half
    )


def run(specs: Sequence[str], top_k: int, label: str) -> dict[str, Any]:
    kb = open_knowledge_base()
    base: RetrievalConfig = protocol_config(kb.retriever)
    sets = load_case_sets([parse_golden_spec(s, date(2026, 11, 15)) for s in specs])
    dated = [(case, s.as_of) for s in sets for case in s.cases]
    log(f"collecting the candidates of {len(dated)} cases")
    rows = collect_rows(clone_retriever(kb.retriever, base), dated)
    half = base.confidence.bm25_half
    folds: dict[str, HeldOut] = {}
    for tenant in sorted({case.tenant_id for case, _ in dated}):
        model = fit_answerability(
            [r for r in rows if r.tenant_id != tenant],
            fitted_on=f"leave-one-out: all but {tenant}",
            calibration_label="answerable",
            ranker=base.learned_ranker,
        )
        confidence = fit_lexical([r for r in rows if r.tenant_id != tenant], top_k, label, half)
        config = base.model_copy(update={"answerability": model, "confidence": confidence})
        fold = clone_retriever(kb.retriever, config)
        held = HeldOut([], [], {}, {"confidence": confidence.model_dump()})
        for case_set in sets:
            cases = [c for c in case_set.cases if c.tenant_id == tenant]
            if cases:
                result = evaluate_cases(fold, cases, case_set.as_of)
                held.details.extend(result.details)
                held.cases.extend(cases)
                held.results.update(result.results)
        folds[tenant] = held
        log(f"{tenant}: {confidence}")
    report = cv_report(
        sets, folds, config_version=base.config_version, training_rows=len(rows), refit=True
    )
    report["confidence_refit"] = {"top_k": top_k, "label": label}
    return report


def main(argv: list[str] | None = None) -> None:
    parser = base_parser(__doc__.splitlines()[0])
    parser.add_argument("golden", nargs="*", default=GOLDEN)
    parser.add_argument("--top-k", type=int, default=1, help="best-ranked candidates per case")
    parser.add_argument("--label", choices=LABELS, default="doc")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    report = run(args.golden, args.top_k, args.label)
    report["wall_s"] = round(time.perf_counter() - started, 1)
    pooled = report["pooled"]
    summary = {k: pooled[k] for k in ("outcome_accuracy", "unsafe_passes", "answerable_unknown")}
    log(f"pooled: {summary}")
    json.dump(report if args.json else summary, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
