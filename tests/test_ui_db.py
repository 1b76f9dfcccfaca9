"""`kb db status` / `kb db stop` on an embedded server of its own (not the session's)."""

from __future__ import annotations

import psycopg
import pytest
from typer.testing import CliRunner

from kb_pipeline.cli import app
from kb_retrieval.db.server import start_embedded_server


def test_kb_db_stop_stops_the_embedded_server(tmp_path, monkeypatch):
    home = tmp_path / "home"
    monkeypatch.delenv("KB_DATABASE_URL", raising=False)
    monkeypatch.setenv("KB_HOME", str(home))
    url = start_embedded_server(home)
    runner = CliRunner()
    running = runner.invoke(app, ["db", "status"])
    assert running.exit_code == 0 and "running (pid" in running.stdout
    stopped = runner.invoke(app, ["db", "stop"])
    assert stopped.exit_code == 0 and stopped.stdout.startswith("stopped:")
    with pytest.raises(psycopg.OperationalError):
        psycopg.connect(url, connect_timeout=3).close()
    after = runner.invoke(app, ["db", "status"])
    assert after.exit_code == 1 and after.stdout.startswith("not running:")
    assert runner.invoke(app, ["db", "stop"]).stdout.startswith("not running:")


def test_kb_db_leaves_an_external_database_alone(monkeypatch, tmp_path):
    monkeypatch.setenv("KB_DATABASE_URL", "postgresql://kb@db.example.internal/kb")
    monkeypatch.setenv("KB_HOME", str(tmp_path))
    result = CliRunner().invoke(app, ["db", "stop"])
    assert result.exit_code == 0 and "KB_DATABASE_URL is set" in result.stdout
    assert not (tmp_path / "pgdata").exists()
