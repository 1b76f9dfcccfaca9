"""Vector recall of the retrieval benchmark: in memory and HNSW against the SQL exact scan."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from bench.common import summary
from bench.retrieval_measure import AS_OF, HUGE, scope_for
from bench.retrieval_scale import HNSW_INDEX, MEASURED

SWEEP = ((40, 4), (200, 4), (200, 16), (1000, 32))
QUICK_SWEEP = ((40, 4), (200, 4), (1000, 16))
# 0 when the index is absent (a size built with --no-hnsw).
HNSW_XACT_SCANS = "SELECT coalesce(pg_stat_get_xact_numscans(to_regclass(%s)), 0)"
Hits = dict[int, list[tuple[int, float]]]  # variant index -> [(chunk pk, cosine)]


def custom_plan_database(url: str) -> Any:
    """A Database whose connections never prepare statements (every call planned with its values)."""
    from kb_retrieval.db import Database

    class CustomPlanDatabase(Database):
        def connect(self, *, vector_types: bool = True, app: bool = False) -> Any:
            conn = super().connect(vector_types=vector_types, app=app)
            conn.prepare_threshold = None
            return conn

    return CustomPlanDatabase(url)


def _per_variant(rows: Sequence[tuple[int, int, float]]) -> Hits:
    """Rows (variant index, chunk pk, cosine) of a vector leg grouped by variant."""
    out: Hits = {}
    for vidx, pk, sim in rows:
        out.setdefault(int(vidx), []).append((int(pk), float(sim)))
    return out


def timed_vector_leg(
    db: Any, kb: Any, query_vectors: list[np.ndarray], config: Any
) -> tuple[list[Hits], list[float], list[bool]]:
    """vector_leg per query: hits per variant, milliseconds, and whether the HNSW index ran."""
    from kb_retrieval.retrieval import candidates as legs

    hits, times, used = [], [], []
    for vectors in query_vectors:
        with db.tenant(MEASURED) as conn:
            scope = scope_for(conn, kb, legs)
            before = conn.execute(HNSW_XACT_SCANS, (HNSW_INDEX,)).fetchone()[0]
            started = time.perf_counter()
            rows = legs.vector_leg(conn, scope, vectors, config)
            times.append((time.perf_counter() - started) * 1000)
            used.append(conn.execute(HNSW_XACT_SCANS, (HNSW_INDEX,)).fetchone()[0] > before)
        hits.append(_per_variant(rows))
    db.close()
    return hits, times, used


# First stages of the in-memory vector leg compared against the SQL exact scan: projection
# dimensions (None: exact float32 scan) x windows kept for exact re-scoring.
FIRST_STAGES = ((None, None), (64, 1024), (64, 2048), (64, 4096), (96, 2048))


def memory_vector_leg(
    snapshot: Any, query_vectors: list[np.ndarray], shortlist: int | None = None
) -> tuple[list[Hits], list[float]]:
    """The in-memory vector leg per query (same eligible scope as retrieval, audit off)."""
    from kb_retrieval.retrieval.config import RetrievalConfig

    k = RetrievalConfig().k_vector
    mask = snapshot.chunk_mask(snapshot.eligible_versions(AS_OF, audit=False))
    snapshot.vector_leg(mask, query_vectors[0], k, shortlist=shortlist)
    hits, times = [], []
    for vectors in query_vectors:
        started = time.perf_counter()
        rows = snapshot.vector_leg(mask, vectors, k, shortlist=shortlist)
        times.append((time.perf_counter() - started) * 1000)
        hits.append(_per_variant(rows))
    return hits, times


def vector_leg_runs(
    url: str, kb: Any, snapshot: Any, query_vectors: list[np.ndarray],
    sweep: Sequence[tuple[int, int]],
) -> dict[str, Any]:  # fmt: skip
    """The vector leg alone: in memory and HNSW against the SQL exact scan.

    The exact scan and the sweep use custom plans (no prepared statements), so the planner sees
    each query's values; `exact_prepared_ms` and `default_connection` repeat the exact scan and
    the default HNSW setting on an ordinary connection (psycopg prepares after 5 calls and
    PostgreSQL may then switch to a generic plan; retrieval itself forces custom plans).
    Recall of a (query, variant) pair: |top-k ∩ exact top-k| / |exact top-k| of chunk ids;
    for HNSW over the queries whose statement really scanned the HNSW index. `kth_gap`: cosine
    of the exact k-th chunk minus that of the k-th found (0 when as good).
    """
    from kb_retrieval.db import Database
    from kb_retrieval.retrieval.config import RetrievalConfig

    exact_config = RetrievalConfig(exact_scan_max_vectors=HUGE)
    exact, exact_ms, _ = timed_vector_leg(
        custom_plan_database(url), kb, query_vectors, exact_config
    )
    _, exact_prepared_ms, _ = timed_vector_leg(Database(url), kb, query_vectors, exact_config)
    memory, memory_ms = memory_vector_leg(snapshot, query_vectors)
    out: dict[str, Any] = {
        "exact_ms": summary(exact_ms),
        "exact_prepared_ms": summary(exact_prepared_ms),
        "memory": {
            **without(recall_stats(memory, exact, [True] * len(memory)), "queries_on_hnsw"),
            **identity_stats(memory, exact),
            "ms": summary(memory_ms, 3),
        },
        "hnsw": [],
        "first_stages": [],
    }
    for dims, shortlist in FIRST_STAGES:
        variant = snapshot.with_first_stage(dims)
        hits, times = memory_vector_leg(variant, query_vectors, shortlist)
        stats = without(recall_stats(hits, exact, [True] * len(hits)), "queries_on_hnsw")
        out["first_stages"].append(
            {"dims": dims, "shortlist": shortlist, **stats, "ms": summary(times, 3),
             "scan_bytes": int(variant.scan.nbytes)}
        )  # fmt: skip
    default = RetrievalConfig()
    settings = [(ef, of, True) for ef, of in sweep]
    settings.append((default.hnsw_ef_search, default.hnsw_window_overfetch, False))
    for ef, overfetch, custom in settings:
        config = RetrievalConfig(
            exact_scan_max_vectors=0, hnsw_ef_search=ef, hnsw_window_overfetch=overfetch
        )
        db = custom_plan_database(url) if custom else Database(url)
        hits, times, used = timed_vector_leg(db, kb, query_vectors, config)
        row = {"ef_search": ef, "overfetch": overfetch, "custom_plans": custom}
        row |= recall_stats(hits, exact, used)
        row["ms"] = summary(times)
        out["hnsw" if custom else "default_connection"] = [*out["hnsw"], row] if custom else row
    reaching = [h for h in out["hnsw"] if h["pairs"] and h["recall_mean"] >= 0.98]
    out["cheapest_reaching_0_98"] = (
        min(reaching, key=lambda h: h["ms"]["p50"]) if reaching else None
    )
    return out


def without(stats: dict[str, Any], *keys: str) -> dict[str, Any]:
    """A copy of `stats` without `keys`."""
    return {k: v for k, v in stats.items() if k not in keys}


def recall_stats(hits: list[Hits], exact: list[Hits], used: list[bool]) -> dict[str, Any]:
    """Recall of chunk ids per (query, variant) against the exact scan, over the `used` queries."""
    recalls, gaps, short = [], [], 0
    for found, truth, counted in zip(hits, exact, used, strict=True):
        if not counted:
            continue
        for vidx, expected in truth.items():
            got = found.get(vidx, [])
            overlap = {pk for pk, _ in got} & {pk for pk, _ in expected}
            recalls.append(len(overlap) / len(expected))
            short += len(got) < len(expected)
            gaps.append(min(s for _, s in expected) - min((s for _, s in got), default=0.0))
    return {
        "queries_on_hnsw": sum(used),
        "queries": len(used),
        "pairs": len(recalls),
        "recall_mean": round(float(np.mean(recalls)), 4) if recalls else None,
        "recall_min": round(float(np.min(recalls)), 4) if recalls else None,
        "pairs_below_0_98": sum(r < 0.98 for r in recalls),
        "pairs_below_1": sum(r < 1 for r in recalls),
        "short_results": short,
        "kth_gap_mean": round(float(np.mean(gaps)), 4) if gaps else None,
    }


def identity_stats(hits: list[Hits], exact: list[Hits]) -> dict[str, Any]:
    """Pairs whose ranked chunk list equals the exact scan's, and the largest cosine difference."""
    same, pairs, diff = 0, 0, 0.0
    for found, truth in zip(hits, exact, strict=True):
        for vidx, expected in truth.items():
            got = found.get(vidx, [])
            pairs += 1
            same += [pk for pk, _ in got] == [pk for pk, _ in expected]
            scores = dict(got)
            diff = max([diff, *(abs(scores[pk] - s) for pk, s in expected if pk in scores)])
        pairs += len(set(found) - set(truth))
    return {"same_order_pairs": same, "all_pairs": pairs, "max_cosine_diff": float(f"{diff:.2e}")}


def explain_nodes(url: str, kb: Any, vectors: np.ndarray) -> dict[str, list[str]]:
    """Plan node types and index names of the HNSW and exact statements for one query."""
    from kb_retrieval.db import Database
    from kb_retrieval.retrieval import candidates as legs
    from kb_retrieval.retrieval import sql
    from kb_retrieval.retrieval.config import RetrievalConfig

    config = RetrievalConfig()
    db = Database(url)
    out = {}
    with db.tenant(MEASURED) as conn:
        scope = scope_for(conn, kb, legs)
        params = {**scope.params(), "vectors": list(vectors), "k": config.k_vector}
        params["k_windows"] = config.k_vector * config.hnsw_window_overfetch
        conn.execute(sql.SET_HNSW, (str(config.hnsw_ef_search),))
        for name, statement in (("hnsw", sql.VECTOR_HNSW), ("exact", sql.VECTOR_EXACT)):
            plan = conn.execute("EXPLAIN (FORMAT JSON) " + statement, params).fetchone()[0]
            out[name] = sorted(set(_plan_nodes(plan[0]["Plan"])))
    db.close()
    return out


def _plan_nodes(node: dict[str, Any]) -> list[str]:
    """Node types (with index names) of an EXPLAIN JSON plan node and its children."""
    name = node["Node Type"] + (f" on {node['Index Name']}" if "Index Name" in node else "")
    found = [name]
    for child in node.get("Plans", []):
        found += _plan_nodes(child)
    return found
