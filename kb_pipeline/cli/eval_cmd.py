"""`kb eval GOLDEN.jsonl`: the contract metrics of a golden set, stored with per-case results."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import typer

from kb_pipeline.cli.common import parse_date


def evaluate(
    golden: Path = typer.Argument(..., help="Golden set (JSON Lines, contracts.md section 2)."),
    as_json: bool = typer.Option(False, "--json", help="Print a JSON object with `metrics`."),
    as_of: str = typer.Option(
        None, "--as-of", help="ISO date the evaluation is judged at (default today)."
    ),
) -> None:
    """Run every golden case through retrieval and print the metrics (overall and per split)."""
    from kb_eval.golden import GoldenFormatError, load_golden
    from kb_eval.golden_eval import evaluate_cases, store_run
    from kb_eval.metric_table import format_report
    from kb_eval.metrics import aggregate
    from kb_retrieval.db.connection import UnknownTenantError
    from kb_retrieval.service import open_knowledge_base

    if not golden.is_file():
        typer.echo(f"error: {golden} not found", err=True)
        raise typer.Exit(2)
    day = parse_date(as_of, "--as-of") or date.today()
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
