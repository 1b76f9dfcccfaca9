"""The measurements of bench/query_path.py: retrieve, steps alone, recall, reload."""

from __future__ import annotations

import copy
import cProfile
import gc
import hashlib
import io
import json
import pstats
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from bench.common import header, log, summary, table
from bench.retrieval_measure import AS_OF
from bench.retrieval_scale import MEASURED

STEPS = ("embed", "scope", "vector", "lexical", "merge", "rows", "sims", "idf")


def measure(db: Any, pipeline: Any, queries: list[dict[str, Any]], args: Any) -> dict[str, Any]:
    """Every measurement on one worker thread (as the service calls `retrieve`)."""
    from kb_retrieval.retrieval.config import RetrievalConfig
    from kb_retrieval.retrieval.retriever import Retriever
    from kb_retrieval.retrieval.snapshot_store import SNAPSHOTS

    config = RetrievalConfig.from_env().model_copy(update={"cache_ttl_seconds": 0.0})
    retriever = Retriever(db, pipeline.embedder, pipeline.versions, config, audit=False)
    out: dict[str, Any] = {}
    with ThreadPoolExecutor(1) as worker:
        SNAPSHOTS.clear()
        _first, wall, cpu = timed(lambda: retrieve(retriever, queries[0]), worker)
        out["first_retrieve"] = {"wall_ms": round(wall, 1), "cpu_ms": round(cpu, 1)}
        snapshot = current_snapshot(retriever)
        out["snapshot"] = {
            "windows": snapshot.vector_count,
            "chunks": len(snapshot.chunk_pk),
            "versions": len(snapshot.version_ids),
            "heap_mib": round(snapshot.nbytes / 2**20, 1),
            "spill_mib": round(snapshot.file_nbytes / 2**20, 1),
        }
        log(f"snapshot {out['snapshot']}; retrieve x{args.rounds * len(queries)}")
        out["retrieve"] = retrieve_series(
            retriever, queries, args.rounds, worker, args.packs, args.no_gc_freeze
        )
        log("steps alone")
        out["steps"] = steps_alone(retriever, snapshot, queries, worker)
        log("recall against the exact scan")
        out["recall"] = recall(retriever, snapshot, queries, worker)
        if not getattr(args, "no_reload", False):
            log("reload after one changed version")
            out["reload"] = reload_one_version(retriever, snapshot, queries, worker)
        if args.profile:
            out["profile"] = profile(retriever, queries, worker)
        if args.profile_slowest:
            slow = dict.fromkeys(c["case_id"] for c in out["retrieve"]["slowest"])
            chosen = [q for q in queries if q["case_id"] in slow][: args.profile_slowest]
            out["profile_slowest"] = {
                q["case_id"]: profile(retriever, [q], worker, top=20) for q in chosen
            }
    return out


def retrieve(retriever: Any, case: dict[str, Any]) -> Any:
    return retriever.retrieve(
        MEASURED, case["email"], as_of=AS_OF, trip_context=case.get("trip_context")
    )


def timed(fn: Callable[[], Any], worker: ThreadPoolExecutor) -> tuple[Any, float, float]:
    """fn() on the worker thread: its result, wall ms and the thread's CPU ms."""

    def run() -> tuple[Any, float, float]:
        w0, c0 = time.perf_counter(), time.thread_time()
        value = fn()
        return value, (time.perf_counter() - w0) * 1000, (time.thread_time() - c0) * 1000

    return worker.submit(run).result()


def current_snapshot(retriever: Any) -> Any:
    from kb_retrieval.retrieval.snapshot import SnapshotKey
    from kb_retrieval.retrieval.snapshot_store import SNAPSHOTS, read_generation

    v = retriever.versions
    key = SnapshotKey(MEASURED, v.parser_version, v.chunker_version, v.embedding_model_id)
    with retriever.db.tenant(MEASURED) as conn:
        generation = read_generation(conn, MEASURED)
        return SNAPSHOTS.get(
            conn,
            retriever.db.url,
            key,
            generation,
            max_vectors=retriever.config.in_memory_max_vectors,
        )


def retrieve_series(
    retriever: Any,
    queries: list[dict[str, Any]],
    rounds: int,
    worker: ThreadPoolExecutor,
    packs: Path | None = None,
    no_freeze: bool = False,
) -> dict[str, Any]:
    """Wall and thread CPU ms of `retrieve`, the library's step timings, GC time, pack hash;
    after two warm-up calls the heap is frozen as the service's warm-up does (`heap.py`)
    unless `no_freeze`."""
    from kb_retrieval.heap import freeze_heap
    from kb_retrieval.retrieval.pack import dumps_pack

    for case in queries[:2]:
        timed(lambda c=case: retrieve(retriever, c), worker)
    frozen = 0 if no_freeze else freeze_heap()
    gc_ms: list[float] = []
    gc_start: list[float] = []

    def on_gc(phase: str, _info: dict[str, Any]) -> None:
        if phase == "start":
            gc_start.append(time.perf_counter())
        elif gc_start:
            gc_ms.append((time.perf_counter() - gc_start.pop()) * 1000)

    walls, cpus, gcs, process_cpus = [], [], [], []
    steps: dict[str, list[float]] = {}
    digest = hashlib.sha256()
    written: list[dict[str, Any]] = []
    cases: list[tuple[float, str, int, float, dict[str, float], float]] = []
    gc.callbacks.append(on_gc)
    try:
        for round_ in range(rounds):
            for case in queries:
                before = len(gc_ms)
                process_before = time.process_time()
                result, wall, cpu = timed(lambda c=case: retrieve(retriever, c), worker)
                process_cpus.append((time.process_time() - process_before) * 1000)
                walls.append(wall)
                cpus.append(cpu)
                gcs.append(sum(gc_ms[before:]))
                for step, ms in result.timings_ms.items():
                    steps.setdefault(step, []).append(ms)
                variants = len(result.plan.variants) if result.plan else 0
                cases.append((cpu, case["case_id"], variants, wall, result.timings_ms, gcs[-1]))
                if round_ == 0:
                    digest.update(case["case_id"].encode())
                    digest.update(dumps_pack(result.pack).encode())
                    written.append({"case_id": case["case_id"], "pack": result.pack})
    finally:
        gc.callbacks.remove(on_gc)
    if packs is not None:
        packs.write_text("".join(json.dumps(p, sort_keys=True) + "\n" for p in written), "utf-8")
    return {
        "wall_ms": summary(walls),
        "cpu_ms": summary(cpus),
        "process_cpu_ms": summary(process_cpus),
        "gc_ms": summary(gcs),
        "gc_frozen_objects": frozen,
        "steps_mean_ms": {k: round(float(np.mean(v)), 2) for k, v in sorted(steps.items())},
        "steps_p95_ms": {
            k: round(float(np.percentile(v, 95)), 2) for k, v in sorted(steps.items())
        },
        "packs_sha256": digest.hexdigest(),
        "cpu_ms_by_variants": {
            n: summary([c[0] for c in cases if c[2] == n]) for n in sorted({c[2] for c in cases})
        },
        "slowest": [
            {
                "case_id": c[1],
                "variants": c[2],
                "cpu_ms": round(c[0], 1),
                "wall_ms": round(c[3], 1),
                "gc_ms": round(c[5], 2),
                "timings_ms": c[4],
            }
            for c in sorted(cases, key=lambda c: -c[0])[:5]
        ],
    }


def steps_alone(
    retriever: Any, snapshot: Any, queries: list[dict[str, Any]], worker: ThreadPoolExecutor
) -> dict[str, Any]:
    """Each in-memory step alone on the retrievals' own plans: wall and thread CPU ms."""
    from kb_retrieval.retrieval import candidates as legs
    from kb_retrieval.retrieval.retriever import _all_terms
    from kb_retrieval.text.analyzer import analyze

    cfg = retriever.config
    plans = [retrieve(retriever, case).plan for case in queries]
    plans = [p for p in plans if p is not None and p.quality_ok]
    wall: dict[str, list[float]] = {s: [] for s in STEPS}
    cpu: dict[str, list[float]] = {s: [] for s in STEPS}

    def step(name: str, fn: Callable[..., Any], *fargs: Any) -> Any:
        value, w, c = timed(lambda: fn(*fargs), worker)
        wall[name].append(w)
        cpu[name].append(c)
        return value

    variants = []
    for plan in plans:
        texts = [v.text for v in plan.variants]
        vectors = step("embed", retriever.embedder.embed_query, texts)
        terms = [analyze(t) for t in texts]
        versions, mask = step("scope", partial(snapshot.scope, audit=False), AS_OF)
        vhits = step("vector", snapshot.vector_leg, mask, vectors, cfg.k_vector)
        lhits = step(
            "lexical", snapshot.lexical_leg, mask, terms, cfg.k_lexical, cfg.bm25_k1, cfg.bm25_b
        )
        order, _seen, _top = step("merge", legs.merge_quota, plan, vhits, lhits, cfg)
        found = step("rows", snapshot.candidates, order, versions)
        step("sims", snapshot.candidate_sims, list(found), vectors)
        step("idf", snapshot.term_idf, mask, _all_terms(terms))
        variants.append(len(texts))
    return {
        "plans": len(plans),
        "variants": int(sum(variants)),
        "cpu_ms": {s: summary(v) for s, v in cpu.items()},
        "wall_ms": {s: summary(v) for s, v in wall.items()},
    }


def recall(
    retriever: Any, snapshot: Any, queries: list[dict[str, Any]], worker: ThreadPoolExecutor
) -> dict[str, Any]:
    """The vector leg's top-k chunk sets per variant against the exact scan of every window."""
    exact_snapshot = snapshot.with_first_stage(None)
    k = retriever.config.k_vector
    _versions, mask = snapshot.scope(AS_OF, audit=False)
    values, gaps = [], []
    for case in queries:
        plan = retrieve(retriever, case).plan
        if plan is None or not plan.quality_ok:
            continue
        vectors = retriever.embedder.embed_query([v.text for v in plan.variants])
        fast = worker.submit(snapshot.vector_leg, mask, vectors, k).result()
        exact = worker.submit(exact_snapshot.vector_leg, mask, vectors, k).result()
        for variant in range(1, len(vectors) + 1):
            got = {pk: s for v, pk, s in fast if v == variant}
            want = {pk: s for v, pk, s in exact if v == variant}
            if want:
                values.append(len(set(got) & set(want)) / len(want))
            gaps += [abs(got[pk] - want[pk]) for pk in set(got) & set(want)]
    return {
        "variants": len(values),
        "mean": round(float(np.mean(values)), 4) if values else None,
        "min": round(float(np.min(values)), 4) if values else None,
        "max_cosine_diff": float(max(gaps, default=0.0)),
    }


def reload_one_version(
    retriever: Any, snapshot: Any, queries: list[dict[str, Any]], worker: ThreadPoolExecutor
) -> dict[str, Any]:
    """Reload as if one version had just been published (its rows read, the others reused
    from the loaded snapshot) against the fresh load of the same generation: wall and thread
    CPU ms, the top functions of the reload, and whether both give the same legs' hits, rows,
    cosines and idf on every plan (what the packs are made of)."""
    from kb_retrieval.retrieval.retriever import _all_terms
    from kb_retrieval.retrieval.snapshot_store import load_snapshot
    from kb_retrieval.text.analyzer import analyze

    victim = snapshot.version_ids[len(snapshot.version_ids) // 2]
    previous = copy.copy(snapshot)
    previous.builds = {v: b for v, b in snapshot.builds.items() if v != victim}
    profiler = cProfile.Profile()

    def reload() -> Any:
        with retriever.db.tenant(MEASURED) as conn:
            profiler.enable()
            try:
                return load_snapshot(conn, snapshot.key, snapshot.generation, 10**9, previous)
            finally:
                profiler.disable()

    reloaded, wall, cpu = timed(reload, worker)
    assert reloaded is not None and reloaded.fetched_versions == (victim,)
    cfg = retriever.config
    same = 0
    plans = [retrieve(retriever, case).plan for case in queries]
    plans = [p for p in plans if p is not None and p.quality_ok]
    for plan in plans:
        texts = [v.text for v in plan.variants]
        vectors = retriever.embedder.embed_query(texts)
        terms = [analyze(t) for t in texts]
        outputs = []
        for snap in (snapshot, reloaded):
            _versions, mask = snap.scope(AS_OF, audit=False)
            vhits = worker.submit(snap.vector_leg, mask, vectors, cfg.k_vector).result()
            lhits = snap.lexical_leg(mask, terms, cfg.k_lexical, cfg.bm25_k1, cfg.bm25_b)
            pks = sorted({pk for _, pk, _ in vhits + lhits})
            rows = [snap.row(pk) for pk in pks]
            sims = snap.candidate_sims(pks, vectors)
            idf = snap.term_idf(mask, _all_terms(terms))
            outputs.append((vhits, lhits, rows, sims, idf))
        same += outputs[0] == outputs[1]
    text = io.StringIO()
    pstats.Stats(profiler, stream=text).sort_stats("cumulative").print_stats(15)
    return {
        "wall_ms": round(wall, 1),
        "cpu_ms": round(cpu, 1),
        "plans_identical": f"{same}/{len(plans)}",
        "profile": text.getvalue().splitlines(),
    }


def profile(
    retriever: Any, queries: list[dict[str, Any]], worker: ThreadPoolExecutor, top: int = 30
) -> list[str]:
    """cProfile of one pass of `retrieve` over the queries: the top functions by own time and
    the library's functions by cumulative time."""
    profiler = cProfile.Profile()

    def run() -> None:
        profiler.enable()
        for case in queries:
            retrieve(retriever, case)
        profiler.disable()

    worker.submit(run).result()
    text = io.StringIO()
    stats = pstats.Stats(profiler, stream=text)
    stats.sort_stats("tottime").print_stats(top)
    stats.sort_stats("cumulative").print_stats("kb_retrieval", 40 * top // 30)
    return text.getvalue().splitlines()


def render(result: dict[str, Any]) -> str:
    lines = header(result)
    if "retrieve" not in result:
        return "\n".join(lines)
    r = result["retrieve"]
    lines.append(f"snapshot: {result['snapshot']}; first retrieve {result['first_retrieve']}")
    lines.append(
        table(
            ["retrieve", "p50", "p95", "p99", "mean", "max"],
            [
                [name, *(r[name][q] for q in ("p50", "p95", "p99", "mean", "max"))]
                for name in ("wall_ms", "cpu_ms", "process_cpu_ms", "gc_ms")
            ],
        )
    )
    lines.append(f"timings_ms mean: {r['steps_mean_ms']}")
    lines.append(f"timings_ms p95: {r['steps_p95_ms']}")
    lines.append(f"packs sha256 (first round): {r['packs_sha256']}")
    lines.append(f"objects frozen after warm-up: {r.get('gc_frozen_objects', 0)}")
    lines.append(f"cpu ms by number of variants: {r['cpu_ms_by_variants']}")
    lines += [f"slow: {case}" for case in r["slowest"]]
    s = result["steps"]
    lines.append(f"steps alone ({s['plans']} plans, {s['variants']} variants):")
    lines.append(
        table(
            ["step", "cpu p50", "cpu p95", "cpu mean", "wall p50", "wall p95"],
            [
                [
                    name,
                    s["cpu_ms"][name]["p50"],
                    s["cpu_ms"][name]["p95"],
                    s["cpu_ms"][name]["mean"],
                    s["wall_ms"][name]["p50"],
                    s["wall_ms"][name]["p95"],
                ]
                for name in STEPS
            ],
        )
    )
    lines.append(f"vector recall vs exact: {result['recall']}")
    if "reload" in result:
        reload = {k: v for k, v in result["reload"].items() if k != "profile"}
        lines.append(f"reload after one changed version: {reload}")
        lines += result["reload"]["profile"]
    lines += result.get("profile", [])
    for case_id, profiled in result.get("profile_slowest", {}).items():
        lines += [f"profile of {case_id} (one call):", *profiled]
    return "\n".join(lines)
