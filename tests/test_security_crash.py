"""Slow tier: a few kill -9 of ingestion at random points; invariants hold, a re-run is clean.

The full run (24 kills over every phase) is `python bench/crash_consistency.py --json`
(docs/security.md).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.conftest import REPO


@pytest.mark.slow
def test_kills_at_random_points_leave_consistent_resumable_state(database_url):
    result = subprocess.run(
        [
            sys.executable,
            str(REPO / "bench" / "crash_consistency.py"),
            "--kills",
            "4",
            "--seed",
            "3",
            "--url",
            database_url,
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    report = json.loads(result.stdout)
    assert report["kills"] >= 4
    assert report["invariant_violations"] == 0
    assert report["descendants_checked"] > 0 and report["orphan_processes"] == 0
    assert report["rounds_not_reaching_clean_state"] == 0
    assert report["ok"] and result.returncode == 0
