"""Crash consistency of ingestion: kill -9 at random points of every phase, check, resume.

    python bench/crash_consistency.py [--kills 24] [--seed 9] [--url OWNER_URL] [--json]

A child process ingests a tenant folder with the plain library (IngestionPipeline, fake-hash
embedder) and prints a marker before each phase of each version: parse, chunk, embed, vectors
(embeddings computed, rows about to be inserted) and publish. The parent picks a phase (in
turn, so every phase is covered) and its k-th occurrence at random, waits 0-40 ms after the
marker and kills the child with SIGKILL. After each kill it checks the invariants in SQL and
that the child's descendants (the parse worker) died with it. Every round starts from an
empty database, kills twice (the second kill hits a resumed run) and ends with a run to
completion whose fingerprint must equal that of a clean, uninterrupted ingest.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.common import DEMO_TENANTS, bench_home, log  # noqa: E402

PHASES = ("parse", "chunk", "embed", "vectors", "publish")
KILLS_PER_ROUND = 2
TENANT = "alpine-treks"

INVARIANTS = {
    "duplicate_chunks": """
        SELECT count(*) FROM (SELECT 1 FROM chunks GROUP BY tenant_id, doc_version_id,
            parser_version, chunker_version, chunk_id HAVING count(*) > 1) d""",
    "duplicate_vectors": """
        SELECT count(*) FROM (SELECT 1 FROM chunk_vectors GROUP BY tenant_id, doc_version_id,
            chunker_version, chunk_id, embedding_model_id, window_index HAVING count(*) > 1) d""",
    "indexed_with_missing_chunks": """
        SELECT count(*) FROM doc_builds b WHERE b.state = 'indexed' AND b.chunk_count <> (
            SELECT count(*) FROM chunks c WHERE c.tenant_id = b.tenant_id
              AND c.doc_version_id = b.doc_version_id AND c.parser_version = b.parser_version
              AND c.chunker_version = b.chunker_version)""",
    "indexed_with_missing_vectors": """
        SELECT count(*) FROM doc_builds b JOIN chunks c ON c.tenant_id = b.tenant_id
            AND c.doc_version_id = b.doc_version_id AND c.parser_version = b.parser_version
            AND c.chunker_version = b.chunker_version
        WHERE b.state = 'indexed' AND NOT EXISTS (SELECT 1 FROM chunk_vectors v
            WHERE v.chunk_pk = c.id AND v.embedding_model_id = b.embedding_model_id)""",
    "indexed_with_wrong_window_count": """
        SELECT count(*) FROM doc_builds b WHERE b.state = 'indexed' AND b.window_count <> (
            SELECT count(*) FROM chunk_vectors v JOIN chunks c ON c.id = v.chunk_pk
            WHERE c.tenant_id = b.tenant_id AND c.doc_version_id = b.doc_version_id
              AND c.parser_version = b.parser_version AND c.chunker_version = b.chunker_version
              AND v.embedding_model_id = b.embedding_model_id)""",
    "vectors_without_chunk": """
        SELECT count(*) FROM chunk_vectors v WHERE NOT EXISTS (
            SELECT 1 FROM chunks c WHERE c.id = v.chunk_pk AND c.tenant_id = v.tenant_id)""",
    "builds_without_version": """
        SELECT count(*) FROM doc_builds b WHERE NOT EXISTS (SELECT 1 FROM doc_versions d
            WHERE d.tenant_id = b.tenant_id AND d.doc_version_id = b.doc_version_id)""",
    "parse_hash_mismatch": """
        SELECT count(*) FROM doc_parses p JOIN doc_versions d USING (tenant_id, doc_version_id)
        WHERE p.content_hash <> d.content_hash""",
    "unknown_states": """
        SELECT count(*) FROM doc_builds WHERE state NOT IN ('received', 'queued', 'parsing',
            'parsed', 'chunking', 'chunked', 'embedding', 'indexed', 'failed', 'needs_attention')""",
}
FINGERPRINT = {
    "builds": """SELECT doc_version_id, state, coalesce(reason_code, ''), chunk_count, window_count
        FROM doc_builds ORDER BY doc_version_id""",
    "chunks": """SELECT md5(string_agg(doc_version_id || '/' || chunk_id || '/' || text_hash, ','
        ORDER BY doc_version_id, chunk_id)) FROM chunks""",
    "vectors": """SELECT count(*), md5(string_agg(chunk_id || ':' || window_index || ':'
        || embedding::text, ',' ORDER BY doc_version_id, chunk_id, window_index))
        FROM chunk_vectors""",
    "cached_texts": "SELECT count(*) FROM embedding_cache",
}


# -- child --------------------------------------------------------------------------------
def child(url: str, folder: Path) -> None:
    """Ingest `folder` step by step, printing a marker before each phase."""
    from kb_retrieval.db import Database
    from kb_retrieval.embedding import FakeHashEmbedder
    from kb_retrieval.ingestion.pipeline import IngestionPipeline

    current = {"version": ""}

    class MarkingEmbedder(FakeHashEmbedder):
        def embed(self, texts):  # type: ignore[no-untyped-def]
            vectors = super().embed(texts)
            print(f"STEP vectors {current['version']}", flush=True)
            return vectors

    pipeline = IngestionPipeline(Database(url), MarkingEmbedder())
    registration = pipeline.register(folder)
    for version in registration.registered:
        current["version"] = version
        for name in ("parse", "chunk", "embed", "publish"):
            print(f"STEP {name} {version}", flush=True)
            getattr(pipeline, name)(registration.tenant_id, version)
    print("DONE", flush=True)


def spawn_child(url: str, folder: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, __file__, "--child", url, str(folder)],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1"},
    )


def descendants(pid: int) -> list[int]:
    """Child processes of `pid`, recursively (Linux /proc)."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*/children"):
        for child_pid in task.read_text().split():
            found.append(int(child_pid))
            found.extend(descendants(int(child_pid)))
    return found


def alive(pid: int) -> bool:
    status = Path(f"/proc/{pid}/status")
    try:
        return "State:\tZ" not in status.read_text()
    except OSError:
        return False


def run_and_kill(url: str, folder: Path, phase: str, occurrence: int, delay_s: float) -> dict:
    """Run a child until the `occurrence`-th marker of `phase`, then SIGKILL it after a delay."""
    process = spawn_child(url, folder)
    seen, killed, family, orphans = 0, False, [], []
    assert process.stdout is not None
    for line in process.stdout:
        if line.startswith(f"STEP {phase} "):
            seen += 1
            if seen == occurrence:
                time.sleep(delay_s)
                family = descendants(process.pid)
                process.send_signal(signal.SIGKILL)
                killed = True
                break
    process.wait()
    if killed:
        deadline = time.monotonic() + 3
        while time.monotonic() < deadline and any(alive(p) for p in family):
            time.sleep(0.05)
        orphans = [p for p in family if alive(p)]
    return {
        "phase": phase,
        "occurrence": occurrence,
        "delay_ms": round(delay_s * 1000),
        "killed": killed,
        "descendants": len(family),
        "orphans": orphans,
    }


def run_to_end(url: str, folder: Path) -> None:
    process = spawn_child(url, folder)
    out, _ = process.communicate(timeout=600)
    if process.returncode != 0 or "DONE" not in out:
        raise RuntimeError(f"ingest did not finish (exit {process.returncode})")


# -- checks -------------------------------------------------------------------------------
def query_all(url: str, statements: dict[str, str]) -> dict[str, Any]:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        return {name: conn.execute(sql).fetchall() for name, sql in statements.items()}


def violations(url: str) -> dict[str, int]:
    return {name: rows[0][0] for name, rows in query_all(url, INVARIANTS).items() if rows[0][0]}


def fresh_database(owner_url: str, name: str) -> str:
    import psycopg

    from kb_retrieval.db import Database

    with psycopg.connect(owner_url, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {name}")
    url = psycopg.conninfo.make_conninfo(owner_url, dbname=name)
    Database(url).migrate()
    return url


def crash_consistency(owner_url: str, folder: Path, kills: int, seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    clean_url = fresh_database(owner_url, "crash_clean")
    run_to_end(clean_url, folder)
    clean = query_all(clean_url, FINGERPRINT)
    versions = len(clean["builds"])
    rounds, kill_log, failures = 0, [], []
    while sum(k["killed"] for k in kill_log) < kills:
        rounds += 1
        url = fresh_database(owner_url, "crash_run")
        for attempt in range(KILLS_PER_ROUND):
            phase = PHASES[sum(k["killed"] for k in kill_log) % len(PHASES)]
            # A resumed run skips finished versions: its markers come early, if at all.
            occurrence = rng.randint(1, versions if attempt == 0 else 3)
            record = run_and_kill(url, folder, phase, occurrence, rng.uniform(0, 0.04))
            record["violations"] = violations(url)
            kill_log.append(record)
            log(f"round {rounds}: {record}")
            if record["violations"] or record["orphans"]:
                failures.append(record)
        run_to_end(url, folder)
        final = query_all(url, FINGERPRINT)
        if violations(url) or final != clean:
            failures.append({"round": rounds, "fingerprint_differs": final != clean})
    killed = [k for k in kill_log if k["killed"]]
    return {
        "benchmark": "crash_consistency",
        "command": f"python bench/crash_consistency.py --kills {kills} --seed {seed} --json",
        "tenant": TENANT,
        "versions": versions,
        "rounds": rounds,
        "kills": len(killed),
        "kills_per_phase": {p: sum(k["phase"] == p for k in killed) for p in PHASES},
        "invariant_violations": sum(len(k["violations"]) for k in kill_log),
        "descendants_checked": sum(k["descendants"] for k in kill_log),
        "orphan_processes": sum(len(k["orphans"]) for k in kill_log),
        "rounds_not_reaching_clean_state": sum("round" in f for f in failures),
        "failures": failures,
        "ok": not failures,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=24)
    parser.add_argument("--seed", type=int, default=9)
    parser.add_argument("--url", help="owner URL of a running server (else a private one)")
    parser.add_argument("--folder", type=Path, default=DEMO_TENANTS / TENANT)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--child", nargs=2, metavar=("URL", "FOLDER"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child[0], Path(args.child[1]))
        return
    started = time.perf_counter()
    if args.url:
        result = crash_consistency(args.url, args.folder, args.kills, args.seed)
    else:
        with bench_home("crash") as home:
            result = crash_consistency(home.url, args.folder, args.kills, args.seed)
    result["wall_s"] = round(time.perf_counter() - started, 1)
    print(json.dumps(result, indent=None if args.json else 2))
    sys.exit(0 if result["ok"] else 1)


if __name__ == "__main__":
    main()
