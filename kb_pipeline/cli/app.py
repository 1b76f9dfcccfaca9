"""Typer application wiring the `kb` commands."""

from __future__ import annotations

import os
import subprocess
import sys

import typer

from kb_pipeline.cli.ask_cmd import ask
from kb_pipeline.cli.beir_cmd import eval_beir
from kb_pipeline.cli.drafts_cmd import eval_drafts
from kb_pipeline.cli.eval_cmd import evaluate, evaluate_judge
from kb_pipeline.cli.ingest_cmd import ingest

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Trust-first knowledge grounding: ingest tenant knowledge, ask, evaluate.",
)
app.command("ingest")(ingest)
app.command("ask")(ask)
app.command("eval")(evaluate)
app.command("eval-drafts")(eval_drafts)
app.command("eval-beir")(eval_beir)
app.command("eval-judge")(evaluate_judge)


@app.command("ui")
def ui(
    host: str = typer.Option("127.0.0.1", help="Address of the Dagster UI."),
    port: int = typer.Option(3000, help="Port of the Dagster UI."),
) -> None:
    """Start the Dagster UI and daemon (sensors, schedules) on the same storage as `kb`."""
    from kb_pipeline.instance import REPO_ROOT, prepare_environment

    prepare_environment()
    typer.echo(f"Dagster UI: http://{host}:{port}  (DAGSTER_HOME={os.environ['DAGSTER_HOME']})")
    command = [
        sys.executable,
        "-m",
        "dagster",
        "dev",
        "-w",
        str(REPO_ROOT / "workspace.yaml"),
        "-h",
        host,
        "-p",
        str(port),
    ]
    raise typer.Exit(subprocess.call(command, cwd=REPO_ROOT))
