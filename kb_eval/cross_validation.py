"""Leave-one-operator-out evaluation: every fitted number is fitted without the operator it is measured on.

For each operator (tenant) of the golden sets: the answerability model is fitted on the candidates
of every other operator's cases, then that operator's cases run through the same `retrieve` call
`kb ask` uses with the fold's model. Each golden file keeps its own as-of date. Figures per
operator and pooled over all held-out cases, with the expected calibration error per operator.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

from kb_eval.answerability_fit import Row, collect_rows, fit_answerability
from kb_eval.calibration import (
    case_confidence_pairs,
    chunk_confidence_pairs,
    ece_noise_floor,
    expected_calibration_error,
    outcome_confusion,
    top_chunk_pairs,
)
from kb_eval.golden import GoldenCase, load_golden
from kb_eval.golden_eval import evaluate_cases
from kb_eval.metrics import aggregate
from kb_eval.separation import case_probability_pairs, separation, top_confidence_pairs
from kb_retrieval.db.connection import Database
from kb_retrieval.retrieval.config import RetrievalConfig
from kb_retrieval.retrieval.retriever import Retriever

CV_MODES = ("tenant",)


@dataclass(frozen=True)
class CaseSet:
    """One golden file and the date its cases are judged at."""

    path: Path
    as_of: date
    cases: tuple[GoldenCase, ...]


def parse_golden_spec(spec: str, default_as_of: date) -> tuple[Path, date]:
    """`PATH` or `PATH@YYYY-MM-DD` (the file's own as-of date; default `default_as_of`)."""
    path, sep, day = spec.rpartition("@")
    if not sep:
        return Path(spec), default_as_of
    try:
        return Path(path), date.fromisoformat(day)
    except ValueError as error:
        raise ValueError(f"{spec}: the part after @ must be an ISO date") from error


def load_case_sets(specs: Sequence[tuple[Path, date]]) -> list[CaseSet]:
    """Load every golden file; a case id or an operator may appear in one file only."""
    sets, seen_cases, owner = [], set(), {}
    for path, as_of in specs:
        cases = tuple(load_golden(path))
        for case in cases:
            if case.case_id in seen_cases:
                raise ValueError(f"{path}: case_id {case.case_id!r} appears in two golden files")
            seen_cases.add(case.case_id)
            if owner.setdefault(case.tenant_id, path) != path:
                raise ValueError(
                    f"{path}: tenant {case.tenant_id!r} also appears in {owner[case.tenant_id]}"
                )
        sets.append(CaseSet(path, as_of, cases))
    return sets


def _dated(sets: Sequence[CaseSet]) -> list[tuple[GoldenCase, date]]:
    return [(case, s.as_of) for s in sets for case in s.cases]


def _answerable_unknown(details: Sequence[dict[str, Any]]) -> dict[str, float | int]:
    answerable = [d for d in details if d["expected_outcome"] == "OK_TO_DRAFT"]
    unknown = sum(1 for d in answerable if d["outcome"] == "UNKNOWN")
    return {
        "answerable": len(answerable),
        "answerable_unknown": unknown,
        "answerable_unknown_rate": unknown / len(answerable) if answerable else 0.0,
    }


def _best_chunk(details: Sequence[dict[str, Any]]) -> dict[str, float | int]:
    """How many answerable cases (expecting OK_TO_DRAFT) have a relevant quote in the pack's
    first chunk (the learned ranker's target, docs/retrieval.md section 7, session 8)."""
    answerable = [d for d in details if d["expected_outcome"] == "OK_TO_DRAFT"]
    holds = sum(1 for d in answerable if d["pack_gains"][:1] == [1])
    return {
        "best_chunk_quote": holds,
        "best_chunk_quote_rate": holds / len(answerable) if answerable else 0.0,
    }


def _confusion(details: Sequence[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """Pooled counts: expected outcome -> produced outcome -> cases."""
    frame = outcome_confusion((d["expected_outcome"], d["outcome"]) for d in details)
    return {str(e): {str(a): int(frame.loc[e, a]) for a in frame.columns} for e in frame.index}


def _figures(cases: Sequence[GoldenCase], run_details: list[dict[str, Any]], results: Any) -> dict:
    metrics = dict(aggregate(run_details))
    metrics.update(_answerable_unknown(run_details))
    metrics.update(_best_chunk(run_details))
    metrics["cases"] = len(run_details)
    metrics["unsafe_passes"] = sum(1 for d in run_details if d["unsafe_pass"])
    metrics["ece_chunks"] = expected_calibration_error(chunk_confidence_pairs(cases, results))
    top = top_chunk_pairs(cases, results)
    metrics["ece_top_chunk"] = expected_calibration_error(top)
    # What a perfectly calibrated top confidence would show on these cases (sampling alone).
    metrics["ece_top_chunk_floor"] = ece_noise_floor(top)
    metrics["ece_cases"] = expected_calibration_error(case_confidence_pairs(cases, results))
    metrics["ece_chunk_probability"] = expected_calibration_error(
        chunk_confidence_pairs(cases, results, score="relevance")
    )
    metrics["ece_case_probability"] = expected_calibration_error(
        case_probability_pairs(run_details)
    )
    metrics["ece_top_answerable"] = expected_calibration_error(top_confidence_pairs(run_details))
    metrics.update(separation(run_details))
    return metrics


@dataclass
class HeldOut:
    """One held-out operator's run: its cases, their details and results, the fold's model."""

    cases: list[GoldenCase]
    details: list[dict[str, Any]]
    results: dict[str, Any]
    model: dict[str, Any] | None = None


def protocol_config(retriever: Retriever) -> RetrievalConfig:
    """The retriever's configuration as every fold runs it (retrieval cache off)."""
    return retriever.config.model_copy(update={"cache_ttl_seconds": 0.0})


def run_folds(
    retriever: Retriever,
    sets: Sequence[CaseSet],
    *,
    refit: bool = True,
    calibration_label: str = "answerable",
) -> tuple[dict[str, HeldOut], int]:
    """Each operator's cases run with the model fitted on the others (refit=False: the stored
    model); also the number of training rows collected."""
    base = protocol_config(retriever)
    dated = _dated(sets)
    tenants = sorted({case.tenant_id for case, _ in dated})
    rows: list[Row] = []
    if refit:
        rows = collect_rows(clone_retriever(retriever, base), dated)
    folds: dict[str, HeldOut] = {}
    for tenant in tenants:
        config = base
        held = HeldOut([], [], {})
        if refit:
            train = [r for r in rows if r.tenant_id != tenant]
            model = fit_answerability(
                train,
                fitted_on=f"leave-one-out: all but {tenant}",
                calibration_label=calibration_label,
                ranker=base.learned_ranker,
            )
            held.model = model.model_dump()
            config = base.model_copy(update={"answerability": model})
        fold = clone_retriever(retriever, config)
        for case_set in sets:
            cases = [c for c in case_set.cases if c.tenant_id == tenant]
            if not cases:
                continue
            run = evaluate_cases(fold, cases, case_set.as_of)
            held.details.extend(run.details)
            held.cases.extend(cases)
            held.results.update(run.results)
        folds[tenant] = held
    return folds, len(rows)


def cv_report(
    sets: Sequence[CaseSet],
    folds: dict[str, HeldOut],
    *,
    config_version: str,
    training_rows: int,
    refit: bool,
    calibration_label: str = "answerable",
) -> dict[str, Any]:
    """The per-operator and pooled figures of held-out runs (what `kb eval --cv` prints)."""
    details = [d for held in folds.values() for d in held.details]
    cases = [c for held in folds.values() for c in held.cases]
    results = {k: v for held in folds.values() for k, v in held.results.items()}
    return {
        "cv": "tenant",
        "refit": refit,
        "calibration_label": calibration_label,
        "golden": [
            {"path": str(s.path), "as_of": s.as_of.isoformat(), "cases": len(s.cases)} for s in sets
        ],
        "config_version": config_version,
        "training_rows": training_rows,
        "pooled": _figures(cases, details, results),
        "outcome_confusion": _confusion(details),
        "per_operator": {
            tenant: _figures(held.cases, held.details, held.results)
            for tenant, held in folds.items()
        },
        "models": {t: held.model for t, held in folds.items() if held.model is not None},
        "details": details,
    }


def cross_validate(
    retriever: Retriever,
    sets: Sequence[CaseSet],
    *,
    refit: bool = True,
    calibration_label: str = "answerable",
) -> dict[str, Any]:
    """Leave one operator out over every tenant of `sets` (refit=False: the stored model, unfitted)."""
    folds, training_rows = run_folds(
        retriever, sets, refit=refit, calibration_label=calibration_label
    )
    return cv_report(
        sets,
        folds,
        config_version=protocol_config(retriever).config_version,
        training_rows=training_rows,
        refit=refit,
        calibration_label=calibration_label,
    )


class MissingTenantError(ValueError):
    """An operator of a golden file that this knowledge base has never ingested."""


def require_tenants(db: Database, sets: Sequence[CaseSet]) -> None:
    """Every operator of `sets` is ingested here; else an error naming each missing one."""
    known = set(db.tenants())
    missing = sorted(
        {
            (case.tenant_id, str(s.path))
            for s in sets
            for case in s.cases
            if case.tenant_id not in known
        }
    )
    if missing:
        named = ", ".join(f"{tenant!r} ({path})" for tenant, path in missing)
        raise MissingTenantError(
            f"operator(s) not ingested in this knowledge base: {named}; ingest each folder first "
            "(kb ingest DIR) or remove its golden file from the leave-one-operator-out list"
        )


def run_cross_validation(
    retriever: Retriever,
    sets: Sequence[CaseSet],
    *,
    refit: bool = True,
    runner: Callable[..., dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """The protocol of `kb eval ... --cv tenant` and of every release (`release_generalisation`):
    every operator ingested, at least two of them when fitting, then `cross_validate` (or
    `runner`, e.g. `nested_choice.nested_cross_validation`, with the same arguments)."""
    require_tenants(retriever.db, sets)
    operators = {case.tenant_id for s in sets for case in s.cases}
    if refit and len(operators) < 2:
        raise ValueError(
            f"leave-one-operator-out needs at least two operators; the golden files hold "
            f"{', '.join(sorted(operators)) or 'none'}"
        )
    return (runner or cross_validate)(retriever, sets, refit=refit)


def clone_retriever(
    retriever: Retriever, config: Any, cls: type[Retriever] = Retriever
) -> Retriever:
    """A retriever (of class `cls`) over the same database, model and versions with `config`,
    audit off: what each fold of the protocol retrieves with."""
    return cls(
        retriever.db,
        retriever.embedder,
        retriever.versions,
        config,
        retriever.reranker,
        audit=False,
    )


TABLE_COLUMNS = (
    ("cases", "cases", "{:d}"),
    ("outcome_accuracy", "outcome acc.", "{:.3f}"),
    ("recall_at_10", "recall@10", "{:.3f}"),
    ("unsafe_passes", "unsafe", "{:d}"),
    ("must_not_cite_violations", "must-not-cite", "{:d}"),
    ("answerable_unknown_rate", "answerable->UNKNOWN", "{:.3f}"),
    ("best_chunk_quote_rate", "best chunk holds a quote", "{:.3f}"),
    ("ece_chunks", "ECE (pack chunks)", "{:.3f}"),
    ("ece_top_chunk", "ECE (top chunk)", "{:.3f}"),
    ("ece_top_chunk_floor", "ECE floor (top chunk, calibrated)", "{:.3f}"),
    ("ece_cases", "ECE (top, outcome)", "{:.3f}"),
    ("ece_chunk_probability", "ECE (pack chunks, chunk probability)", "{:.3f}"),
    ("ece_case_probability", "ECE (case probability)", "{:.3f}"),
    ("auc_confidence_top", "AUC answerable/unanswerable (top confidence)", "{:.3f}"),
    ("auc_case_probability", "AUC answerable/unanswerable (case probability)", "{:.3f}"),
)


def _cell(fmt: str, value: Any) -> str:
    """A figure as its column formats it; "n/a" for an AUC with one class absent."""
    return "n/a" if value is None else fmt.format(value)


def format_cv_table(report: dict[str, Any]) -> str:
    """The per-operator and pooled figures as a Markdown table."""
    header = "| operator | " + " | ".join(title for _, title, _ in TABLE_COLUMNS) + " |"
    lines = [header, "|" + " --- |" * (len(TABLE_COLUMNS) + 1)]
    rows = [*report["per_operator"].items(), ("pooled", report["pooled"])]
    for name, figures in rows:
        cells = [_cell(fmt, figures.get(key)) for key, _, fmt in TABLE_COLUMNS]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)
