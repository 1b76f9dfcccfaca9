"""Typer application wiring the `kb` commands."""

from __future__ import annotations

import typer

from kb_pipeline.cli.ask_cmd import ask
from kb_pipeline.cli.beir_cmd import eval_beir
from kb_pipeline.cli.db import db_app
from kb_pipeline.cli.drafts_cmd import eval_drafts
from kb_pipeline.cli.eval_cmd import evaluate, evaluate_judge
from kb_pipeline.cli.ingest_cmd import ingest
from kb_pipeline.cli.serve_cmd import mcp, serve, token_app

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
    """Start the Dagster UI and daemon (sensors, schedules); SIGTERM/SIGINT stops both."""
    from kb_pipeline.cli.ui import run_ui

    run_ui(host, port)


app.add_typer(db_app, name="db")
app.command("serve")(serve)
app.command("mcp")(mcp)
app.add_typer(token_app, name="token")

from kb_pipeline.cli.index_cmd import index_app  # noqa: E402

app.add_typer(index_app, name="index")
