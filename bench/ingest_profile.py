"""Where ingestion's time goes outside the model's forward passes (issue 11, session 10).

One replica of the demo corpus is ingested with the real MiniLM model (`bench.ingest`'s path:
register, parse, chunk, `embed_many`, publish per tenant) to learn the model's time and every
vector it returns. Then `--replicas` more replicas are ingested with `MemoEmbedder`: the real
tokenizer windows, and the vectors the model gave for the same texts served from memory, so
the same rows are written and everything timed is the overhead. That phase runs under
cProfile; reported: wall and CPU seconds of this process, of the PostgreSQL server (postmaster
and backends) and of the parse worker, each step's seconds, the profile grouped by stage
(`STAGES`), and the top functions by own time.

    .venv/bin/python -m bench.ingest_profile [--json] [--replicas N] [--fake]

`--fake`: the fake-hash embedder instead (its own windows, no model load): the overhead of
two checkouts compared quickly (run this file with `PYTHONPATH=<other checkout>`).
"""

from __future__ import annotations

import cProfile
import pstats
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bench.ingest import StepClock, TimedEmbedder, cpu_s, ingest_replica, replica_folders

# Stage -> (file fragment, function name) whose cumulative time the stage is; measured inside
# the profiled phase. Stages may nest (the database's share of a step is also in the step).
STAGES: dict[str, tuple[str, str]] = {
    "register (manifest, version rows)": ("ingestion/pipeline.py", "register"),
    "settled (one query per tenant)": ("ingestion/build_steps.py", "settled"),
    "parse (worker round trip, temp copy)": ("ingestion/source_copy.py", "parse_private_copy"),
    "chunk_document (tokenizer, sections)": ("ingestion/chunking.py", "chunk_document"),
    "term_frequencies (analyzer)": ("text/analyzer.py", "term_frequencies"),
    "windows (tokenizer offsets)": ("bench/ingest_profile.py", "windows"),
    "sentence_units": ("text/sentence_units.py", "sentence_units"),
    "model stand-in (memo lookup)": ("bench/ingest_profile.py", "embed"),
    "psycopg execute": ("psycopg/cursor.py", "execute"),
    "psycopg executemany": ("psycopg/cursor.py", "executemany"),
    "psycopg connection execute": ("psycopg/connection.py", "execute"),
    "transaction commit": ("psycopg/transaction.py", "__exit__"),
    "advisory locks (exclusive)": ("db/connection.py", "exclusive"),
}


class MemoEmbedder:
    """The real embedder's windows; `embed` serves vectors recorded from the real model."""

    def __init__(self, inner: Any, memo: dict[str, np.ndarray]) -> None:
        self.inner = inner
        self.memo = memo
        self.model_id: str = inner.model_id
        self.dimensions: int = inner.dimensions

    def windows(self, text: str) -> list[str]:
        return self.inner.windows(text)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return np.stack([self.memo[t] for t in texts]).astype(np.float32)

    def embed_query(self, texts: Sequence[str]) -> np.ndarray:
        return self.embed(texts)


class RecordingEmbedder(TimedEmbedder):
    """`TimedEmbedder` that also keeps each text's vector."""

    def __init__(self, inner: Any) -> None:
        super().__init__(inner)
        self.memo: dict[str, np.ndarray] = {}

    def embed(self, texts: Sequence[str]) -> Any:
        matrix = super().embed(texts)
        self.memo.update({t: matrix[i] for i, t in enumerate(texts)})
        return matrix


def process_cpu(pid: int, children: bool) -> float:
    """CPU seconds of a process (and its children: the server's backends)."""
    import psutil

    proc = psutil.Process(pid)
    total = sum(proc.cpu_times()[:2])
    if children:
        total += sum(sum(c.cpu_times()[:2]) for c in proc.children(recursive=True))
    return total


def server_pid(home: Path) -> int:
    return int((home / "pgdata" / "postmaster.pid").read_text().splitlines()[0])


def worker_cpu() -> float:
    """CPU seconds of this process's child processes (the parse worker)."""
    import psutil

    return sum(sum(c.cpu_times()[:2]) for c in psutil.Process().children(recursive=True))


def stage_seconds(stats: pstats.Stats) -> dict[str, float]:
    out = dict.fromkeys(STAGES, 0.0)
    for (filename, _line, name), row in stats.stats.items():  # type: ignore[attr-defined]
        for stage, (fragment, function) in STAGES.items():
            if name == function and filename.endswith(fragment):
                out[stage] += row[3]
    return {k: round(v, 3) for k, v in out.items()}


def top_functions(stats: pstats.Stats, count: int) -> list[list[Any]]:
    rows = sorted(stats.stats.items(), key=lambda item: -item[1][2])  # type: ignore[attr-defined]
    return [
        [f"{Path(f).name}:{line} {name}", calls, round(own, 3), round(cumulative, 3)]
        for (f, line, name), (_prim, calls, own, cumulative, _callers) in rows[:count]
    ]


def run(args: Any, home: Any) -> dict[str, Any]:
    from bench.common import DEMO_TENANTS, load, open_database_and_model
    from kb_retrieval.ingestion.pipeline import IngestionPipeline

    corpus = home.path / "corpus"
    if args.fake:
        from kb_retrieval.db import Database
        from kb_retrieval.embedding import FakeHashEmbedder

        db, setup = Database(home.url), {"server_start_s": home.startup_s}
        db.migrate()
        inner: Any = FakeHashEmbedder()
        warm = IngestionPipeline(db, inner)
        first = ingest_replica(warm, replica_folders(DEMO_TENANTS, corpus, "m00"), False)
        model = {"chunks": first["chunks"], "seconds": 0.0, "model_s": 0.0, "fake": True}
    else:
        db, real, setup = open_database_and_model(home)
        recording = RecordingEmbedder(real)
        started, cpu_started = time.perf_counter(), cpu_s()
        first = ingest_replica(
            IngestionPipeline(db, recording), replica_folders(DEMO_TENANTS, corpus, "m00"), False
        )
        model = {
            "chunks": first["chunks"],
            "seconds": round(time.perf_counter() - started, 3),
            "cpu_s": round(cpu_s() - cpu_started, 3),
            "model_s": round(recording.embed_s, 3),
            "texts": recording.texts,
        }
        inner = MemoEmbedder(real, recording.memo)
    pipeline = IngestionPipeline(db, inner)
    clock = StepClock(pipeline)
    replicas = [replica_folders(DEMO_TENANTS, corpus, f"p{i:02d}") for i in range(args.replicas)]
    server = server_pid(home.path)
    before = (time.perf_counter(), cpu_s(), process_cpu(server, True), worker_cpu())
    profile = cProfile.Profile()
    if not args.no_profile:
        profile.enable()
    rows = [ingest_replica(pipeline, folders, False) for folders in replicas]
    profile.disable()
    after = (time.perf_counter(), cpu_s(), process_cpu(server, True), worker_cpu())
    if args.no_profile:
        profile.runcall(len, "")  # an empty profile: the stage table is all zeros
    stats = pstats.Stats(profile)
    n = max(1, len(rows))
    wall, cpu, server_cpu, parse_cpu = (
        round((b - a) / n, 3) for a, b in zip(before, after, strict=True)
    )
    return {
        "setup": setup,
        "load": load(),
        "model_replica": model,
        "overhead_per_replica": {
            "replicas": len(rows),
            "chunks": sum(r["chunks"] for r in rows) / n,
            "wall_s": wall,
            "cpu_s": cpu,
            "server_cpu_s": server_cpu,
            "parse_worker_cpu_s": parse_cpu,
            "steps_s": {k: round(v / n, 3) for k, v in clock.seconds.items()},
            "stages_s": {k: round(v / n, 3) for k, v in stage_seconds(stats).items()},
        },
        "profiled": "cProfile adds its own cost to every Python call: read shares, not seconds",
        "top_own_time": top_functions(stats, args.top),
    }


def render(result: dict[str, Any]) -> str:
    from bench.common import header, table

    o, m = result["overhead_per_replica"], result["model_replica"]
    return "\n".join(
        [
            *header(result),
            f"model replica: {m['chunks']} chunks, {m['seconds']} s wall, model {m['model_s']} s",
            f"overhead per replica ({o['replicas']} replicas, vectors from memory): wall "
            f"{o['wall_s']} s, CPU {o['cpu_s']} s, server CPU {o['server_cpu_s']} s, parse "
            f"worker CPU {o['parse_worker_cpu_s']} s",
            "",
            table(["step", "s per replica"], sorted(o["steps_s"].items())),
            "",
            table(["stage (cumulative, profiled)", "s per replica"], list(o["stages_s"].items())),
            "",
            table(["function", "calls", "own s", "cumulative s"], result["top_own_time"]),
        ]
    )


def main(argv: Sequence[str] | None = None) -> None:
    from bench.common import base_parser, bench_home, finish, machine

    parser = base_parser(__doc__.splitlines()[0])
    parser.add_argument("--replicas", type=int, default=4, help="profiled replicas (memo vectors)")
    parser.add_argument("--top", type=int, default=25, help="functions listed by own time")
    parser.add_argument("--fake", action="store_true", help="fake-hash embedder, no model")
    parser.add_argument("--no-profile", action="store_true", help="time only, no cProfile")
    args = parser.parse_args(argv)
    info = machine()
    started = time.perf_counter()
    with bench_home("ingest-profile", keep=args.keep) as home:
        result = run(args, home)
    finish(
        result,
        "ingest_profile",
        args,
        ("replicas", "top", "fake", "no_profile"),
        info,
        started,
        render,
    )


if __name__ == "__main__":
    main()
