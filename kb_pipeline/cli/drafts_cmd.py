"""`kb eval-drafts FILE.jsonl`: draft metrics of drafts written by any system."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import typer

from kb_pipeline.cli.common import parse_date

DEFAULT_GOLDEN = Path("data/golden/golden.jsonl")
SHOWN_CLAIMS = 10


def eval_drafts(
    file: Path = typer.Argument(..., help="Drafts (JSON Lines: case_id, text, citations)."),
    golden: Path = typer.Option(
        DEFAULT_GOLDEN, "--golden", help="Golden set the drafts' case_ids come from."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print a JSON object with `metrics`."),
    as_of: str = typer.Option(
        None, "--as-of", help="ISO date the evidence is retrieved at (default today)."
    ),
) -> None:
    """Grade drafts against the evidence each case retrieves: citation coverage, support."""
    from kb_eval.drafts.grading import DRAFT_METRICS, evidence_sources
    from kb_eval.drafts.metrics import DraftFormatError, grade_drafts, load_draft_records
    from kb_eval.golden import GoldenFormatError, load_golden
    from kb_eval.golden_eval import evaluate_cases
    from kb_eval.metric_table import format_report
    from kb_retrieval.service import open_knowledge_base

    for path in (file, golden):
        if not path.is_file():
            typer.echo(f"error: {path} not found", err=True)
            raise typer.Exit(2)
    day = parse_date(as_of, "--as-of") or date.today()
    try:
        records = load_draft_records(file)
        cases = load_golden(golden)
    except (DraftFormatError, GoldenFormatError) as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(2) from error
    known = {case.case_id for case in cases}
    unknown = sorted({r.case_id for r in records} - known)
    if unknown:
        typer.echo(f"error: case_ids not in {golden}: {', '.join(unknown)}", err=True)
        raise typer.Exit(2)
    wanted = {r.case_id for r in records}
    selected = [case for case in cases if case.case_id in wanted]
    kb = open_knowledge_base()
    run = evaluate_cases(kb.retriever, selected, day)
    candidates = {case_id: result.candidates for case_id, result in run.results.items()}
    lookup, case_evidence = evidence_sources(run.packs, candidates)
    graded = grade_drafts(records, lookup, case_evidence)
    metrics = {name: graded[name] for name in DRAFT_METRICS}
    counts = {
        name: graded[name]
        for name in (
            "drafts",
            "policy_claims",
            "cited_policy_claims",
            "unsupported_policy_claims",
            "unresolved_citations",
        )
    }
    if as_json:
        payload = {
            "as_of": day.isoformat(),
            "golden": str(golden),
            "config_version": kb.retriever.config.config_version,
            "metrics": metrics,
            **counts,
            "claims": graded["details"],
        }
        typer.echo(json.dumps(payload, indent=2, sort_keys=True))
        return
    typer.echo(format_report(metrics, title=f"kb eval-drafts {file} (as of {day})"))
    typer.echo(", ".join(f"{name}: {value}" for name, value in counts.items()))
    bad = [d for d in graded["details"] if d.get("policy_like") and d["verdict"] != "supported"]
    for detail in bad[:SHOWN_CLAIMS]:
        typer.echo(f"- [{detail['case_id']}] {detail['verdict']}: {detail['claim']}")
    if len(bad) > SHOWN_CLAIMS:
        typer.echo(f"... and {len(bad) - SHOWN_CLAIMS} more unsupported claims (see --json)")
