"""What stored sentence vectors (migration 0008) cost: ingestion, index size, retrieval time.

In one run, on a private server with the real MiniLM model: each replica of the demo corpus
(data/tenants/*) is ingested twice under two tenant ids, once without sentence vectors and once
with them (`IngestionPipeline(sentence_vectors=...)`, alternating, so load drifts hit both);
then the index bytes of `chunk_sentence_vectors` per 10k chunks beside `chunk_vectors`; then
every golden email (data/golden) retrieved against the replicas with `sentence_features` off
and on, for the in-memory snapshot path and the PostgreSQL path, interleaved per email.

    .venv/bin/python -m bench.sentence_cost [--quick] [--json] [--replicas N] [--rounds N]
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import date
from typing import Any

SIZE_SQL = """
SELECT pg_total_relation_size('chunk_sentence_vectors'), pg_total_relation_size('chunk_vectors'),
       (SELECT count(*) FROM chunk_sentence_vectors),
       (SELECT count(DISTINCT chunk_pk) FROM chunk_sentence_vectors),
       (SELECT count(*) FROM chunk_vectors v JOIN chunks c ON c.id = v.chunk_pk
        WHERE c.tenant_id LIKE 'sv-%%')
"""


def ingest(db: Any, embedder: Any, folders: list[Any], sentences: bool) -> dict[str, Any]:
    from bench.ingest import TimedEmbedder, ingest_replica
    from kb_retrieval.ingestion.pipeline import IngestionPipeline

    timed = TimedEmbedder(embedder)
    pipeline = IngestionPipeline(db, timed, sentence_vectors=sentences)
    started = time.perf_counter()
    row = ingest_replica(pipeline, folders, per_version=False)
    seconds = time.perf_counter() - started
    return {
        "seconds": seconds,
        "model_s": timed.embed_s,
        "texts": timed.texts,
        "chunks": row["chunks"],
        "indexed": row["indexed"],
        "tenants": [tenant for tenant, _ in row["registered"]],
        "versions": pipeline.versions,
    }


def retrieval_times(
    db: Any, embedder: Any, versions: Any, tenants: dict[str, str], rounds: int
) -> dict[str, Any]:
    """ms per retrieval per (path, flag), every golden email against its replica tenant."""
    from bench.common import GOLDEN, summary
    from kb_eval.golden import load_golden
    from kb_eval.golden_eval import _email_payload
    from kb_retrieval.retrieval.config import RetrievalConfig
    from kb_retrieval.retrieval.retriever import Retriever

    as_of = date(2026, 11, 15)
    cases = [c for c in load_golden(GOLDEN) if c.tenant_id in tenants]
    base = RetrievalConfig(cache_ttl_seconds=0.0)
    configs = {
        (path, flag): base.model_copy(
            update={
                "sentence_features": flag,
                "in_memory_max_vectors": base.in_memory_max_vectors if path == "snapshot" else 0,
            }
        )
        for path in ("snapshot", "database")
        for flag in (False, True)
    }
    retrievers = {k: Retriever(db, embedder, versions, c, audit=False) for k, c in configs.items()}
    first_load: dict[str, float] = {}
    for tenant in sorted(set(tenants.values())):
        started = time.perf_counter()
        retrievers[("snapshot", True)].retrieve(tenant, "warm up the snapshot", as_of=as_of)
        first_load[tenant] = round((time.perf_counter() - started) * 1000, 1)
        for key, retriever in retrievers.items():
            if key != ("snapshot", True):
                retriever.retrieve(tenant, "warm up the snapshot", as_of=as_of)
    times: dict[tuple[str, bool], list[float]] = {k: [] for k in configs}
    for _ in range(rounds):
        for case in cases:
            for key, retriever in retrievers.items():
                started = time.perf_counter()
                retriever.retrieve(tenants[case.tenant_id], _email_payload(case), as_of=as_of)
                times[key].append((time.perf_counter() - started) * 1000)
    out: dict[str, Any] = {"first_call_with_sentence_load_ms": first_load}
    for path in ("snapshot", "database"):
        off, on = summary(times[(path, False)]), summary(times[(path, True)])
        out[path] = {"off": off, "on": on, "added_ms_p50": round(on["p50"] - off["p50"], 2)}
    out["fallback_embedded_chunks"] = sum(r.sentences.embedded_chunks for r in retrievers.values())
    return out


def run(args: Any, home: Any) -> dict[str, Any]:
    from bench.common import DEMO_TENANTS, log, open_database_and_model, ratio
    from bench.ingest import replica_folders

    db, embedder, setup = open_database_and_model(home)
    corpus = home.path / "corpus"
    runs: dict[bool, list[dict[str, Any]]] = {False: [], True: []}
    for index in range(args.replicas):
        for sentences in (False, True):
            tag = f"sv-{'on' if sentences else 'off'}{index:02d}"
            folders = replica_folders(DEMO_TENANTS, corpus, tag)
            runs[sentences].append(ingest(db, embedder, folders, sentences))
            log(f"{tag}: {runs[sentences][-1]['seconds']:.1f} s")
    ingestion = {}
    for sentences, rows in runs.items():
        seconds = sum(r["seconds"] for r in rows)
        chunks = sum(r["chunks"] for r in rows)
        ingestion["with" if sentences else "without"] = {
            "seconds": round(seconds, 2),
            "model_s": round(sum(r["model_s"] for r in rows), 2),
            "texts_embedded": sum(r["texts"] for r in rows),
            "chunks": chunks,
            "chunks_per_s": ratio(chunks, seconds, 2),
        }
    ingestion["time_with_over_without"] = ratio(
        ingestion["with"]["seconds"], ingestion["without"]["seconds"]
    )
    with db.admin() as conn:
        sentence_bytes, window_bytes, rows, chunks, windows = conn.execute(SIZE_SQL).fetchone()
    # chunk_vectors holds both runs' windows: its bytes are counted for the "with" half only.
    window_share = window_bytes / 2
    size = {
        "sentence_rows": rows,
        "chunks_with_sentences": chunks,
        "sentences_per_chunk": ratio(rows, chunks, 2),
        "sentence_table_bytes": sentence_bytes,
        "sentence_mib_per_10k_chunks": round(sentence_bytes / chunks * 10_000 / 2**20, 1),
        "window_mib_per_10k_chunks": round(window_share / chunks * 10_000 / 2**20, 1),
        "windows": windows // 2,
    }
    tenants = {t.split("-", 2)[2]: t for t in runs[True][0]["tenants"]}
    log("retrieval: golden emails, sentence_features off/on, snapshot and database paths")
    query = retrieval_times(db, embedder, runs[True][0]["versions"], tenants, args.rounds)
    return {"setup": setup, "ingestion": ingestion, "index_size": size, "retrieval": query}


def render(result: dict[str, Any]) -> str:
    from bench.common import header, pair, table

    i, s, r = result["ingestion"], result["index_size"], result["retrieval"]
    return "\n".join(
        [
            *header(result),
            "",
            table(
                ["sentence vectors", "chunks", "seconds", "model s", "texts embedded", "chunks/s"],
                [
                    [k, v["chunks"], v["seconds"], v["model_s"], v["texts_embedded"],
                     v["chunks_per_s"]]
                    for k, v in i.items()
                    if isinstance(v, dict)
                ],
            ),
            f"ingestion time with / without: {i['time_with_over_without']}",
            f"index: {s['sentences_per_chunk']} sentences per chunk, "
            f"{s['sentence_mib_per_10k_chunks']} MiB per 10k chunks "
            f"(window vectors {s['window_mib_per_10k_chunks']} MiB)",
            "",
            table(
                ["path", "off p50 / p95 ms", "on p50 / p95 ms", "added p50 ms"],
                [
                    [p, pair(r[p]["off"]), pair(r[p]["on"]), r[p]["added_ms_p50"]]
                    for p in ("snapshot", "database")
                ],
            ),
            f"first call per tenant (loads the snapshot's sentence vectors): "
            f"{r['first_call_with_sentence_load_ms']} ms; fallback embeddings "
            f"{r['fallback_embedded_chunks']}",
        ]
    )  # fmt: skip


def main(argv: Sequence[str] | None = None) -> None:
    from bench.common import base_parser, bench_home, finish, log, machine

    parser = base_parser(__doc__.splitlines()[0])
    parser.add_argument("--replicas", type=int, help="demo corpus copies per mode (default 2)")
    parser.add_argument("--rounds", type=int, help="passes over the golden emails (default 2)")
    args = parser.parse_args(argv)
    args.replicas = args.replicas or (1 if args.quick else 2)
    args.rounds = args.rounds or (1 if args.quick else 2)
    info = machine()
    log(f"load {info['loadavg_start']}; {args.replicas} replica(s) per mode")
    started = time.perf_counter()
    with bench_home("sentence-cost", keep=args.keep) as home:
        result = run(args, home)
    finish(result, "sentence_cost", args, ("replicas", "rounds", "quick"), info, started, render)


if __name__ == "__main__":
    main()
