"""Two `kb ingest` processes of one tenant at once, through the Dagster assets (issue: concurrency).

Both finish, both report every document indexed, and no window is embedded twice: the advisory
locks of the ingestion library hold across processes, whatever Dagster run each step is in.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import cli_subprocess_env
from tests.test_security_ingest import write_folder

pytestmark = pytest.mark.slow
KB = [sys.executable, "-c", "from kb_pipeline.cli import app; app()"]


def test_two_kb_ingest_processes_of_one_tenant(tmp_path: Path, database_url: str, db) -> None:
    files = {
        f"desk{i}.md": f"# Desk {i}\n\n" + f"Our desk {i} answers guests about hut {i}. " * 70
        for i in range(4)
    }
    folder = write_folder(tmp_path, "twin-co", files)
    env = cli_subprocess_env(tmp_path, database_url)
    processes = [
        subprocess.Popen(
            [*KB, "ingest", str(folder), "--json"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    outputs = [process.communicate(timeout=600) for process in processes]
    reports = []
    for process, (stdout, stderr) in zip(processes, outputs, strict=True):
        assert process.returncode == 0, stderr
        assert "Traceback" not in stderr
        reports.append(json.loads(stdout))
    for rows in reports:
        assert sorted(row["state"] for row in rows) == ["indexed"] * 4
    embedded = sum(row["embedded"] for rows in reports for row in rows)
    chunks = sum(row["chunks"] for row in reports[0])
    assert embedded == chunks, "each chunk is embedded by exactly one of the two processes"
    with db.tenant("twin-co") as conn:
        duplicates = conn.execute(
            "SELECT count(*) FROM (SELECT 1 FROM chunk_vectors GROUP BY chunk_id, "
            "embedding_model_id, window_index HAVING count(*) > 1) d"
        ).fetchone()[0]
    assert duplicates == 0
