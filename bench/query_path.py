"""The query path of one large tenant, step by step: a persistent database, CPU time per step.

Built once, reused: `--home` (default bench/out/query-path-home) keeps its embedded PostgreSQL
between runs. The first run ingests the demo tenants with the real model and grows the measured
tenant (`alpine-treks`) to `--tenant-chunks` chunks with synthetic copies of its own documents
(bench/retrieval_scale.py, as `bench.serve --tenant-chunks` does, without the HNSW rebuild: the
snapshot path does not read the index); later runs only start the server and load the snapshot.

Measured in one process, on one worker thread (as the service calls `retrieve`), after the
snapshot is loaded and two warm-up calls:

- `retrieve`: wall ms (p50/p95/p99/max) and thread CPU ms (`time.thread_time`, robust to other
  processes' load on a shared machine) of `Retriever.retrieve` over the golden e-mails of the
  tenant, with the environment's `RetrievalConfig` (`KB_RETRIEVAL_<FIELD>`, so a flag can be
  measured on and off; until session 18 the bench ignored it), cache off, audit off; the library's own `timings_ms` per step (mean); process CPU ms
  (`time.process_time` around the call: every thread of the process, so the encoder's and
  torch's pool threads count too, since session 9);
- `steps`: each step of the in-memory search alone on the same plans and query vectors, thread
  CPU ms and wall ms: query embedding (every variant, in length groups), scope (cached), vector leg,
  lexical leg, candidate rows, candidate cosines, term idf (off the snapshot `retrieve` path since
  session 6: the lexical leg returns it);
- `recall`: the vector leg's top-k chunk sets per variant against the exact scan over every
  window (`with_first_stage(None)`), with the largest cosine difference of common chunks;
- `reload`: one changed version (a new `indexed_at` for one build), reload from the previous
  snapshot against a fresh load of the same generation, and whether their packs are identical.

    .venv/bin/python -m bench.query_path --json [--tenant-chunks 100000] [--queries 40] [--no-reload]
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.common import OUT, base_parser, finish, log, machine, stop_server
from bench.retrieval_build import load_triggers_off
from bench.retrieval_measure import golden_queries
from bench.retrieval_scale import (
    HNSW_INDEX,
    MEASURED,
    grow,
    ingest_demo,
    prepare_corpus,
    tenant_counts,
)

DEFAULT_HOME = OUT / "query-path-home"


def open_home(path: Path, tenant_chunks: int, args: Any) -> tuple[Any, Any, Any, dict[str, Any]]:
    """The persistent database (built on first use), the real model and pipeline versions."""
    import os

    from kb_retrieval.db import Database
    from kb_retrieval.db.server import start_embedded_server
    from kb_retrieval.ingestion.pipeline import IngestionPipeline
    from kb_retrieval.service import make_embedder

    path.mkdir(parents=True, exist_ok=True)
    os.environ["KB_HOME"] = str(path)
    os.environ.pop("KB_DATABASE_URL", None)
    setup: dict[str, Any] = {}
    started = time.perf_counter()
    db = Database(start_embedded_server(path))
    db.migrate()
    embedder = make_embedder("minilm")
    embedder.embed(["warm-up"])
    pipeline = IngestionPipeline(db, embedder)
    setup["open_s"] = round(time.perf_counter() - started, 2)
    with db.connect() as conn:
        counts = tenant_counts(conn, MEASURED)
    if counts["tenant_chunks"] < tenant_chunks:
        started = time.perf_counter()
        log(f"building the {tenant_chunks}-chunk tenant under {path} (once)")
        ingest_demo(db, pipeline)
        conn = db.connect()
        corpus = prepare_corpus(conn, args.seed)
        targets = {f.tenant_id: 0 for f in corpus.fillers} | {MEASURED: tenant_chunks}
        conn.execute(f"DROP INDEX IF EXISTS {HNSW_INDEX}")
        with conn.transaction(), load_triggers_off(conn, [MEASURED]):
            grow(conn, corpus.fillers, targets, corpus.pool, corpus.rng, args, pipeline.versions)
        conn.execute("ANALYZE")
        counts = tenant_counts(conn, MEASURED)
        conn.close()
        setup["build_s"] = round(time.perf_counter() - started, 2)
    setup["tenant"] = counts
    return db, embedder, pipeline, setup


def main(argv: Sequence[str] | None = None) -> None:
    parser = base_parser(__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, default=DEFAULT_HOME)
    parser.add_argument("--tenant-chunks", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=3, help="passes over the queries")
    parser.add_argument("--build-only", action="store_true", help="build the tenant, no runs")
    parser.add_argument("--profile", action="store_true", help="cProfile one pass of retrieve")
    parser.add_argument(
        "--no-reload", action="store_true", help="skip the reload measurement (minutes under load)"
    )
    parser.add_argument(
        "--profile-slowest",
        type=int,
        default=0,
        help="cProfile the N slowest e-mails, one call each",
    )
    parser.add_argument(
        "--no-gc-freeze", action="store_true", help="skip gc.freeze() after the warm-up calls"
    )
    parser.add_argument("--packs", type=Path, help="write the first round's packs here (JSONL)")
    parser.add_argument("--mix", type=float, default=0.5)
    parser.add_argument("--noise", type=float, default=0.02)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    info = machine()
    result: dict[str, Any] = {}
    db, _embedder, pipeline, setup = open_home(args.home, args.tenant_chunks, args)
    result["setup"] = setup
    log(f"tenant {setup['tenant']}")
    try:
        if not args.build_only:
            from bench.query_path_measure import measure

            result |= measure(db, pipeline, golden_queries(args.queries), args)
    finally:
        db.close()
        stop_server(args.home)
    keys = ("tenant_chunks", "queries", "rounds", "mix", "noise", "seed")
    finish(result, "query_path", args, keys, info, started, render)


def render(result: dict[str, Any]) -> str:
    from bench.query_path_measure import render as render_measure

    return render_measure(result)


if __name__ == "__main__":
    main()
