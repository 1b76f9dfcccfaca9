"""The PostgreSQL path's vector leg alone on a built retrieval KB_HOME: HNSW against the exact scan.

For the measured tenant's golden e-mails: the exact scan (the recall reference) and the HNSW
statement at the default settings (prepared) and at each ef_search / overfetch of the sweep
(custom plans), with latency and recall of chunk ids per (query, variant). The same functions
as `bench.retrieval`'s sweep, without the snapshot load and the latency series, for a large
build where those take long (the 1M row):

    .venv/bin/python -m bench.retrieval_hnsw_leg --kb-home /work/tmp/kbhome-growth --queries 10
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.common import base_parser, bench_home, log, summary
from bench.retrieval_measure import HUGE, golden_queries, plans_for
from bench.retrieval_recall import (
    SWEEP,
    custom_plan_database,
    explain_nodes,
    recall_stats,
    timed_vector_leg,
)
from bench.retrieval_scale import open_demo_knowledge_base


def measure(url: str, kb: Any, vectors: list[Any]) -> dict[str, Any]:
    """Exact scan, then HNSW at the defaults and at each setting of the sweep."""
    from kb_retrieval.db import Database
    from kb_retrieval.retrieval.config import RetrievalConfig

    out: dict[str, Any] = {"queries": len(vectors), "explain": explain_nodes(url, kb, vectors[0])}
    exact_config = RetrievalConfig(exact_scan_max_vectors=HUGE)
    exact, exact_ms, _ = timed_vector_leg(custom_plan_database(url), kb, vectors, exact_config)
    out["exact_ms"] = summary(exact_ms)
    log(f"exact scan: {out['exact_ms']}")
    default = RetrievalConfig()
    settings = [(default.hnsw_ef_search, default.hnsw_window_overfetch, False)]
    settings += [(ef, overfetch, True) for ef, overfetch in SWEEP]
    out["hnsw"] = []
    for ef, overfetch, custom in settings:
        config = RetrievalConfig(
            exact_scan_max_vectors=0, hnsw_ef_search=ef, hnsw_window_overfetch=overfetch
        )
        db = custom_plan_database(url) if custom else Database(url)
        hits, times, used = timed_vector_leg(db, kb, vectors, config)
        row = {"ef_search": ef, "overfetch": overfetch, "custom_plans": custom}
        row |= recall_stats(hits, exact, used) | {"ms": summary(times)}
        out["hnsw"].append(row)
        log(f"HNSW {ef}/{overfetch}: recall {row['recall_mean']}, ms {row['ms']}")
    return out


def main(argv: Sequence[str] | None = None) -> None:
    parser = base_parser(__doc__.splitlines()[0])
    parser.add_argument("--kb-home", type=Path, required=True, help="a built bench.retrieval home")
    parser.add_argument("--queries", type=int, default=10, help="golden e-mails of alpine-treks")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    with bench_home("retrieval", path=args.kb_home) as home:
        db, embedder, kb, _setup = open_demo_knowledge_base(home, reuse=True)
        plans = [p for p in plans_for(db, golden_queries(args.queries)) if p.quality_ok]
        vectors = [embedder.embed_query([v.text for v in p.variants]) for p in plans]
        db.close()
        result = measure(home.url, kb, vectors)
    result["wall_s"] = round(time.perf_counter() - started, 1)
    print(json.dumps(result, indent=2, sort_keys=True))


if __name__ == "__main__":
    main()
