"""The Dagster UI in a real browser: Debian's chromium driven by Playwright against `kb ui`.

`kb ui` runs as a user starts it (webserver + daemon, fake-hash embedder, a fresh database). The
test loads the asset graph, materialises one partition by clicking, reads the index check and a
release gate in the UI, then stops `kb ui` with SIGTERM and finds none of its processes left.
Screenshots go to tests/artifacts/ui/ (gitignored).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import psutil
import pytest
from dagster import AssetKey, AssetRecordsFilter, DagsterInstance

from kb_pipeline.ingest.partitions import partition_key
from kb_pipeline.ingest.registration import register_folder
from kb_pipeline.instance import dagster_storage_url
from kb_pipeline.resources import KnowledgeBaseResource
from kb_retrieval.releases import Release
from tests.test_eval_assets import (
    AS_OF,
    DRAFTING_CONFIG,
    PASSING,
    SECOND,
    TENANT,
    run_release,
    write_golden,
    write_second_tenant,
    write_tenant,
)
from tests.test_releases import fresh_database

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
ARTIFACTS = Path(__file__).resolve().parent / "artifacts" / "ui"
STARTUP_SECONDS = 180
RUN_SECONDS = 180
PARTITION = partition_key(TENANT, "faq_v1")
ENV_CLEARED = ("DAGSTER_HOME", "KB_DAGSTER_STORAGE_URL")

pytestmark = pytest.mark.slow


@dataclass
class UiServer:
    base_url: str
    process: subprocess.Popen[bytes]
    instance: DagsterInstance
    release_id: str


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_until_served(url: str, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        assert process.poll() is None, f"kb ui exited with {process.returncode}"
        try:
            if httpx.get(f"{url}/server_info", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(1)
    raise AssertionError(f"kb ui did not serve {url} within {STARTUP_SECONDS} s")


@pytest.fixture(scope="module")
def ui_server(database_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[UiServer]:
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: run scripts/setup.sh (it installs Debian's chromium)")
    url = fresh_database(database_url, "kb_test_ui_browser")
    # A run storage of its own: runs other tests left unfinished (killed processes) in the shared
    # `dagster` database would otherwise fill the run queue the UI's launch waits in.
    fresh_database(database_url, "kb_test_ui_dagster")
    dagster_url = dagster_storage_url(database_url, "kb_test_ui_dagster")
    root = tmp_path_factory.mktemp("ui")
    folder = write_tenant(root / "tenants" / TENANT)
    golden = write_golden(root / "golden.jsonl", PASSING)
    settings = {
        "KB_DATABASE_URL": url,
        "KB_HOME": str(root / "home"),
        "KB_EMBEDDER": "fake-hash",
        "KB_GOLDEN_PATH": str(golden),
        "KB_EVAL_AS_OF": AS_OF,
        "HF_HUB_OFFLINE": "1",
        "KB_DAGSTER_STORAGE_URL": dagster_url,
    }
    with pytest.MonkeyPatch.context() as patch:
        for name in ENV_CLEARED:
            patch.delenv(name, raising=False)
        for name, value in settings.items():
            patch.setenv(name, value)
        from kb_pipeline.instance import persistent_instance

        instance = persistent_instance()
        kb = KnowledgeBaseResource(database_url=url, embedder="fake-hash")
        register_folder(kb.pipeline(), instance, folder)
        register_folder(kb.pipeline(), instance, write_second_tenant(root / "tenants" / SECOND))
        # A release evaluated in-process into the same instance: its gates are read in the UI.
        release = Release.of(kb.pipeline().versions, DRAFTING_CONFIG)
        assert run_release(kb, instance, release, golden).success
        env = {k: v for k, v in os.environ.items() if k != "DAGSTER_HOME"}
    port = free_port()
    kb_cli = Path(sys.executable).parent / "kb"
    process = subprocess.Popen([str(kb_cli), "ui", "--port", str(port)], env=env)
    base_url = f"http://127.0.0.1:{port}"
    try:
        wait_until_served(base_url, process)
        yield UiServer(base_url, process, instance, release.release_id)
    finally:
        if process.poll() is None:
            for child in [*psutil.Process(process.pid).children(recursive=True)]:
                child.kill()
            process.kill()
        process.wait(30)


@pytest.fixture(scope="module")
def browser(ui_server: UiServer) -> Iterator:
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_FLAGS)
        page = chromium.new_page(viewport={"width": 1400, "height": 900})
        page.set_default_timeout(60_000)
        yield page
        chromium.close()


def wait_for_materialization(instance: DagsterInstance, asset: str, partition: str) -> None:
    records_filter = AssetRecordsFilter(asset_key=AssetKey(asset), asset_partitions=[partition])
    deadline = time.monotonic() + RUN_SECONDS
    while time.monotonic() < deadline:
        if instance.fetch_materializations(records_filter, limit=1).records:
            return
        time.sleep(2)
    runs = [(run.run_id[:8], run.status.value) for run in instance.get_runs(limit=5)]
    raise AssertionError(
        f"{asset} {partition} was not materialised within {RUN_SECONDS} s; latest runs: {runs}"
    )


def test_materialise_one_partition_by_clicking_and_read_the_index_check(ui_server, browser):
    from playwright.sync_api import expect

    page = browser
    page.goto(f"{ui_server.base_url}/locations/kb_pipeline.definitions/jobs/ingest_job")
    page.get_by_role("button", name="Materialize all").wait_for()
    expect(page.locator("body")).to_contain_text("Change graph orientation")
    page.keyboard.press("Alt+e")  # expand all groups: the ingest and index assets as nodes
    expect(page.locator("body")).to_contain_text("chunk_embeddings")
    page.screenshot(path=ARTIFACTS / "1-asset-graph.png")
    page.get_by_role("button", name="Materialize all").click()
    dialog = page.get_by_role("dialog")
    dialog.get_by_text("Select a partition or create one").click()
    page.locator("span", has_text=PARTITION).first.click()
    page.keyboard.press("Escape")
    page.screenshot(path=ARTIFACTS / "2-launch-one-partition.png")
    page.get_by_role("button", name="Launch 1 run").click()
    wait_for_materialization(ui_server.instance, "search_index", PARTITION)
    page.goto(f"{ui_server.base_url}/assets/search_index?view=checks")
    page.get_by_text("1/1 indexed").wait_for()
    body = page.inner_text("body")
    page.screenshot(path=ARTIFACTS / "3-index-check.png")
    assert "documents_reached_indexed" in body and "Passed" in body
    assert PARTITION in body, "the check's table names the partition it checked"


def test_read_a_release_gate_result_in_the_ui(ui_server, browser):
    page = browser
    page.goto(f"{ui_server.base_url}/assets/release_evaluation?view=checks")
    page.get_by_text("gate_recall_at_10").first.click()
    page.get_by_text(f"{ui_server.release_id}: recall_at_10 = 1.0").wait_for()
    body = page.inner_text("body")
    page.screenshot(path=ARTIFACTS / "4-release-gate.png")
    assert "Passed" in body and ">= 0.85" in body


def test_kb_ui_stops_every_process_it_started_on_sigterm(ui_server):
    started = psutil.Process(ui_server.process.pid).children(recursive=True)
    assert len(started) >= 2, "webserver and daemon (and their code servers)"
    ui_server.process.send_signal(signal.SIGTERM)
    assert ui_server.process.wait(90) == 128 + signal.SIGTERM
    _, alive = psutil.wait_procs(started, timeout=30)
    assert alive == [], f"left running: {[p.pid for p in alive]}"
