"""The in-memory vector leg alone, for one tenant of up to 100k chunks, without the 1M-row table.

Both demo tenants are ingested with the real pipeline and model; their window vectors are the
templates. A tenant of N chunks is synthesised in memory with the retrieval benchmark's recipe
(bench/retrieval.py): chunk i copies the windows of real chunk i mod n, each window
`normalize(x + b * y + noise * g)` (b ~ U(0, mix) per chunk, y a random real window, g ~ N(0, I)),
and loaded into a `TenantSnapshot` (rows are minimal: the vector leg reads none). Queries: the
plans' variants of the first --queries golden e-mails of alpine-treks, embedded with
`embed_query` as retrieval does. Per size and per first stage (projection dims x windows kept;
'-' = exact float32 scan): vector-leg time (ms, p50 / p95 / p99) and recall@24 of chunk ids
against the exact top 24 (every window, computed here), and the snapshot's heap
bytes under tracemalloc beside the float32 bytes of its vectors (the in-run baseline).

    .venv/bin/python -m bench.vector_scan [--json] [--sizes 10000,100000] [--quick]
"""

from __future__ import annotations

import time
import tracemalloc
from collections.abc import Sequence
from typing import Any

import numpy as np

from bench.common import base_parser, bench_home, finish, log, machine, summary

STAGES = ((None, None), (32, 2048), (64, 1024), (64, 2048), (64, 4096), (96, 2048), (128, 2048))
K = 24


def template_windows(db: Any) -> list[list[np.ndarray]]:
    """Window vectors of every indexed demo chunk, per chunk in chunk order."""
    with db.admin() as conn:
        rows = conn.execute(
            "SELECT v.chunk_pk, v.embedding FROM chunk_vectors v ORDER BY v.chunk_pk, "
            "v.window_index"
        ).fetchall()
    chunks: dict[int, list[np.ndarray]] = {}
    for pk, vec in rows:
        raw = vec.to_numpy() if hasattr(vec, "to_numpy") else vec
        chunks.setdefault(int(pk), []).append(np.asarray(raw, dtype=np.float32))
    return [chunks[pk] for pk in sorted(chunks)]


def synthetic_snapshot(templates: list[list[np.ndarray]], chunks: int, args: Any) -> Any:
    """A TenantSnapshot of `chunks` synthetic chunks (four versions, all eligible)."""
    from kb_retrieval.models import Category
    from kb_retrieval.retrieval.candidates import VersionInfo
    from kb_retrieval.retrieval.snapshot import SnapshotKey, TenantSnapshot, VersionFacts

    rng = np.random.default_rng(args.seed)
    pool = np.stack([w for ws in templates for w in ws])
    versions = {}
    for v in range(4):
        info = VersionInfo(f"s{v}", f"d{v}", "T", Category.FAQ, 0, None, None, None, False)
        versions[f"s{v}"] = VersionFacts(info, ())
    rows, windows = [], []
    for i in range(chunks):
        pk = i + 1
        rows.append((pk, f"s{i % 4}", f"s_{pk}", 0, None, None, None, "-", 1, "", "Low", 1, "{}"))
        source = np.stack(templates[i % len(templates)])
        mixed = source + rng.uniform(0, args.mix) * pool[rng.integers(len(pool))]
        mixed = mixed + args.noise * rng.standard_normal(source.shape).astype(np.float32)
        mixed /= np.linalg.norm(mixed, axis=1, keepdims=True)
        windows.extend((pk, w, mixed[w]) for w in range(len(mixed)))
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        snapshot = TenantSnapshot(
            SnapshotKey("scan", "p", "c", "m"), 1, versions, rows, windows, []
        )
        heap = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    snapshot.bench_heap_bytes = heap
    return snapshot


def exact_top(snapshot: Any, mask: np.ndarray, vectors: np.ndarray) -> list[set[int]]:
    """The exact top-K chunk ids per variant (float32 products over every window, as the SQL
    exact scan)."""
    import torch

    queries = np.asarray(vectors, dtype=np.float32)
    queries = queries / np.linalg.norm(queries, axis=1, keepdims=True)
    with torch.inference_mode():
        sims = (torch.from_numpy(snapshot.vectors) @ torch.from_numpy(queries).T).numpy()
    best = np.maximum.reduceat(sims, snapshot.window_starts, axis=0)
    full = np.full((len(snapshot.chunk_pk), len(queries)), -np.inf)
    full[snapshot.window_rows] = best
    full[~mask] = -np.inf
    return [set(snapshot.chunk_pk[np.argsort(-full[:, c], kind="stable")[:K]].tolist())
            for c in range(len(queries))]  # fmt: skip


def measure(snapshot: Any, query_vectors: list[np.ndarray]) -> list[dict[str, Any]]:
    """Time and recall of each first stage on every query."""
    mask = np.ones(len(snapshot.chunk_pk), dtype=bool)
    truth = [exact_top(snapshot, mask, v) for v in query_vectors]
    out = []
    for dims, shortlist in STAGES:
        variant = snapshot.with_first_stage(dims)
        variant.vector_leg(mask, query_vectors[0], K, shortlist=shortlist)
        times, recalls = [], []
        for vectors, expected in zip(query_vectors, truth, strict=True):
            started = time.perf_counter()
            hits = variant.vector_leg(mask, vectors, K, shortlist=shortlist)
            times.append((time.perf_counter() - started) * 1000)
            for column, wanted in enumerate(expected, start=1):
                found = {pk for v, pk, _ in hits if v == column}
                recalls.append(len(found & wanted) / len(wanted))
        out.append({
            "dims": dims, "shortlist": shortlist, "ms": summary(times, 3),
            "recall_mean": round(float(np.mean(recalls)), 4),
            "recall_min": round(float(np.min(recalls)), 4),
            "pairs_below_0_98": sum(r < 0.98 for r in recalls), "pairs": len(recalls),
            "scan_bytes": int(variant.scan.nbytes),
        })  # fmt: skip
        log(f"  dims {dims} shortlist {shortlist}: {out[-1]['ms']} recall {out[-1]['recall_mean']}")
    return out


def run(args: Any, home: Any) -> dict[str, Any]:
    from bench.common import open_database_and_model
    from bench.retrieval_measure import golden_queries, plans_for
    from bench.retrieval_scale import ingest_demo
    from kb_retrieval.ingestion.pipeline import IngestionPipeline

    db, embedder, setup = open_database_and_model(home)
    ingest_demo(db, IngestionPipeline(db, embedder))
    templates = template_windows(db)
    plans = [p for p in plans_for(db, golden_queries(args.queries)) if p.quality_ok]
    query_vectors = [embedder.embed_query([v.text for v in p.variants]) for p in plans]
    db.close()
    sizes = []
    for chunks in args.sizes:
        log(f"{chunks:,} chunks: building the snapshot")
        started = time.perf_counter()
        snapshot = synthetic_snapshot(templates, chunks, args)
        build_s = time.perf_counter() - started
        float32_bytes = snapshot.vector_count * snapshot.vectors.shape[1] * 4
        sizes.append({
            "chunks": chunks, "windows": snapshot.vector_count, "build_s": round(build_s, 2),
            "heap_bytes": snapshot.bench_heap_bytes, "float32_vector_bytes": float32_bytes,
            "heap_mib_per_10k_chunks": round(snapshot.bench_heap_bytes / 2**20 * 1e4 / chunks, 2),
            "heap_over_float32_vectors": round(snapshot.bench_heap_bytes / float32_bytes, 3),
            "file_bytes": snapshot.file_nbytes, "stages": measure(snapshot, query_vectors),
        })  # fmt: skip
        del snapshot
    return {"setup": setup, "queries": len(query_vectors), "sizes": sizes}


def render(result: dict[str, Any]) -> str:
    from bench.common import header, pair, table

    lines = header(result, f"{result['queries']} queries; vector leg alone, in memory")
    lines += ["", table(
        ["chunks", "windows", "heap MiB", "heap MiB per 10k chunks", "heap / float32 vectors",
         "file MiB", "build s"],
        [[s["chunks"], s["windows"], round(s["heap_bytes"] / 2**20, 1),
          s["heap_mib_per_10k_chunks"], s["heap_over_float32_vectors"],
          round(s["file_bytes"] / 2**20, 1), s["build_s"]] for s in result["sizes"]],
    ), "", table(
        ["chunks", "dims", "shortlist", "ms p50 / p95", "p99", "recall mean", "recall min",
         "pairs < 0.98", "scan MiB"],
        [[s["chunks"], st["dims"] or "-", st["shortlist"] or "-", pair(st["ms"]),
          st["ms"].get("p99"), st["recall_mean"], st["recall_min"],
          f"{st['pairs_below_0_98']}/{st['pairs']}", round(st["scan_bytes"] / 2**20, 1)]
         for s in result["sizes"] for st in s["stages"]],
    )]  # fmt: skip
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = base_parser(__doc__.splitlines()[0])
    parser.add_argument("--sizes", help="chunks of the synthetic tenant, comma separated")
    parser.add_argument("--queries", type=int, help="golden e-mails of alpine-treks to use")
    parser.add_argument("--mix", type=float, default=0.5)
    parser.add_argument("--noise", type=float, default=0.02)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    args.sizes = [
        int(x) for x in (args.sizes or ("2000" if args.quick else "10000,100000")).split(",")
    ]
    args.queries = args.queries or (8 if args.quick else 40)
    info = machine()
    started = time.perf_counter()
    with bench_home("vector_scan", keep=args.keep) as home:
        result = run(args, home)
    finish(
        result,
        "vector_scan",
        args,
        ("sizes", "queries", "mix", "noise", "seed"),
        info,
        started,
        render,
    )


if __name__ == "__main__":
    main()
