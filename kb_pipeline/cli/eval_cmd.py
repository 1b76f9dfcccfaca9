"""`kb eval GOLDEN.jsonl`: the contract metrics of a golden set, stored with per-case results;
`kb eval GOLDEN[@AS_OF]... --cv tenant`: leave-one-operator-out over several golden files."""

from __future__ import annotations

import json
from datetime import date
from functools import partial
from pathlib import Path
from typing import Any

import typer

from kb_pipeline.cli.common import parse_date


def evaluate(
    golden: list[str] = typer.Argument(
        ...,
        help="Golden set (JSON Lines, docs/spec.md 10); with --cv several, each as "
        "PATH or PATH@YYYY-MM-DD (its own as-of date).",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print a JSON object with `metrics`."),
    as_of: str = typer.Option(
        None, "--as-of", help="ISO date the evaluation is judged at (default today)."
    ),
    cv: str = typer.Option(
        None, "--cv", help="Cross-validation: `tenant` = leave one operator out (refits the model)."
    ),
    refit: bool = typer.Option(
        True,
        "--refit/--no-refit",
        help="With --cv: fit per fold (default) or use the stored model.",
    ),
    nested: str = typer.Option(
        None,
        "--nested",
        help="With --cv: FIELD=V1,V2,... a RetrievalConfig setting chosen per fold on the other "
        "operators (fewest unsafe passes than V1 allows, then most correct outcomes).",
    ),
) -> None:
    """Run every golden case through retrieval and print the metrics (overall and per split)."""
    from kb_eval.cross_validation import CV_MODES, parse_golden_spec

    day = parse_date(as_of, "--as-of") or date.today()
    try:
        specs = [parse_golden_spec(spec, day) for spec in golden]
    except ValueError as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(2) from error
    for path, _ in specs:
        if not path.is_file():
            typer.echo(f"error: {path} not found", err=True)
            raise typer.Exit(2)
    if cv is not None:
        if cv not in CV_MODES:
            typer.echo(f"error: --cv {cv!r}: choose one of {', '.join(CV_MODES)}", err=True)
            raise typer.Exit(2)
        _cross_validate(specs, as_json, refit, nested)
        return
    if nested is not None:
        typer.echo("error: --nested goes with --cv tenant", err=True)
        raise typer.Exit(2)
    if len(specs) != 1:
        typer.echo("error: several golden files need --cv tenant", err=True)
        raise typer.Exit(2)
    _evaluate_one(specs[0][0], specs[0][1], as_json)


def _evaluate_one(golden: Path, day: date, as_json: bool) -> None:
    from kb_eval.golden import GoldenFormatError, load_golden
    from kb_eval.golden_eval import evaluate_cases, store_run
    from kb_eval.metric_table import format_report
    from kb_eval.metrics import aggregate
    from kb_retrieval.db.connection import UnknownTenantError
    from kb_retrieval.service import open_knowledge_base

    try:
        cases = load_golden(golden)
    except GoldenFormatError as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(2) from error
    kb = open_knowledge_base()
    try:
        run = evaluate_cases(kb.retriever, cases, day)
    except UnknownTenantError as error:
        typer.echo(f"error: {golden}: {error}", err=True)
        raise typer.Exit(2) from error
    store_run(
        kb.db, run, golden_path=golden, as_of=day, config_version=kb.retriever.config.config_version
    )
    splits = sorted({d["split"] for d in run.details if d.get("split")})
    by_split = {s: aggregate([d for d in run.details if d.get("split") == s]) for s in splits}
    if as_json:
        payload = {
            "run_id": run.run_id,
            "as_of": day.isoformat(),
            "cases": len(cases),
            "config_version": kb.retriever.config.config_version,
            "metrics": run.metrics,
            "by_split": by_split,
        }
        typer.echo(json.dumps(payload, indent=2, sort_keys=True))
        return
    typer.echo(
        format_report(run.metrics, title=f"kb eval {golden} (as of {day}, {len(cases)} cases)")
    )
    for split, metrics in by_split.items():
        typer.echo(format_report(metrics, title=f"split: {split}"))
    typer.echo(f"stored as {run.run_id}")


def _cross_validate(
    specs: list[tuple[Path, date]], as_json: bool, refit: bool, nested: str | None
) -> None:
    from kb_eval.cross_validation import format_cv_table, load_case_sets, run_cross_validation
    from kb_eval.golden import GoldenFormatError
    from kb_eval.nested_choice import nested_cross_validation, parse_nested
    from kb_retrieval.service import open_knowledge_base

    try:
        sets = load_case_sets(specs)
        choice = parse_nested(nested) if nested is not None else None
    except (GoldenFormatError, ValueError) as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(2) from error
    kb = open_knowledge_base()
    try:
        report: dict[str, Any] = run_cross_validation(
            kb.retriever,
            sets,
            refit=refit,
            runner=None
            if choice is None
            else partial(nested_cross_validation, field=choice[0], values=choice[1]),
        )
    except ValueError as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(2) from error
    if as_json:
        typer.echo(json.dumps(report, indent=2, sort_keys=True, default=str))
        return
    typer.echo(format_cv_table(report))
    if "nested" in report:
        chosen = ", ".join(f"{t} {v:g}" for t, v in report["nested"]["chosen"].items())
        typer.echo(f"{report['nested']['field']} chosen per fold on the other operators: {chosen}")


def evaluate_judge(
    pairs: list[Path] = typer.Argument(
        ..., help="Labelled claim pairs (JSON Lines: pair_id, claim, evidence, label)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print a JSON object per file."),
    judge: str = typer.Option("learned", "--judge", help="learned (default) or rules."),
    cv: str = typer.Option(
        "", "--cv", help="operator: leave one operator out over the files' pairs together."
    ),
    fit: bool = typer.Option(
        False, "--fit", help="Fit the learned judge on every pair of the files and save it."
    ),
    embedder: str = typer.Option("minilm", "--embedder", help="minilm or fake-hash (tests)."),
    max_false_support: float = typer.Option(
        0.01, "--max-false-support", help="The learned judge's operating point: 0.01, 0.03, 0.05."
    ),
) -> None:
    """The claim judge on each file of labelled pairs, reported separately: per label, confusion;
    `--cv operator` fits and measures it leaving one operator out (per operator and pooled)."""
    from kb_eval.judge.claim_judge import load_claim_pairs
    from kb_eval.judge.encoder import TextEncoder
    from kb_eval.judge.evaluation import fit_model, learned_report, operator_cv, rules_report
    from kb_pipeline.cli.judge_table import print_cv, print_report

    if judge not in ("learned", "rules") or cv not in ("", "operator"):
        typer.echo("error: --judge is learned or rules; --cv is operator", err=True)
        raise typer.Exit(2)
    loaded = {}
    for path in pairs:
        if not path.is_file():
            typer.echo(f"error: {path} not found", err=True)
            raise typer.Exit(2)
        try:
            loaded[str(path)] = load_claim_pairs(path)
        except (ValueError, KeyError) as error:
            typer.echo(f"error: {path}: {error}", err=True)
            raise typer.Exit(2) from error
    encoder = TextEncoder(_judge_embedder(embedder))
    everything = [pair for file_pairs in loaded.values() for pair in file_pairs]
    try:
        if fit:
            fit_model(everything, encoder)
        if cv:
            result = operator_cv(everything, encoder)
            if as_json:
                typer.echo(json.dumps(result, indent=2, sort_keys=True))
            else:
                print_cv(result)
            return
        reports = {
            path: rules_report(file_pairs)
            if judge == "rules"
            else learned_report(file_pairs, encoder, max_false_support)
            for path, file_pairs in loaded.items()
        }
    except (ValueError, FileNotFoundError) as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(2) from error
    if as_json:
        typer.echo(json.dumps(reports, indent=2, sort_keys=True))
        return
    for path, report in reports.items():
        print_report(path, report)


def _judge_embedder(kind: str):  # -> kb_retrieval.embedding.Embedder
    from kb_retrieval.embedding import FakeHashEmbedder, MiniLMEmbedder

    if kind == "fake-hash":
        return FakeHashEmbedder()
    if kind != "minilm":
        raise typer.BadParameter(f"--embedder is minilm or fake-hash, not {kind!r}")
    return MiniLMEmbedder()
