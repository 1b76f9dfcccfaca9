"""`kb ingest DIR [--json]`: ingest a tenant knowledge folder through the Dagster assets."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from kb_retrieval.ingestion.manifest import ManifestError, check_tenant

CONTRACT_KEYS = ("doc_version_id", "state", "reason_code", "chunks", "embedded")
DATABASE_ERRORS = ("OperationalError", "InterfaceError", "AdminShutdown")


def database_error(error: BaseException | None) -> BaseException | None:
    """The lost-connection error inside `error` (Dagster wraps the step's exception), if any."""
    seen: set[int] = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        if any(cls.__name__ in DATABASE_ERRORS for cls in type(error).__mro__):
            return error
        error = getattr(error, "user_exception", None) or error.__cause__ or error.__context__
    return None


def ingest(
    directory: Path = typer.Argument(..., help="Tenant knowledge folder holding kb.yaml."),
    as_json: bool = typer.Option(False, "--json", help="Print a JSON list instead of a table."),
    tenant: str | None = typer.Option(
        None, "--tenant", help="Refuse the folder unless its kb.yaml names this tenant."
    ),
) -> None:
    """Ingest a tenant folder; exit 0 when every document is indexed, 1 otherwise, 2 on usage errors."""
    if not (directory / "kb.yaml").is_file():
        typer.echo(
            f"error: {directory}/kb.yaml not found (expected a tenant knowledge folder)", err=True
        )
        raise typer.Exit(2)
    try:
        if tenant is not None:
            check_tenant(directory, tenant)
    except ManifestError as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(2) from error
    from kb_pipeline.ingest.folder_ingest import ingest_folder

    console = Console(stderr=True)
    try:
        with Progress(
            console=console, transient=True, disable=as_json or not console.is_terminal
        ) as progress:
            task = progress.add_task("ingesting", total=None)

            def advance(done: int, total: int, key: str) -> None:
                progress.update(task, total=total, completed=done, description=key)

            rows = ingest_folder(directory, on_progress=advance)
    except ManifestError as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(2) from error
    except Exception as error:
        lost = database_error(error)
        if lost is None:
            raise
        typer.echo(
            f"error: lost the connection to PostgreSQL ({str(lost).strip().splitlines()[0]}); "
            "nothing half-done is visible to retrieval: run kb ingest again when it is back",
            err=True,
        )
        raise typer.Exit(1) from None
    for row in rows:
        if row.get("message"):
            console.print(
                f"[yellow]{row['doc_version_id']}[/]: {row['message']}",
                markup=True,
                highlight=False,
            )
    rows = [{key: row[key] for key in CONTRACT_KEYS} for row in rows]
    if as_json:
        typer.echo(json.dumps(rows, indent=2))
    else:
        table = Table(title=f"kb ingest {directory}")
        longest = max((len(str(row["doc_version_id"])) for row in rows), default=0)
        table.add_column("doc_version_id", min_width=longest, no_wrap=True)
        for column in CONTRACT_KEYS[1:]:
            table.add_column(column, overflow="fold")
        for row in rows:
            table.add_row(*(str(row[c]) if row[c] is not None else "-" for c in row))
        Console().print(table)
    raise typer.Exit(0 if all(row["state"] == "indexed" for row in rows) else 1)
