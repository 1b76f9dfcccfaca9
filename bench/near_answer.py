"""The near-answer line chosen leaving one operator out (issue 12, session 18).

    KB_HOME=... python -m bench.near_answer [GOLDEN@AS_OF ...] [--json]

`near_answer_threshold` sends an e-mail with no usable chunk to review instead of `UNKNOWN` when
a candidate's guest-facing sentence is that close to the question (near_answer.py). Looking at
outcomes alone would never move the line: an answerable e-mail is wrong as `UNKNOWN` and as
`NEEDS_REVIEW` alike. So the line is chosen for what it is for. Moving an e-mail gains one when
it expects `OK_TO_DRAFT` (one answerable e-mail fewer ends `UNKNOWN`) or `NEEDS_REVIEW` (one more
correct outcome), loses one when it expects `UNKNOWN`, and is neutral otherwise.

The protocol: one `kb eval --cv tenant` pass (every fold refits its models) with the line out of
reach, so that each e-mail ending `UNKNOWN` records its nearest sentence's cosine
(`near_answer_cosine`). For each held-out operator the line is chosen on the other operators'
e-mails: the gap between two neighbouring cosines with the highest total gain (the highest such
gap on a tie), and its midpoint; no line when no gap gains. The held-out operator's e-mails are
then moved by its fold's line. Prints the pooled figures with the chosen lines, each fold's line,
the line the rule picks on all operators, and a sweep of fixed lines.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Mapping, Sequence
from datetime import date
from typing import Any

from bench.common import REPO, base_parser, log
from kb_eval.cross_validation import (
    clone_retriever,
    cv_report,
    load_case_sets,
    parse_golden_spec,
    protocol_config,
    run_folds,
)
from kb_retrieval.service import open_knowledge_base

GOLDEN = [
    "data/golden/golden.jsonl@2026-11-15",
    f"{REPO.parent / 'shared/data/devset/golden.jsonl'}@2026-11-22",
]
OUT_OF_REACH = 2.0
GAIN = {"OK_TO_DRAFT": 1, "NEEDS_REVIEW": 1, "UNKNOWN": -1}
SWEEP = [round(0.55 + 0.01 * i, 2) for i in range(26)]


def movable(details: Sequence[Mapping[str, Any]]) -> list[tuple[float, str]]:
    """(cosine, expected outcome) of the e-mails the line can move: ending `UNKNOWN` with a
    nearest sentence."""
    return [
        (float(d["near_answer_cosine"]), str(d["expected_outcome"]))
        for d in details
        if d["outcome"] == "UNKNOWN" and d.get("near_answer_cosine") is not None
    ]


def gain(cases: Sequence[tuple[float, str]], line: float | None) -> int:
    """What moving the e-mails at `line` or above gains (module doc); None moves nothing."""
    if line is None:
        return 0
    return sum(GAIN.get(expected, 0) for cosine, expected in cases if cosine >= line)


def choose_line(cases: Sequence[tuple[float, str]]) -> float | None:
    """The midpoint of the highest-gain gap between neighbouring cosines (the highest gap on
    a tie); None when no gap gains more than moving nothing."""
    cosines = sorted({cosine for cosine, _ in cases}, reverse=True)
    best: tuple[int, float] | None = None
    for upper, lower in zip(cosines, [*cosines[1:], None], strict=True):
        line = upper if lower is None else (upper + lower) / 2
        total = gain(cases, line)
        if total > 0 and (best is None or total > best[0]):
            best = (total, line)
    return None if best is None else round(best[1], 4)


def moved_details(details: Sequence[dict[str, Any]], line: float | None) -> list[dict[str, Any]]:
    """The held-out details with the e-mails at the line or above moved to `NEEDS_REVIEW`."""
    out = []
    for d in details:
        cosine = d.get("near_answer_cosine")
        if line is not None and d["outcome"] == "UNKNOWN" and cosine is not None and cosine >= line:
            d = {
                **d,
                "outcome": "NEEDS_REVIEW",
                "outcome_correct": d["expected_outcome"] == "NEEDS_REVIEW",
            }
        out.append(d)
    return out


def tally(details: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """Correct outcomes, unsafe passes and answerable e-mails ending `UNKNOWN`."""
    return {
        "correct": sum(bool(d["outcome_correct"]) for d in details),
        "unsafe": sum(bool(d["unsafe_pass"]) for d in details),
        "answerable_unknown": sum(
            d["expected_outcome"] == "OK_TO_DRAFT" and d["outcome"] == "UNKNOWN" for d in details
        ),
        "cases": len(details),
    }


def nested_lines(by_tenant: Mapping[str, Sequence[dict[str, Any]]]) -> dict[str, Any]:
    """Each fold's line chosen on the others, and the held-out figures it gives."""
    chosen: dict[str, float | None] = {}
    held: list[dict[str, Any]] = []
    for tenant in sorted(by_tenant):
        others = [d for t, ds in by_tenant.items() if t != tenant for d in ds]
        chosen[tenant] = choose_line(movable(others))
        held.extend(moved_details(by_tenant[tenant], chosen[tenant]))
    return {"chosen": chosen, "held_out": tally(held)}


def run(specs: Sequence[str]) -> dict[str, Any]:
    kb = open_knowledge_base()
    base = protocol_config(kb.retriever).model_copy(update={"near_answer_threshold": OUT_OF_REACH})
    sets = load_case_sets([parse_golden_spec(s, date(2026, 11, 15)) for s in specs])
    log("leave-one-operator-out with the near-answer line out of reach")
    folds, rows = run_folds(clone_retriever(kb.retriever, base), sets)
    by_tenant = {tenant: held.details for tenant, held in folds.items()}
    every = [d for ds in by_tenant.values() for d in ds]
    nested = nested_lines(by_tenant)
    report = cv_report(
        sets, folds, config_version=base.config_version, training_rows=rows, refit=True
    )
    report["near_answer"] = {
        "without_line": tally(every),
        "nested": nested,
        "all_operators_line": choose_line(movable(every)),
        "movable": sorted(movable(every), reverse=True),
        "sweep": {str(line): tally(moved_details(every, line)) for line in SWEEP},
    }
    return report


def main(argv: list[str] | None = None) -> None:
    parser = base_parser(__doc__.splitlines()[0])
    parser.add_argument("golden", nargs="*", default=GOLDEN)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    report = run(args.golden)
    report["wall_s"] = round(time.perf_counter() - started, 1)
    summary = {k: v for k, v in report["near_answer"].items() if k not in ("movable", "sweep")}
    log(f"near answer: {summary}")
    json.dump(report if args.json else summary, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
