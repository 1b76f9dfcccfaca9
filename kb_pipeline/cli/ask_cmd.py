"""`kb ask`: print the evidence pack for one guest email."""

from __future__ import annotations

import sys
from datetime import date

import typer
from rich.console import Console
from rich.table import Table

from kb_pipeline.cli.ask_display import (
    best_sentence,
    conflict_lines,
    near_answer_line,
    query_terms,
)
from kb_pipeline.cli.common import parse_date
from kb_retrieval.retrieval.pack import dumps_pack, validate_pack


def read_stdin_email() -> str:
    """Standard input as UTF-8 text; a plain usage error (exit 2) when it is not."""
    data = sys.stdin.buffer.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        typer.echo(
            f"error: standard input is not UTF-8 text (invalid byte at offset {error.start})",
            err=True,
        )
        raise typer.Exit(2) from error


def ask(
    text: str = typer.Argument(..., help="The guest email, or - to read it from standard input."),
    tenant: str = typer.Option(..., "--tenant", help="Tenant id."),
    as_json: bool = typer.Option(False, "--json", help="Print the evidence pack as JSON."),
    as_of: str = typer.Option(
        None, "--as-of", help="ISO date staleness/effective dates are judged at (default today)."
    ),
    trip_date: str = typer.Option(None, "--trip-date", help="ISO date of the guest's departure."),
    sensitivity: str = typer.Option(
        None, "--sensitivity", help="Comma list: refund,safety,medical,legal,exceptions."
    ),
    audit: bool = typer.Option(
        False, "--audit", help="Audit mode: include superseded versions, marked."
    ),
) -> None:
    """Retrieve evidence and a verdict for a guest email."""
    from kb_retrieval.service import open_knowledge_base

    email = read_stdin_email() if text == "-" else text
    if not email.strip():
        typer.echo("error: empty email", err=True)
        raise typer.Exit(2)
    day = parse_date(as_of, "--as-of") or date.today()
    trip = parse_date(trip_date, "--trip-date")
    sens = [s.strip() for s in sensitivity.split(",") if s.strip()] if sensitivity else None
    kb = open_knowledge_base()
    try:
        result = kb.retriever.retrieve(
            tenant,
            email,
            as_of=day,
            trip_context={"trip_date": trip.isoformat()} if trip else None,
            sensitivity=sens,
            audit_mode=audit,
        )
    except ValueError as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(2) from error
    pack = result.pack
    validate_pack(pack)
    if as_json:
        typer.echo(dumps_pack(pack))
        return
    console = Console()
    console.print(f"[bold]{pack['outcome']}[/]  reasons: {', '.join(pack['reason_codes']) or '-'}")
    console.print("flags: " + ", ".join(f"{k}={v}" for k, v in pack["flags"].items()))
    terms = query_terms(email, pack["query_variants"])
    table = Table(show_lines=False)
    for column in ("rank", "category", "locator", "confidence", "stale", "snippet"):
        table.add_column(column, overflow="fold")
    for item in pack["evidence"]:
        table.add_row(
            str(item["rank"]),
            item["category"],
            item["source_locator"],
            f"{item['confidence_score']:.2f}",
            "yes" if item["stale"] else "",
            best_sentence(item["text"], terms, item["section_title"]),
        )
    console.print(table)
    for line in conflict_lines(pack):
        console.print(line, highlight=False, markup=False)
    near = near_answer_line(pack)
    if near:
        console.print(near, highlight=False, markup=False)
    console.print(f"[dim]{pack['config_version']}  {result.timings_ms.get('total', 0):.0f} ms[/]")
