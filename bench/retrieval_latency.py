"""`Retriever.retrieve` latency series of the retrieval benchmark (TTL cache off)."""

from __future__ import annotations

import gc
import time
from typing import Any

from bench.common import log, ratio, summary
from bench.retrieval_measure import AS_OF, HUGE, snapshot_key, with_timeout
from bench.retrieval_scale import HNSW_INDEX, MEASURED

SERIES = (
    ("default", {}, False),
    ("default, gc frozen", {}, False),
    ("audit on", {}, True),
    ("database exact", {"in_memory_max_vectors": 0, "exact_scan_max_vectors": HUGE}, False),
    ("database HNSW", {"in_memory_max_vectors": 0, "exact_scan_max_vectors": 0}, False),
)
BASELINE = "default"
FROZEN = {"default, gc frozen"}


class GcClock:
    """Time spent in the garbage collector, per generation, through `gc.callbacks`."""

    def __init__(self) -> None:
        self.ms = 0.0
        self.collections = [0, 0, 0]
        self._started = 0.0

    def __call__(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self.ms += (time.perf_counter() - self._started) * 1000
            self.collections[info["generation"]] += 1

    def __enter__(self) -> GcClock:
        gc.callbacks.append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        gc.callbacks.remove(self)


def hnsw_scans(url: str) -> int:
    """idx_scan of the HNSW index (read after the measuring session closed, so stats are flushed)."""
    import psycopg

    time.sleep(0.6)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SELECT pg_stat_clear_snapshot()")
        row = conn.execute(
            "SELECT idx_scan FROM pg_stat_user_indexes WHERE indexrelname = %s", (HNSW_INDEX,)
        ).fetchone()
    return int(row[0]) if row else 0


def latency_run(
    url: str, kb: Any, queries: list[dict[str, Any]], overrides: dict[str, Any], audit: bool,
    args: Any, freeze: bool = False,
) -> dict[str, Any]:  # fmt: skip
    """Queries in order through a fresh Retriever on a fresh connection (two warm-up calls).

    The process-wide snapshot store keeps one slot per (database URL, tenant, pipeline) whatever
    `in_memory_max_vectors` is, so it is cleared first: the warm-up calls then load this
    series' snapshot (or record that the tenant is searched in PostgreSQL). `snapshot_loads`
    counts loads during the timed calls (expected 0). Stops at the first statement timeout or
    when the time budget is spent. `gc` (timings) is the collector's time inside each call;
    with `freeze`, everything alive after the warm-up is moved out of the collector's reach
    (`gc.collect(); gc.freeze()`) for the timed calls.
    """
    import psycopg

    from kb_retrieval.db import Database
    from kb_retrieval.retrieval.config import RetrievalConfig
    from kb_retrieval.retrieval.retriever import Retriever
    from kb_retrieval.retrieval.snapshot_store import SNAPSHOTS, read_generation

    db = Database(with_timeout(url, args.timeout_s))
    config = RetrievalConfig(cache_ttl_seconds=0, **overrides)
    retriever = Retriever(db, kb.embedder, kb.versions, config, None, audit=audit)
    SNAPSHOTS.clear()
    scans_before = hnsw_scans(url)
    samples: dict[str, list[float]] = {}
    warmup: list[float] = []
    real = searched = 0
    loads_before = loads_after = SNAPSHOTS.loads
    timed_out = False
    started_run = time.perf_counter()
    clock = GcClock().__enter__()
    slow_gc: list[int] = []
    frozen = 0
    try:
        for case in queries[:2]:
            started = time.perf_counter()
            retriever.retrieve(
                MEASURED, case["email"], as_of=AS_OF, trip_context=case.get("trip_context")
            )
            warmup.append(round((time.perf_counter() - started) * 1000, 1))
        loads_before = SNAPSHOTS.loads
        started_run = time.perf_counter()  # the budget is for the timed calls, not the warm-up
        if freeze:
            gc.collect()
            gc.freeze()
            frozen = gc.get_freeze_count()
        for case in queries:
            if time.perf_counter() - started_run > args.budget_s:
                break
            gc_before, collections_before = clock.ms, sum(clock.collections)
            started = time.perf_counter()
            result = retriever.retrieve(
                MEASURED, case["email"], as_of=AS_OF, trip_context=case.get("trip_context")
            )
            timings = {**result.timings_ms, "wall": (time.perf_counter() - started) * 1000}
            timings["gc"] = clock.ms - gc_before
            slow_gc.append(sum(clock.collections) - collections_before)
            timings["other"] = timings["total"] - sum(
                timings.get(k, 0.0) for k in ("plan", "embed", "database", "ranking")
            )
            timings["after_total"] = timings["wall"] - timings["total"]
            for key, value in timings.items():
                samples.setdefault(key, []).append(value)
            searched += "embed" in result.timings_ms
            real += any(e["doc_version_id"].startswith("docv_") for e in result.pack["evidence"])
        loads_after = SNAPSHOTS.loads
    except psycopg.errors.QueryCanceled:
        timed_out = True
    finally:
        clock.__exit__()
        if freeze:
            gc.unfreeze()
    with db.tenant(MEASURED) as conn:
        generation = read_generation(conn, MEASURED)
        in_memory = SNAPSHOTS.get(
            conn, db.url, snapshot_key(kb), generation, max_vectors=config.in_memory_max_vectors
        )
    db.close()
    return {
        "timings_ms": {k: summary(v) for k, v in samples.items()},
        "samples_ms": {
            k: [round(x, 1) for x in samples.get(k, [])] for k in ("total", "wall", "gc")
        },
        "gc_collections": {"per_call": slow_gc, "by_generation": clock.collections},
        "frozen_objects": frozen,
        "warmup_ms": warmup,
        "completed": len(samples.get("total", [])),
        "timed_out": timed_out,
        "searched": searched,
        "packs_with_real_evidence": real,
        "path": "memory" if in_memory is not None else "database",
        "snapshot_loads": loads_after - loads_before,
        "hnsw_index_scans": hnsw_scans(url) - scans_before,
    }


def latency_series(
    url: str, kb: Any, queries: list[dict[str, Any]], sql_lexical_timed_out: bool, args: Any
) -> dict[str, Any]:
    """Every SERIES through `latency_run`, each total relative to BASELINE's.

    The database series are skipped when the SQL lexical leg alone timed out.
    """
    runs: dict[str, Any] = {}
    for name, overrides, audit in SERIES:
        if overrides.get("in_memory_max_vectors") == 0 and sql_lexical_timed_out:
            runs[name] = {"skipped": f"the SQL lexical leg alone exceeds {args.timeout_s} s"}
            continue
        runs[name] = latency_run(url, kb, queries, overrides, audit, args, name in FROZEN)
    base = runs.get(BASELINE, {}).get("timings_ms", {}).get("total", {})
    for name, run in runs.items():
        if "skipped" in run:
            continue
        t = run["timings_ms"].get("total", {})
        run["total_over_default"] = {
            p: ratio(t.get(p, 0.0), base.get(p, 0.0)) for p in ("p50", "p95")
        }
        log(f"  {name}: {run['completed']} queries on {run['path']}, total p50 {t.get('p50')} "
            f"p95 {t.get('p95')} ms, timed out {run['timed_out']}")  # fmt: skip
    return runs
