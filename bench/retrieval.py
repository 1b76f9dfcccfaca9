"""Retrieval latency and vector recall at 1k, 10k and 100k chunks, one tenant measured among ten.

Both demo tenants are ingested with the real pipeline and model. Then synthetic rows are added
directly with SQL and binary COPY until the table holds each target size: ten tenants of equal
size, the measured tenant (`alpine-treks`, keeping its real chunks) holding 10% of the rows.
A synthetic document is a copy of a real demo document (same text, title, dates, category and
lexical terms; new doc_version_id/doc_id); each window vector of its chunks is perturbed:

    v = normalize(x + b * y + noise * g)

x the real window vector, y a random real window vector of the demo corpus (one per chunk),
b ~ U(0, mix) per chunk, g ~ N(0, I) per window. `--mix 0` gives plain noisy replicas.
The measured tenant is filled with copies of its own documents, the nine others with copies of
both tenants' documents. The HNSW index is dropped before each load and rebuilt after it
(build time reported, maintenance_work_mem set for that session). The inserts move the
tenants' index generation (triggers of migration 0005), so retrieval reloads its snapshot.

At each size:
- the in-memory snapshot of the measured tenant: `load_snapshot` on a fresh connection
  (--snapshot-repeats times), once more split into its SQL reads and the Python/numpy build;
  its nbytes, window vectors, chunks, versions and terms;
- each step of retrieval alone on the first --leg-queries e-mails: in memory (eligible versions
  + chunk mask, vector leg, the same with one BLAS thread, lexical leg, term_idf) and in
  PostgreSQL (fetch_candidates of the in-memory legs' candidates; the SQL legs load_versions,
  vector exact, vector HNSW, lexical, term_idf), each SQL step on a fresh connection with a
  statement_timeout (--timeout-s) and plan_cache_mode = force_custom_plan as in retrieval;
  term_idf gets all variants' terms;
- Retriever.retrieve latency (TTL cache off) for the alpine-treks e-mails of the golden set:
  `default` (in-memory snapshot, audit off), `audit on`, `database exact`
  (in_memory_max_vectors=0, exact_scan_max_vectors huge) and `database HNSW`
  (in_memory_max_vectors=0, exact_scan_max_vectors=0). The snapshot store is cleared before
  each series and two warm-up calls load (or decline) the snapshot before the timed calls; a
  series stops at its time budget (--budget-s) or first timeout, and the database series are
  skipped when the SQL lexical leg alone times out;
- the vector leg alone for every searched query: in memory vs the SQL exact scan (recall@k_vector
  of chunk sets per variant, expected 1.0), and HNSW vs exact scan on the queries whose statement
  really scanned the HNSW index, for an ef_search/overfetch sweep (why HNSW is not the default).
Query embedding with torch's default thread count and with one thread is measured once.

    .venv/bin/python -m bench.retrieval [--quick] [--json] [--sizes 1000,10000,100000]
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bench.common import base_parser, bench_home, finish, log, machine
from bench.common import load as machine_load
from bench.retrieval_build import (
    BUILD_FILE,
    check_recipe,
    read_build,
    write_build,
    write_measured,
)
from bench.retrieval_latency import latency_series
from bench.retrieval_measure import (
    embedding_threads,
    golden_queries,
    leg_queries,
    memory_steps,
    plans_for,
    snapshot_load,
    sql_steps,
    thread_pools,
)
from bench.retrieval_recall import QUICK_SWEEP, SWEEP, explain_nodes, vector_leg_runs
from bench.retrieval_render import render
from bench.retrieval_scale import (
    MEASURED,
    open_demo_knowledge_base,
    prepare_corpus,
    scale_to,
    tenant_counts,
)

__all__ = ["main", "render", "run"]


def measure_size(
    url: str, kb: Any, queries: list[dict[str, Any]], counts: dict[str, int], args: Any,
    vector_cache: dict[tuple[str, ...], np.ndarray],
) -> dict[str, Any]:  # fmt: skip
    """Every measurement at the current size: snapshot, steps alone, latency, vector recall."""
    from kb_retrieval.db import Database
    from kb_retrieval.retrieval.config import RetrievalConfig

    defaults = RetrievalConfig()
    if counts["tenant_vectors"] <= defaults.in_memory_max_vectors:
        default_path = "memory"
    elif counts["tenant_vectors"] <= defaults.exact_scan_max_vectors:
        default_path = "database exact"
    else:
        default_path = "database HNSW"
    db = Database(url)
    plans = plans_for(db, queries)
    db.close()
    searched = [p for p in plans if p.quality_ok]
    for plan in searched:
        key = tuple(v.text for v in plan.variants)
        if key not in vector_cache:
            vector_cache[key] = kb.embedder.embed_query(list(key))
    vectors = [vector_cache[tuple(v.text for v in p.variants)] for p in searched]
    snapshot_out, snapshot = snapshot_load(url, kb, args.snapshot_repeats)
    log(f"  snapshot: load {snapshot_out['load_ms']}, {snapshot_out['nbytes'] / 2**20:.1f} MiB")
    leg_inputs = leg_queries(snapshot, searched, vectors)
    steps = {
        "memory": memory_steps(snapshot, leg_inputs, args),
        "sql": sql_steps(url, kb, snapshot, leg_inputs, args),
    }
    for where, group in steps.items():
        log(f"  {where} steps: { {k: (v.get('p50'), v['timed_out']) for k, v in group.items()} }")
    runs = latency_series(url, kb, queries, steps["sql"]["lexical"]["timed_out"], args)
    recall = vector_leg_runs(url, kb, snapshot, vectors, args.sweep)
    return {
        **counts,
        "default_path": default_path,
        "in_memory_max_vectors": defaults.in_memory_max_vectors,
        "exact_scan_max_vectors": defaults.exact_scan_max_vectors,
        "queries_searched": len(searched),
        "snapshot": snapshot_out,
        "steps_ms": steps,
        "latency": runs,
        "vector_leg": recall,
        "explain": explain_nodes(url, kb, vectors[0]),
    }


def run(args: Any, home: Any) -> dict[str, Any]:
    """Demo ingestion and query embedding once, then scale-up and measurements per size; with
    --reuse, the rows already in KB_HOME are kept and only what is missing is built."""
    build = read_build(home.path)
    recipe = {"mix": args.mix, "noise": args.noise, "seed": args.seed}
    check_recipe(build, recipe, home.path)
    db, embedder, pipeline, setup = open_demo_knowledge_base(
        home, reuse=args.reuse and bool(build["sizes"])
    )
    queries = golden_queries(args.queries)
    query_embedding = {} if args.build_only else embedding_threads(embedder, plans_for(db, queries))
    setup["thread_pools"] = thread_pools()
    conn = db.connect()
    corpus = prepare_corpus(conn, args.seed)
    vector_cache: dict[tuple[str, ...], np.ndarray] = {}
    sizes = []
    for size in args.sizes:
        log(f"size {size:,}: loading synthetic rows")
        load = scale_to(conn, corpus, size, args, pipeline.versions)
        counts = tenant_counts(conn, MEASURED)
        if counts["tenant_chunks"] > size // 10:
            raise SystemExit(f"{home.path}: the measured tenant holds {counts['tenant_chunks']:,}"
                             f" chunks, more than a tenth of {size:,}; use a fresh --kb-home")  # fmt: skip
        earlier = build["sizes"].get(str(size), {})
        if load.get("reused"):
            load = earlier | load
        else:
            # Rows loaded now, or only the HNSW index built on rows an earlier run loaded.
            rows_now = "insert_rows_s" in load
            phase = {"counts": counts, ("loadavg" if rows_now else "hnsw_loadavg"): machine_load()}
            load = ({} if rows_now else earlier) | load | phase
            build["recipe"] = recipe
            build["sizes"][str(size)] = load
            write_build(home.path, build)
        log(f"size {size:,}: {counts}; load {load}")
        if args.build_only:
            sizes.append({**counts, "target": size, "load": load})
            continue
        log(f"size {size:,}: measuring")
        result = measure_size(home.url, pipeline, queries, counts, args, vector_cache)
        result["target"] = size
        result["load"] = load
        sizes.append(result)
        if args.kb_home:
            write_measured(home.path, size, result)
    conn.close()
    db.close()
    return {
        "setup": setup,
        "query_embedding_ms": query_embedding,
        "queries": len(queries),
        "kb_home": str(home.path) if args.kb_home else None,
        "sizes": sizes,
    }


def main(argv: Sequence[str] | None = None) -> None:
    parser = base_parser(__doc__.splitlines()[0])
    parser.add_argument("--sizes", help="total chunk counts, comma separated")
    parser.add_argument("--queries", type=int, help="golden e-mails of alpine-treks to use")
    parser.add_argument("--leg-queries", type=int, help="queries for the per-step breakdown")
    parser.add_argument("--snapshot-repeats", type=int, help="load_snapshot calls per size")
    parser.add_argument("--mix", type=float, default=0.5, help="upper bound of b (see above)")
    parser.add_argument("--noise", type=float, default=0.02, help="std of g per dimension")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--timeout-s", type=float, default=10.0, help="statement_timeout")
    parser.add_argument("--budget-s", type=float, help="time budget of one latency run")
    parser.add_argument(
        "--maintenance-work-mem",
        default="auto",
        help="for the HNSW build; auto = enough for the whole graph in memory",
    )
    parser.add_argument("--index-work-mem", default="1GB", help="for the other index builds")
    parser.add_argument(
        "--parallel-workers",
        type=int,
        default=1,
        help="max_parallel_maintenance_workers of the HNSW build",
    )
    parser.add_argument(
        "--kb-home",
        type=Path,
        help="build (or reuse) the database in this "
        "folder and keep it, instead of a temporary one under bench/out/",
    )
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="with --kb-home: keep the rows "
        "already there, build only what is missing, then measure",
    )
    parser.add_argument(
        "--build-only", action="store_true", help="build the sizes, measure nothing"
    )
    parser.add_argument(
        "--no-hnsw",
        action="store_true",
        help="do not build the HNSW index (the HNSW sweep is skipped; a later --reuse run "
        "without this flag builds it)",
    )
    args = parser.parse_args(argv)
    if args.reuse and not args.kb_home:
        parser.error("--reuse needs --kb-home")
    if args.kb_home and not args.reuse and (args.kb_home / BUILD_FILE).exists():
        parser.error(f"{args.kb_home} holds a built database: add --reuse, or pick a new folder")
    sizes = args.sizes or ("1000,2000" if args.quick else "1000,10000,100000")
    args.sizes = [int(x) for x in sizes.split(",")]
    args.queries = args.queries or (8 if args.quick else 40)
    args.leg_queries = args.leg_queries or (4 if args.quick else 10)
    args.snapshot_repeats = args.snapshot_repeats or (2 if args.quick else 3)
    args.budget_s = args.budget_s or (6.0 if args.quick else 20.0)
    args.sweep = () if args.no_hnsw else QUICK_SWEEP if args.quick else SWEEP
    info = machine()
    log(f"load {info['loadavg_start']}; sizes {args.sizes}")
    started = time.perf_counter()
    with bench_home("retrieval", keep=args.keep, path=args.kb_home) as home:
        result = run(args, home)
    finish(
        result,
        "retrieval",
        args,
        (
            "sizes",
            "queries",
            "leg_queries",
            "snapshot_repeats",
            "mix",
            "noise",
            "seed",
            "timeout_s",
            "budget_s",
            "maintenance_work_mem",
            "index_work_mem",
            "parallel_workers",
            "reuse",
            "build_only",
            "no_hnsw",
            "sweep",
            "quick",
        ),
        info,
        started,
        render,
    )


if __name__ == "__main__":
    main()
