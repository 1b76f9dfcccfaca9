"""`kb eval-drafts`: draft metrics of drafts from a file, or written here by a drafter."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from kb_pipeline.cli.common import parse_date

if TYPE_CHECKING:
    from kb_eval.drafts.drafters import Drafter

DEFAULT_GOLDEN = Path("data/golden/golden.jsonl")
SHOWN_CLAIMS = 10
DRAFTERS = ("extractive", "llm")


def make_drafter(kind: str) -> Drafter:
    """The named drafter; `llm` needs KB_LLM_BASE_URL and KB_LLM_MODEL (exit 2 otherwise)."""
    from kb_eval.drafts.drafters import ExtractiveDrafter
    from kb_eval.drafts.llm import LLMConfig, OpenAICompatibleDrafter

    if kind == "extractive":
        return ExtractiveDrafter()
    config = LLMConfig.from_env()
    if config is None:
        typer.echo("error: --drafter llm needs KB_LLM_BASE_URL and KB_LLM_MODEL", err=True)
        raise typer.Exit(2)
    return OpenAICompatibleDrafter(config)


def eval_drafts(
    file: Path = typer.Argument(
        None, help="Drafts (JSON Lines: case_id, text, citations); omit with --drafter."
    ),
    drafter: str = typer.Option(
        None,
        "--drafter",
        help="Write the drafts here instead of reading FILE: extractive, or llm (an "
        "OpenAI-compatible chat-completions endpoint from KB_LLM_BASE_URL / KB_LLM_MODEL / "
        "KB_LLM_API_KEY), one per golden case.",
    ),
    write_drafts: Path = typer.Option(
        None, "--write-drafts", help="With --drafter: also save the drafts as JSON Lines here."
    ),
    golden: Path = typer.Option(
        DEFAULT_GOLDEN, "--golden", help="Golden set the drafts' case_ids come from."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print a JSON object with `metrics`."),
    as_of: str = typer.Option(
        None, "--as-of", help="ISO date the evidence is retrieved at (default today)."
    ),
) -> None:
    """Grade drafts against the evidence each case retrieves: citation coverage, support."""
    from kb_eval.drafts.grading import DRAFT_METRICS, draft_cases, draft_records, evidence_sources
    from kb_eval.drafts.metrics import DraftFormatError, grade_drafts, load_draft_records
    from kb_eval.golden import GoldenFormatError, load_golden
    from kb_eval.golden_eval import evaluate_cases
    from kb_eval.metric_table import format_report
    from kb_retrieval.service import open_knowledge_base

    if (file is None) == (drafter is None):
        typer.echo("error: give either FILE or --drafter", err=True)
        raise typer.Exit(2)
    if drafter is not None and drafter not in DRAFTERS:
        typer.echo(f"error: --drafter must be one of {', '.join(DRAFTERS)}", err=True)
        raise typer.Exit(2)
    for path in (file, golden):
        if path is not None and not path.is_file():
            typer.echo(f"error: {path} not found", err=True)
            raise typer.Exit(2)
    day = parse_date(as_of, "--as-of") or date.today()
    writer = make_drafter(drafter) if drafter else None
    try:
        records = load_draft_records(file) if file else []
        cases = load_golden(golden)
    except (DraftFormatError, GoldenFormatError) as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(2) from error
    known = {case.case_id for case in cases}
    unknown = sorted({r.case_id for r in records} - known)
    if unknown:
        typer.echo(f"error: case_ids not in {golden}: {', '.join(unknown)}", err=True)
        raise typer.Exit(2)
    wanted = {r.case_id for r in records} if file else known
    selected = [case for case in cases if case.case_id in wanted]
    kb = open_knowledge_base()
    run = evaluate_cases(kb.retriever, selected, day)
    if writer is not None:
        drafts = draft_cases(selected, run.packs, writer)
        records = draft_records(drafts)
        if write_drafts is not None:
            lines = [json.dumps(d.to_record(), sort_keys=True) for d in drafts]
            write_drafts.write_text("\n".join(lines) + "\n", encoding="utf-8")
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
            "drafts_from": str(file) if file else f"drafter:{drafter}",
            "config_version": kb.retriever.config.config_version,
            "metrics": metrics,
            **counts,
            "claims": graded["details"],
        }
        typer.echo(json.dumps(payload, indent=2, sort_keys=True))
        return
    source = file if file else f"--drafter {drafter}"
    typer.echo(format_report(metrics, title=f"kb eval-drafts {source} (as of {day})"))
    typer.echo(", ".join(f"{name}: {value}" for name, value in counts.items()))
    bad = [d for d in graded["details"] if d.get("policy_like") and d["verdict"] != "supported"]
    for detail in bad[:SHOWN_CLAIMS]:
        typer.echo(f"- [{detail['case_id']}] {detail['verdict']}: {detail['claim']}")
    if len(bad) > SHOWN_CLAIMS:
        typer.echo(f"... and {len(bad) - SHOWN_CLAIMS} more unsupported claims (see --json)")
