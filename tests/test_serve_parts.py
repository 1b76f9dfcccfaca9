"""Parts of `kb serve` on their own: tokens, the worker pool's limits, snapshot reloads, `kb token`,
and the MCP tools over stdio (`kb mcp` as a subprocess)."""

from __future__ import annotations

import asyncio
import os
import sys
import threading
import time

import anyio
import pytest
from typer.testing import CliRunner

from kb_retrieval.retrieval import snapshot_store
from kb_retrieval.retrieval.snapshot import SnapshotKey
from kb_retrieval.serving.errors import ApiError

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_tokens_are_stored_hashed_bound_to_a_tenant_and_revocable(db):
    from kb_retrieval.serving.tokens import TokenStore, token_hash

    store = TokenStore(db)
    issued = store.create("hash-check", "unit")
    with db.admin() as conn:
        row = conn.execute(
            "SELECT tenant_id, token_sha256, row_to_json(t)::text FROM api_tokens t "
            "WHERE token_id = %s",
            (issued.token_id,),
        ).fetchone()
    assert row[0] == "hash-check" and row[1] == token_hash(issued.secret)
    assert issued.secret not in row[2], "the secret itself is never stored"
    assert store.resolve(issued.secret).tenant_id == "hash-check"
    assert store.resolve(issued.secret[:-1]) is None
    assert store.resolve("Bearer " + issued.secret) is None
    assert store.resolve(None) is None
    assert store.revoke(issued.token_id) is True
    assert store.resolve(issued.secret) is None
    with pytest.raises(KeyError):
        store.revoke("tok_000000000000")
    with pytest.raises(ValueError, match="invalid tenant_id"):
        store.create("Not A Tenant")


def _core(db, **limits):
    from kb_retrieval.service import KnowledgeBase
    from kb_retrieval.serving.core import ServeSettings, ServingCore

    return ServingCore(KnowledgeBase(db, None, None), ServeSettings(**limits))  # type: ignore[arg-type]


def test_a_slow_job_answers_504_and_keeps_its_slot_until_it_ends(db):
    core = _core(db, workers=1, queue_limit=0, timeout_s=0.2)
    release = threading.Event()

    async def scenario() -> list[int]:
        statuses = []
        for _ in range(2):
            try:
                await core.run(release.wait, 5)
            except ApiError as error:
                statuses.append(error.status)
        release.set()
        await asyncio.sleep(0.1)
        statuses.append(200 if await core.run(lambda: True) else 0)
        return statuses

    try:
        # The first job times out (504) but still runs: the second is refused (503) because
        # the one worker and its empty queue are full; once it ends, work is accepted again.
        assert asyncio.run(scenario()) == [504, 503, 200]
    finally:
        release.set()
        core.close()


def test_concurrent_jobs_beyond_the_workers_wait_in_the_queue(db):
    core = _core(db, workers=2, queue_limit=4, timeout_s=5)
    active, peak = [0], [0]
    lock = threading.Lock()

    def job() -> None:
        with lock:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
        time.sleep(0.05)
        with lock:
            active[0] -= 1

    async def scenario() -> list[object]:
        return await asyncio.gather(*(core.run(job) for _ in range(6)), return_exceptions=True)

    try:
        results = asyncio.run(scenario())
    finally:
        core.close()
    assert results == [None] * 6 and peak[0] == 2


def test_a_reload_never_blocks_readers_of_the_older_snapshot(monkeypatch):
    """While one thread loads generation 2, another reader gets generation 1 at once."""
    loading, finish = threading.Event(), threading.Event()

    class Loaded:
        def __init__(self, generation: int) -> None:
            self.generation = generation
            self.nbytes = 10
            self.file_nbytes = 0

    def slow_load(conn, key, generation, max_vectors, previous):
        if generation == 2:
            loading.set()
            assert finish.wait(10)
        return Loaded(generation)

    monkeypatch.setattr(snapshot_store, "load_snapshot", slow_load)
    store = snapshot_store.SnapshotStore(max_bytes=10**6)
    key = SnapshotKey("reload-t", "p", "c", "e")
    assert store.get(None, "db", key, 1, max_vectors=100).generation == 1
    loaded = {}
    loader = threading.Thread(
        target=lambda: loaded.setdefault("snap", store.get(None, "db", key, 2, max_vectors=100))
    )
    loader.start()
    assert loading.wait(10)
    started = time.perf_counter()
    reader = store.get(None, "db", key, 2, max_vectors=100)
    assert reader.generation == 1 and time.perf_counter() - started < 1
    assert store.stale_served == 1
    finish.set()
    loader.join(10)
    assert loaded["snap"].generation == 2
    assert store.get(None, "db", key, 2, max_vectors=100).generation == 2
    assert (store.loads, store.hits) == (2, 1)


def test_kb_token_create_list_revoke(database_url, monkeypatch, tmp_path):
    from kb_pipeline.cli import app

    monkeypatch.setenv("KB_DATABASE_URL", database_url)
    monkeypatch.setenv("KB_HOME", str(tmp_path / "home"))
    runner = CliRunner()
    created = runner.invoke(app, ["token", "create", "--tenant", "cli-tenant", "--label", "ops"])
    assert created.exit_code == 0, created.output
    secret = created.stdout.strip().splitlines()[-1]
    assert secret.startswith("kbt_")
    listed = runner.invoke(app, ["token", "list", "--tenant", "cli-tenant"])
    token_id = listed.stdout.split()[0]
    assert "active" in listed.stdout and secret not in listed.stdout
    revoked = runner.invoke(app, ["token", "revoke", token_id])
    assert revoked.exit_code == 0 and "revoked" in revoked.stdout
    assert "revoked" in runner.invoke(app, ["token", "list", "--tenant", "cli-tenant"]).stdout
    assert runner.invoke(app, ["token", "revoke", "tok_ffffffffffff"]).exit_code == 2
    assert runner.invoke(app, ["token", "create", "--tenant", "Bad Id"]).exit_code == 2


def test_mcp_over_stdio_needs_the_tenants_token(database_url, db, demo_index):
    from mcp import Client, StdioServerParameters

    from kb_retrieval.serving.tokens import TokenStore

    token = TokenStore(db).create("alpine-treks", "stdio").secret
    env = {
        "PATH": os.environ.get("PATH", ""),
        "PYTHONPATH": REPO_ROOT,
        "KB_DATABASE_URL": database_url,
        "KB_TOKEN": token,
        "KB_EMBEDDER": "fake-hash",
        "HF_HUB_OFFLINE": "1",
    }
    params = StdioServerParameters(
        command=sys.executable,
        args=["-c", "from kb_pipeline.cli import app; app()", "mcp"],
        env=env,
        cwd=REPO_ROOT,
    )

    async def session() -> tuple[set[str], object, object, object]:
        async with Client(params, read_timeout_seconds=120) as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            docs = await client.call_tool("documents", {"tenant": "alpine-treks"})
            asked = await client.call_tool(
                "ask", {"tenant": "alpine-treks", "email": "Can I hire walking poles?"}
            )
            cross = await client.call_tool("documents", {"tenant": "coastal-kayak"})
            return names, docs, asked, cross

    names, docs, asked, cross = anyio.run(session)
    assert names == {"ask", "documents"}
    assert not docs.is_error
    listed = {d["doc_version_id"] for d in docs.structured_content["documents"]}
    assert listed == set(demo_index["alpine-treks"])
    assert not asked.is_error and asked.structured_content["tenant_id"] == "alpine-treks"
    assert cross.is_error and "forbidden" in cross.content[0].text


def test_serve_settings_come_from_the_environment_and_name_a_bad_variable(monkeypatch):
    from kb_retrieval.serving.core import ServeSettings

    monkeypatch.setenv("KB_SERVE_WORKERS", "3")
    monkeypatch.setenv("KB_SERVE_TIMEOUT_S", "2.5")
    settings = ServeSettings.from_env(host="0.0.0.0", workers=None)
    assert (settings.workers, settings.timeout_s, settings.host) == (3, 2.5, "0.0.0.0")
    assert ServeSettings.from_env(workers=5).workers == 5
    monkeypatch.setenv("KB_SERVE_WORKERS", "many")
    with pytest.raises(ValueError, match="KB_SERVE_WORKERS"):
        ServeSettings.from_env()
    monkeypatch.setenv("KB_SERVE_WORKERS", "0")
    with pytest.raises(ValueError, match="workers >= 1"):
        ServeSettings.from_env()


def test_a_tenant_session_cannot_read_the_token_table(db):
    import psycopg

    from kb_retrieval.serving.tokens import TokenStore

    TokenStore(db).create("alpine-treks", "rls check")
    with pytest.raises(psycopg.errors.InsufficientPrivilege), db.tenant("alpine-treks") as conn:
        conn.execute("SELECT count(*) FROM api_tokens").fetchone()
