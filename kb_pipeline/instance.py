"""The persistent Dagster instance of `kb` and the UI: DAGSTER_HOME under KB_HOME, PostgreSQL storage."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import psycopg
from dagster import DagsterInstance
from psycopg import sql

from kb_retrieval.db.server import kb_home, resolve_database_url, to_psycopg2_url

STORAGE_URL_ENV = "KB_DAGSTER_STORAGE_URL"
DAGSTER_DATABASE = "dagster"
REPO_ROOT = Path(__file__).resolve().parents[1]


def dagster_storage_url(kb_url: str, database: str = DAGSTER_DATABASE) -> str:
    """A `dagster` database on the knowledge base's server (created once), or the same database."""
    try:
        with psycopg.connect(kb_url, autocommit=True) as conn:
            exists = conn.execute(
                "SELECT 1 FROM pg_database WHERE datname = %s", (database,)
            ).fetchone()
            if not exists:
                conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(database)))
    except psycopg.Error:
        return to_psycopg2_url(kb_url)
    info = psycopg.conninfo.conninfo_to_dict(kb_url)
    info["dbname"] = database
    host = info.pop("host", "")
    user, password = info.pop("user", ""), info.pop("password", "")
    port = info.pop("port", "")
    auth = f"{user}:{password}@" if password else f"{user}@" if user else ""
    netloc = "" if host.startswith("/") else host + (f":{port}" if port else "")
    query = f"?host={host}" + (f"&port={port}" if port else "") if host.startswith("/") else ""
    return f"postgresql+psycopg2://{auth}{netloc}/{database}{query}"


def prepare_environment() -> str:
    """Resolve the database, point DAGSTER_HOME and the storage URL at it; returns the KB URL."""
    url = resolve_database_url()
    home = kb_home() / "dagster"
    home.mkdir(parents=True, exist_ok=True)
    template = REPO_ROOT / "dagster.yaml"
    target = home / "dagster.yaml"
    if template.is_file() and (not target.exists() or target.read_bytes() != template.read_bytes()):
        shutil.copyfile(template, target)
    os.environ.setdefault("DAGSTER_HOME", str(home))
    os.environ.setdefault(STORAGE_URL_ENV, dagster_storage_url(url))
    return url


def persistent_instance() -> DagsterInstance:
    prepare_environment()
    return DagsterInstance.get()
