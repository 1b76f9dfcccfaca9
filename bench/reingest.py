"""The fixed cost of an unchanged re-ingest, model-free: where its time and round trips go.

Ingests `--replicas` copies of the demo corpus with the fake-hash embedder (the model is not
what an unchanged re-ingest spends: it embeds nothing), then re-ingests them `--rounds` times
as `bench.ingest` does (`ingest_replica`) and, with `--dagster-rounds`, through `ingest_folder`
(what `kb ingest` runs). Per round: wall and process CPU time (medians reported), SQL
statements and transactions (counted on the psycopg classes), and the seconds of each pipeline
step. `--kb-home DIR` keeps the database, so that another checkout's code (its own
`PYTHONPATH`) can re-ingest the same rows: an A/B of the fixed cost on identical data.

    PYTHONPATH=$PWD .venv/bin/python -m bench.reingest [--json] [--replicas 4] [--rounds 7]
"""

from __future__ import annotations

import contextlib
import io
import time
from collections.abc import Sequence
from pathlib import Path
from statistics import median
from typing import Any

import psycopg

COUNTS = {"statements": 0, "transactions": 0}


def count_round_trips() -> None:
    """Count cursor executions and transactions from now on (`Connection.execute` goes through
    `Cursor.execute`; a transaction adds its BEGIN and COMMIT round trips)."""
    execute, transaction = psycopg.Cursor.execute, psycopg.Connection.transaction

    def counted_execute(self: Any, *args: Any, **kwargs: Any) -> Any:
        COUNTS["statements"] += 1
        return execute(self, *args, **kwargs)

    def counted_transaction(self: Any, *args: Any, **kwargs: Any) -> Any:
        COUNTS["transactions"] += 1
        return transaction(self, *args, **kwargs)

    psycopg.Cursor.execute = counted_execute  # type: ignore[method-assign]
    psycopg.Connection.transaction = counted_transaction  # type: ignore[method-assign]


def timed_rounds(rounds: int, work: Any) -> dict[str, Any]:
    """Run `work()` `rounds` times: medians of wall and CPU time, round trips of the last round."""
    from bench.ingest import cpu_s

    walls, cpus = [], []
    for _ in range(rounds):
        before = dict(COUNTS)
        started, cpu_started = time.perf_counter(), cpu_s()
        result = work()
        walls.append(time.perf_counter() - started)
        cpus.append(cpu_s() - cpu_started)
    return {
        "seconds": round(median(walls), 4),
        "cpu_s": round(median(cpus), 4),
        "round_seconds": [round(w, 4) for w in walls],
        **{key: COUNTS[key] - before[key] for key in COUNTS},
        "result": result,
    }


def run(args: Any, home: Any) -> dict[str, Any]:
    from bench.common import DEMO_TENANTS, log
    from bench.ingest import StepClock, ingest_replica, replica_folders
    from kb_retrieval.db import Database
    from kb_retrieval.embedding import FakeHashEmbedder
    from kb_retrieval.ingestion.pipeline import IngestionPipeline

    started = time.perf_counter()
    db = Database(home.url)
    db.migrate()
    setup = {"server_start_s": home.startup_s, "migrate_s": round(time.perf_counter() - started, 2)}
    pipeline = IngestionPipeline(db, FakeHashEmbedder())
    corpus = home.path / "corpus"
    if not corpus.is_dir():
        log(f"first ingest of {args.replicas} replicas (fake-hash embedder)")
        for index in range(args.replicas):
            ingest_replica(pipeline, replica_folders(DEMO_TENANTS, corpus, f"r{index:02d}"), False)
    folders = sorted(path.parent for path in corpus.glob("*/kb.yaml"))
    ingest_replica(pipeline, folders, False)  # warm-up: connections, imports, caches
    clock = StepClock(pipeline)
    count_round_trips()

    def in_process() -> dict[str, Any]:
        out = ingest_replica(pipeline, folders, False)
        return {key: out.get(key) for key in ("versions", "settled", "embedded_windows")}

    result: dict[str, Any] = {
        "setup": setup,
        "folders": len(folders),
        "in_process": timed_rounds(args.rounds, in_process),
    }
    result["in_process"]["steps_ms_per_round"] = {
        name: round(1000 * seconds / args.rounds, 1) for name, seconds in clock.seconds.items()
    }
    if args.dagster_rounds:
        result["dagster"] = dagster_rounds(home.url, folders, args.dagster_rounds)
    return result


def dagster_rounds(url: str, folders: Sequence[Path], rounds: int) -> dict[str, Any]:
    """`ingest_folder` of every (unchanged) folder per round, one ephemeral instance."""
    from dagster import DagsterInstance

    from kb_pipeline.ingest.folder_ingest import ingest_folder
    from kb_pipeline.resources import KnowledgeBaseResource

    instance = DagsterInstance.ephemeral()
    kb = KnowledgeBaseResource(database_url=url, embedder="fake-hash")

    def every_folder() -> dict[str, Any]:
        rows = [row for f in folders for row in ingest_folder(f, kb=kb, instance=instance)]
        return {"rows": len(rows), "embedded": sum(row["embedded"] for row in rows)}

    with contextlib.redirect_stderr(io.StringIO()):
        every_folder()  # registers the partitions (and runs what an older code would run)
        runs = len(instance.get_runs())
        out = timed_rounds(rounds, every_folder)
    out["runs_per_round"] = (len(instance.get_runs()) - runs) / rounds
    return out


def render(result: dict[str, Any]) -> str:
    from bench.common import header

    lines = header(result)
    for name in ("in_process", "dagster"):
        if name in result:
            r = result[name]
            lines.append(
                f"{name}: median {r['seconds']} s wall, {r['cpu_s']} s CPU per round of "
                f"{result['folders']} folders; {r['statements']} statements, "
                f"{r['transactions']} transactions; {r['result']}"
                + (f"; steps {r['steps_ms_per_round']} ms" if "steps_ms_per_round" in r else "")
                + (
                    f"; Dagster runs per round {r['runs_per_round']}"
                    if "runs_per_round" in r
                    else ""
                )
            )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    from bench.common import base_parser, bench_home, finish, machine

    parser = base_parser(__doc__.splitlines()[0])
    parser.add_argument("--replicas", type=int, default=4, help="copies of the demo corpus")
    parser.add_argument("--rounds", type=int, default=7, help="unchanged re-ingests, in process")
    parser.add_argument(
        "--dagster-rounds", type=int, default=3, help="unchanged ingest_folder rounds (0: none)"
    )
    parser.add_argument("--kb-home", type=Path, help="reuse (or create and keep) this KB_HOME")
    args = parser.parse_args(argv)
    if args.quick:
        args.replicas, args.rounds, args.dagster_rounds = 1, 3, 1
    info, started = machine(), time.perf_counter()
    with bench_home("reingest", keep=args.keep, path=args.kb_home) as home:
        result = run(args, home)
    keys = ("replicas", "rounds", "dagster_rounds", "quick")
    finish(result, "reingest", args, keys, info, started, render)


if __name__ == "__main__":
    main()
