"""Small helpers shared by the `kb` commands."""

from __future__ import annotations

from datetime import date

import typer


def parse_date(value: str | None, option: str) -> date | None:
    """An ISO date option, or a usage error (exit 2) naming the option."""
    if value is None:
        return None
    try:
        return date.fromisoformat(value)
    except ValueError as error:
        typer.echo(f"error: {option} {value!r} is not an ISO date (YYYY-MM-DD)", err=True)
        raise typer.Exit(2) from error
