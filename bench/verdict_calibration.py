"""Recalibrations of the verdict's confidence, measured leave one operator out (issue 12).

    KB_HOME=... python -m bench.verdict_calibration [GOLDEN@AS_OF ...] > out.json

For each held-out operator: the answerability model is fitted on the five others exactly as
`kb eval --cv tenant` fits it, each held-out case is retrieved once with that model, and the
retrieval's last step (`Retriever._finish`: pack selection, verdict, pack) is re-run with only
the candidates' verdict confidence changed by each variant of `kb_eval/fit_verdict_confidence.py`.
Each variant is fitted on the five training operators' cases only (their case probability from a
case model that has not seen them either), so the held-out operator never fits anything.
Besides `VARIANTS`: Platt, isotonic and two-input applied to the most confident candidate only
(`*_top_only`; the others keep their confidence for the evidence rules), Platt and two-input on
the label "the case expects OK_TO_DRAFT" (`*_label_draft`), and, with `--shifted NAME --shift X`,
NAME's map moved by X log-odds (a diagnostic of the trade-off, no longer calibrated).
Reports as JSON, per variant: pooled and per-operator outcome accuracy, unsafe passes (listed
with their reasons), answerable e-mails ending UNKNOWN / NEEDS_REVIEW, and the expected
calibration error of the top confidence per held-out operator, against "the case has relevant
items" (what the variants are calibrated for) and against "the top chunk holds a quote".
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import date
from typing import Any

from kb_eval.answerability_fit import Row, collect_rows, fit_answerability
from kb_eval.calibration import expected_calibration_error, top_chunk_pairs
from kb_eval.cross_validation import clone_retriever, load_case_sets, parse_golden_spec
from kb_eval.fit_verdict_confidence import (
    VARIANTS,
    CaseScore,
    ConfidenceMap,
    Fit,
    case_scores,
    logit,
    nested_case_scores,
    sigmoid,
)
from kb_eval.golden import GoldenCase
from kb_eval.golden_eval import case_result, retrieve_case
from kb_eval.metrics import CaseResult, aggregate, case_details
from kb_eval.separation import top_confidence_pairs
from kb_retrieval.retrieval.config import RetrievalConfig
from kb_retrieval.retrieval.retriever import Retriever
from kb_retrieval.service import open_knowledge_base

TOP_ONLY = "_top_only"
GOLDEN = [
    "data/golden/golden.jsonl@2026-11-15",
    "/work/shared/data/devset/golden.jsonl@2026-11-22",
]


class CapturingRetriever(Retriever):
    """A retriever that keeps the arguments of its last `_finish` call (to re-run it)."""

    last: tuple[Any, ...] = ()

    def _finish(self, *args: Any) -> Any:
        self.last = args
        return super()._finish(*args)


@dataclass
class _Held:
    case: GoldenCase
    args: tuple[Any, ...]
    original: list[float]
    case_probability: float


def _clone(retriever: Retriever, config: RetrievalConfig) -> CapturingRetriever:
    return clone_retriever(retriever, config, CapturingRetriever)  # type: ignore[return-value]


def _retrieve(fold: CapturingRetriever, case: GoldenCase, as_of: date) -> _Held:
    retrieve_case(fold, case, as_of)
    args = fold.last
    pool = args[2]
    q = fold.config.answerability.case_probability([c.features for c in pool]) or 0.0
    return _Held(case, args, [c.confidence for c in pool], q)


def _rerun(
    fold: CapturingRetriever, held: _Held, mapping: Callable[[float, float], float], top_only: bool
) -> CaseResult:
    """`_finish` again with every candidate's confidence mapped by (confidence, case q)
    (`top_only`: only the most confident candidate's; the others keep theirs)."""
    pool = held.args[2]
    top = max(range(len(pool)), key=lambda i: (held.original[i], -i), default=-1)
    confidences = [
        mapping(value, held.case_probability) if i == top or not top_only else value
        for i, value in enumerate(held.original)
    ]
    return finish_with(fold, held, confidences)


def finish_with(fold: Retriever, held: _Held, confidences: Sequence[float]) -> CaseResult:
    """`Retriever._finish` again with the candidates' confidences set to `confidences` (the
    captured candidates get their original confidences back afterwards)."""
    pool = held.args[2]
    for cand, value in zip(pool, confidences, strict=True):
        cand.confidence = value
    args = list(held.args)
    args[7] = dict(args[7])
    result = case_result(held.case, Retriever._finish(fold, *args), held.case_probability)
    for cand, value in zip(pool, held.original, strict=True):
        cand.confidence = value
    return result


def _figures(cases: Sequence[GoldenCase], results: dict[str, CaseResult]) -> dict[str, Any]:
    details = case_details(list(cases), results)
    answerable = [d for d in details if d["expected_outcome"] == "OK_TO_DRAFT"]
    metrics = aggregate(details)
    return {
        "cases": len(details),
        "outcome_accuracy": round(metrics["outcome_accuracy"], 4),
        "correct": sum(1 for d in details if d["outcome_correct"]),
        "recall_at_10": round(metrics["recall_at_10"], 4),
        "flag_accuracy": round(metrics["flag_accuracy"], 4),
        "unsafe": [
            {
                "case_id": d["case_id"],
                "expected": d["expected_outcome"],
                "reasons": d["reason_codes"],
            }
            for d in details
            if d["unsafe_pass"]
        ],
        "answerable_unknown": sum(1 for d in answerable if d["outcome"] == "UNKNOWN"),
        "answerable_review": sum(1 for d in answerable if d["outcome"] == "NEEDS_REVIEW"),
        "ece_top_answerable": round(expected_calibration_error(top_confidence_pairs(details)), 4),
        "ece_top_chunk": round(expected_calibration_error(top_chunk_pairs(cases, results)), 4),
    }


def shifted(fit: Fit, shift: float) -> Fit:
    """A diagnostic: `fit`'s map moved by `shift` on the log-odds scale (no longer calibrated;
    equivalent to moving the 0.65 / 0.72 lines), to trace the trade-off a score allows."""

    def fit_shifted(training: Sequence[CaseScore]) -> tuple[ConfidenceMap, dict[str, Any]]:
        mapping, fitted = fit(training)
        return (lambda c, q: sigmoid(logit(mapping(c, q)) + shift)), {**fitted, "shift": shift}

    return fit_shifted


def relabelled(fit: Fit, drafted: dict[str, bool]) -> Fit:
    """`fit` on the label "the golden case expects OK_TO_DRAFT" instead of "has relevant items"."""

    def fit_relabelled(training: Sequence[CaseScore]) -> tuple[ConfidenceMap, dict[str, Any]]:
        return fit([replace(c, answerable=drafted[c.case_id]) for c in training])

    return fit_relabelled


def measure(
    retriever: Retriever,
    specs: Sequence[tuple[Any, date]],
    variants: dict[str, Fit] | None = None,
) -> dict[str, Any]:
    """Every variant's figures, leave one operator out."""
    sets = load_case_sets(specs)
    variants = dict(variants or VARIANTS)
    drafted = {c.case_id: c.expected_outcome.value == "OK_TO_DRAFT" for s in sets for c in s.cases}
    for name in ("platt", "two_input"):
        variants[f"{name}_label_draft"] = relabelled(VARIANTS[name], drafted)
    for name in ("platt", "isotonic", "two_input"):
        variants[name + TOP_ONLY] = VARIANTS[name]
    base = retriever.config.model_copy(update={"cache_ttl_seconds": 0.0})
    dated = [(case, s.as_of) for s in sets for case in s.cases]
    rows: list[Row] = collect_rows(_clone(retriever, base), dated)
    tenants = sorted({case.tenant_id for case, _ in dated})
    results: dict[str, dict[str, CaseResult]] = {name: {} for name in variants}
    per_operator: dict[str, dict[str, Any]] = {name: {} for name in variants}
    params: dict[str, dict[str, Any]] = {name: {} for name in variants}
    for tenant in tenants:
        train = [r for r in rows if r.tenant_id != tenant]
        model = fit_answerability(train, fitted_on=f"all but {tenant}", ranker=base.learned_ranker)
        fold = _clone(retriever, base.model_copy(update={"answerability": model}))
        held = [_retrieve(fold, case, as_of) for case, as_of in dated if case.tenant_id == tenant]
        training = nested_case_scores(train)
        for name, fit in variants.items():
            mapping, fitted = fit(training)
            params[name][tenant] = fitted
            top_only = name.endswith(TOP_ONLY)
            fold_results = {h.case.case_id: _rerun(fold, h, mapping, top_only) for h in held}
            results[name].update(fold_results)
            per_operator[name][tenant] = _figures([h.case for h in held], fold_results)
    cases = [case for case, _ in dated]
    report: dict[str, Any] = {"training_cases": len(case_scores(rows)), "variants": {}}
    for name in variants:
        report["variants"][name] = {
            "pooled": _figures(cases, results[name]),
            "per_operator": per_operator[name],
            "fitted": params[name],
        }
    return report


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("golden", nargs="*", default=GOLDEN)
    parser.add_argument(
        "--shift",
        type=float,
        action="append",
        default=[],
        help="also each variant of --shifted moved by this many log-odds (a diagnostic)",
    )
    parser.add_argument("--shifted", action="append", default=[], help="a variant name")
    args = parser.parse_args(argv)
    variants = dict(VARIANTS)
    for name in args.shifted:
        for shift in args.shift:
            variants[f"{name}{shift:+g}"] = shifted(VARIANTS[name], shift)
    specs = [parse_golden_spec(spec, date(2026, 11, 15)) for spec in args.golden]
    kb = open_knowledge_base(config=RetrievalConfig.from_env())
    kb.retriever.audit = False
    report = measure(kb.retriever, specs, variants)
    print(json.dumps(report, indent=1, sort_keys=True))


if __name__ == "__main__":
    main()
