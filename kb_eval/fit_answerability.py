"""Fit the answerability model on every operator of the golden sets and write it to the repository.

    python -m kb_eval.fit_answerability data/golden/golden.jsonl@2026-11-15 \
        ../shared/data/devset/golden.jsonl@2026-11-22 [--out kb_retrieval/retrieval/answerability.json]
        [--case-only | --ranker-only]

`--case-only` keeps the stored chunk model and fits only its recalibration and the case-level
model (`case_answerability.py`); `--ranker-only` keeps everything stored and refits only the
pairwise ranker (`ranker.py`, `answerability_fit.fit_ranker`). The recalibration and the case model are fitted on out-of-fold chunk
scores (each operator scored by the chunk model fitted on the others,
`answerability_fit.out_of_fold_scorers`). Each golden file is retrieved at its own as-of date
(PATH@YYYY-MM-DD). The model measured by `kb eval ... --cv tenant` is this fit, repeated with
one operator left out each time.
"""

from __future__ import annotations

import argparse
import json
from datetime import date
from pathlib import Path

from kb_eval.answerability_fit import (
    collect_rows,
    fit_answerability,
    fit_calibration,
    fit_case_model,
    fit_ranker,
    out_of_fold_scorers,
)
from kb_eval.cross_validation import load_case_sets, parse_golden_spec
from kb_retrieval.retrieval.answerability import MODEL_PATH, default_model
from kb_retrieval.retrieval.config import RetrievalConfig
from kb_retrieval.service import open_knowledge_base


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("golden", nargs="+", help="PATH or PATH@YYYY-MM-DD")
    parser.add_argument("--as-of", default=None, help="default as-of date for PATH without @")
    parser.add_argument("--out", type=Path, default=MODEL_PATH)
    parser.add_argument(
        "--case-only",
        action="store_true",
        help="keep the stored chunk model; refit its calibration and the case model",
    )
    parser.add_argument(
        "--ranker-only",
        action="store_true",
        help="keep the stored chunk, calibration and case models; refit the ranker",
    )
    args = parser.parse_args(argv)
    if args.case_only and args.ranker_only:
        parser.error("--case-only and --ranker-only refit different parts: choose one")
    default_day = date.fromisoformat(args.as_of) if args.as_of else date.today()
    sets = load_case_sets([parse_golden_spec(spec, default_day) for spec in args.golden])
    config = RetrievalConfig.from_env().model_copy(update={"cache_ttl_seconds": 0.0})
    kb = open_knowledge_base(config=config)
    kb.retriever.audit = False
    rows = collect_rows(kb.retriever, [(c, s.as_of) for s in sets for c in s.cases])
    tenants = sorted({r.tenant_id for r in rows})
    files = ", ".join(f"{s.path.parent.name}/{s.path.name}@{s.as_of}" for s in sets)
    fitted_on = f"{len(rows)} candidates of {len(tenants)} operators ({files})"
    if args.ranker_only:
        model = default_model().model_copy(update={"ranker": fit_ranker(rows, fitted_on)})
    elif args.case_only:
        stored = default_model()
        scorers = out_of_fold_scorers(rows)
        a, b = fit_calibration(rows, scorers)
        case = fit_case_model(rows, scorers, fitted_on)
        model = stored.model_copy(
            update={"case": case, "calibration_bias": a, "calibration_slope": b}
        )
    else:
        model = fit_answerability(rows, fitted_on=fitted_on)
    args.out.write_text(json.dumps(model.model_dump(), indent=2, sort_keys=True) + "\n")
    print(json.dumps(model.model_dump(), indent=2, sort_keys=True))


if __name__ == "__main__":
    main()
