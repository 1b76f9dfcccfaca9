"""`kb eval-beir DIR`: a BEIR dataset through ingestion and retrieval, beside BM25 and dense runs."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from kb_eval.beir.comparison import RUN_LABELS, BeirReport

METRICS = ("ndcg_at_10", "recall_at_10", "recall_at_100")


class RichStages:
    """One rich progress bar per stage (ingestion, each run), printed to standard error."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress
        self.task: int | None = None

    def stage(self, name: str, total: int) -> None:
        if self.task is not None:
            self.progress.update(self.task, completed=self.progress.tasks[self.task].total)
        self.task = self.progress.add_task(name, total=total)
        if not self.progress.console.is_terminal:
            self.progress.console.print(f"eval-beir: {name} ({total})", highlight=False)

    def advance(self, count: int = 1) -> None:
        if self.task is not None:
            self.progress.advance(self.task, count)


def eval_beir(
    directory: Path = typer.Argument(
        ..., help="BEIR folder: corpus.jsonl, queries.jsonl, qrels/test.tsv."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print a JSON object instead of a table."),
    limit_docs: int | None = typer.Option(
        None,
        "--limit-docs",
        min=1,
        help="Keep the documents judged for the kept queries plus the first ones, this many in all.",
    ),
    limit_queries: int | None = typer.Option(
        None, "--limit-queries", min=1, help="Keep the first N test queries."
    ),
) -> None:
    """Ingest a BEIR corpus as one tenant and print nDCG@10, R@10, R@100 of kb and baselines."""
    from kb_eval.beir.comparison import run_beir, select
    from kb_eval.beir.dataset import BeirFormatError, load_beir
    from kb_retrieval.db import Database, resolve_database_url
    from kb_retrieval.db.server import kb_home
    from kb_retrieval.service import make_embedder

    if not directory.is_dir():
        typer.echo(f"error: {directory} is not a folder", err=True)
        raise typer.Exit(2)
    try:
        dataset = load_beir(directory)
    except (BeirFormatError, OSError) as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(2) from error
    dataset = select(dataset, limit_docs, limit_queries)
    limited = limit_docs is not None or limit_queries is not None
    db = Database(resolve_database_url())
    db.migrate()
    embedder = make_embedder("minilm")
    console = Console(stderr=True)
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=console, transient=True) as progress:
        report = run_beir(
            db,
            embedder,
            dataset,
            root=kb_home() / "beir",
            progress=RichStages(progress),
            published={} if limited else None,
        )
    if as_json:
        typer.echo(json.dumps(report.to_json(), indent=2, sort_keys=True))
        return
    print_report(report, Console())


def print_report(report: BeirReport, console: Console) -> None:
    """The runs side by side, then ingestion and query-planner facts."""
    table = Table(
        title=f"kb eval-beir {report.dataset}: {report.documents} documents, "
        f"{report.queries} queries (tenant {report.tenant_id})"
    )
    table.add_column("run")
    for name in ("nDCG@10", "R@10", "R@100", "seconds"):
        table.add_column(name, justify="right")
    names = [n for n in RUN_LABELS if n in report.runs]
    for name in names + sorted(set(report.runs) - set(names)):
        metrics = report.runs[name]
        table.add_row(
            RUN_LABELS.get(name, name),
            *(f"{metrics[m]:.3f}" for m in METRICS),
            f"{report.seconds.get(name, 0.0):.1f}",
        )
    for name, value in report.published.items():
        table.add_row(f"[dim]published {name}[/]", f"[dim]{value:.3f}[/]", "", "", "")
    console.print(table)
    ingestion = report.ingestion
    console.print(
        f"ingestion: {ingestion.indexed}/{ingestion.documents} indexed "
        f"({ingestion.already_indexed} already), {ingestion.embedded_windows} windows embedded "
        f"now, {report.seconds.get('ingest', 0.0):.1f} s; total {report.seconds['total']:.1f} s",
        highlight=False,
    )
    for problem in ingestion.problems:
        console.print(f"[yellow]not indexed[/]: {problem}", highlight=False)
    plans = ", ".join(f"{k} {v}" for k, v in report.query_plans.items())
    console.print(f"query plans: {plans}", highlight=False)
