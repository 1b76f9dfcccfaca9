"""Markdown rendering of the retrieval benchmark's result (printed without --json)."""

from __future__ import annotations

from typing import Any

from bench.common import header, pair, table
from bench.retrieval_latency import BASELINE
from bench.retrieval_scale import MEASURED

GOAL_P95_MS = 50.0  # issue 11: one tenant of 100k chunks, embedding included


def render(result: dict[str, Any]) -> str:
    """The readable summary: setup, snapshot, steps alone, latency series and recall tables."""
    c, sizes = result["config"], result["sizes"]
    lines = header(
        result,
        f"{result['queries']} queries of {MEASURED}; mix {c['mix']}, noise {c['noise']}; "
        f"statement timeout {c['timeout_s']} s; budget {c['budget_s']} s per series",
    )
    embedding = ", ".join(
        f"{k.replace('_', ' ')}: {pair(v)} ms (n {v['n']})"
        for k, v in result["query_embedding_ms"].items()
        if isinstance(v, dict)
    )
    distance = result["query_embedding_ms"].get("onnx_max_cosine_distance")
    if distance is not None:
        embedding += f"; ONNX vs torch, largest cosine distance {distance:.1e}"
    lines += [
        f"query embedding (torch, p50 / p95): {embedding}",
        "",
        table(
            ["size", "chunks", "vectors", "tenant chunks", "tenant vectors", "tenant versions",
             "default path", "insert s", "copy s", "HNSW build s", "HNSW MB"],
            [[s["target"], s["total_chunks"], s["total_vectors"], s["tenant_chunks"],
              s["tenant_vectors"], s["tenant_versions"], s["default_path"],
              s["load"].get("insert_rows_s"), s["load"].get("copy_vectors_s"),
              s["load"].get("hnsw_build_s"), s["load"].get("hnsw_index_mb")] for s in sizes],
        ),
        "",
        "Snapshot of the measured tenant (`load_snapshot`, fresh connection; ms p50 / p95, n; "
        "phases of one more load):",
        "",
        table(
            ["size", "vectors", "chunks", "versions", "terms", "MiB", "load ms", "n",
             "SQL chunks ms", "SQL vectors ms", "SQL other ms", "build ms",
             "reload, one version changed ms"],
            [_snapshot_row(s) for s in sizes],
        ),
        "",
        "Snapshot memory (one more load under tracemalloc; heap = bytes still allocated with the "
        "snapshot alive; file = the memory-mapped spill file of exact vectors and rows):",
        "",
        table(
            ["size", "chunks", "heap MiB", "heap MiB per 10k chunks", "load peak MiB",
             "file MiB", "file MiB per 10k chunks", "float32 vectors MiB",
             "heap / float32 vectors"],
            [_memory_row(s) for s in sizes if "memory" in s["snapshot"]],
        ),
        "",
    ]  # fmt: skip
    for where, title in (("memory", "In-memory steps alone"), ("sql", "PostgreSQL steps alone")):
        names = list(sizes[0]["steps_ms"][where]) if sizes else []
        rows = [[s["target"], *(_leg_cell(s["steps_ms"][where][n]) for n in names)] for s in sizes]
        lines += [
            f"{title} (ms, p50 / p95 (n); 'timeout' = statement timeout hit):",
            "",
            table(["size", *names], rows),
            "",
        ]
    lines += ["`Retriever.retrieve` (ms, p50 / p95):", "", _latency_table(sizes), ""]
    lines += _goal_lines(sizes)
    lines += [
        "",
        "Vector leg alone, in memory vs SQL exact scan (recall@k of chunk ids per variant):",
        "",
        table(
            ["size", "queries", "variants", "recall mean", "recall min", "pairs < 1",
             "same order", "max cosine diff", "memory ms", "exact ms", "exact prepared ms"],
            [[s["target"], v["memory"]["queries"], v["memory"]["pairs"],
              v["memory"]["recall_mean"], v["memory"]["recall_min"], v["memory"]["pairs_below_1"],
              f"{v['memory']['same_order_pairs']}/{v['memory']['all_pairs']}",
              f"{v['memory']['max_cosine_diff']:.1e}", pair(v["memory"]["ms"]),
              pair(v["exact_ms"]), pair(v["exact_prepared_ms"])]
             for s in sizes for v in [s["vector_leg"]]],
        ),
        "",
        "In-memory vector leg by first stage (projection dims, '-' = exact float32 scan; "
        "windows kept for exact re-scoring) vs SQL exact scan:",
        "",
        table(
            ["size", "dims", "shortlist", "recall mean", "recall min", "pairs < 0.98",
             "scan MiB", "ms"],
            [[s["target"], f["dims"] or "-", f["shortlist"] or "-", f["recall_mean"],
              f["recall_min"], f"{f['pairs_below_0_98']}/{f['pairs']}",
              round(f["scan_bytes"] / 2**20, 2), pair(f["ms"])]
             for s in sizes for f in s["vector_leg"].get("first_stages", [])],
        ),
        "",
        "Vector leg alone, HNSW vs SQL exact scan (recall over the calls that scanned HNSW):",
        "",
    ]  # fmt: skip
    rows = []
    for s in sizes:
        leg = s["vector_leg"]
        for h in [*leg["hnsw"], leg["default_connection"]]:
            rows.append([s["target"], h["ef_search"], h["overfetch"],
                         "custom" if h["custom_plans"] else "prepared",
                         f"{h['queries_on_hnsw']}/{h['queries']}", h["recall_mean"],
                         h["recall_min"], f"{h['pairs_below_0_98']}/{h['pairs']}",
                         h["short_results"], h["kth_gap_mean"], pair(h["ms"]),
                         pair(leg["exact_ms"])])  # fmt: skip
    lines.append(
        table(
            ["size", "ef_search", "overfetch", "plans", "on HNSW", "recall mean", "recall min",
             "pairs < 0.98", "short", "k-th gap", "HNSW ms", "exact ms"],
            rows,
        )
    )  # fmt: skip
    for s in sizes:
        lines.append(f"plan nodes at {s['target']:,}: {s['explain']}")
    return "\n".join(lines)


def _snapshot_row(s: dict[str, Any]) -> list[Any]:

    snap, phases = s["snapshot"], s["snapshot"]["phases"]
    other = sum(v for k, v in phases.items() if k.startswith("sql_")) - (
        phases["sql_chunks_ms"] + phases["sql_vectors_ms"]
    )
    return [s["target"], snap["vector_count"], snap["chunk_count"], snap["version_count"],
            snap["term_count"], round(snap["nbytes"] / 2**20, 2), pair(snap["load_ms"]),
            snap["load_ms"]["n"], phases["sql_chunks_ms"], phases["sql_vectors_ms"],
            round(other, 2), phases["build_ms"],
            pair(snap["reload_one_version_ms"]) if "reload_one_version_ms" in snap else "-"]  # fmt: skip


def _memory_row(s: dict[str, Any]) -> list[Any]:
    m, mib = s["snapshot"]["memory"], 2**20
    return [s["target"], s["snapshot"]["chunk_count"], round(m["heap_bytes"] / mib, 2),
            m["heap_mib_per_10k_chunks"], round(m["peak_bytes"] / mib, 1),
            round(m["file_bytes"] / mib, 2), m["file_mib_per_10k_chunks"],
            round(m["float32_vector_bytes"] / mib, 2), m["heap_over_float32_vectors"]]  # fmt: skip


def _latency_table(sizes: list[dict[str, Any]]) -> str:

    keys = ("total", "embed", "database", "ranking", "plan", "other", "after_total", "gc")
    rows = []
    for s in sizes:
        for name, run in s["latency"].items():
            if "skipped" in run:
                rows.append([s["target"], name, "-", "-", *(["-"] * len(keys)), "-", "-", "-",
                             "-", "-", run["skipped"]])  # fmt: skip
                continue
            t, r = run["timings_ms"], run["total_over_default"]
            rows.append(
                [s["target"], name, run["completed"], t.get("total", {}).get("p99", "-"),
                 *(pair(t.get(k, {})) for k in keys),
                 f"{_num(r['p50'])} / {_num(r['p95'])}", run["path"], run["snapshot_loads"],
                 " / ".join(f"{x:,.0f}" for x in run["warmup_ms"]), run["hnsw_index_scans"],
                 f"{run['packs_with_real_evidence']}/{run['completed']}"
                 + (" timeout" if run["timed_out"] else "")]
            )  # fmt: skip
    headers = ["size", "series", "n", "total p99", *(k.replace("_", " ") for k in keys),
               "total x default",
               "path", "loads (timed)", "warm-up ms", "HNSW scans", "real evidence"]  # fmt: skip
    return table(headers, rows)


def _goal_lines(sizes: list[dict[str, Any]]) -> list[str]:
    out = []
    for s in sizes:
        run = s["latency"].get(BASELINE, {})
        total = run.get("timings_ms", {}).get("total", {})
        if total.get("n"):
            out.append(
                f"goal at {s['target']:,} chunks: `{BASELINE}` total p95 {total['p95']:,.1f} ms "
                f"(embed p95 {run['timings_ms']['embed']['p95']:,.1f} ms) vs {GOAL_P95_MS:.0f} ms"
            )
    return out


def _num(value: float | None) -> str:
    """A ratio with two decimals, or "-" when there is none."""
    return "-" if value is None else f"{value:.2f}"


def _leg_cell(leg: dict[str, Any]) -> str:
    """ "p50 / p95 (n)" of one step alone, marking a statement timeout."""

    if not leg.get("n"):
        return "timeout" if leg["timed_out"] else "-"
    text = f"{pair(leg)} ({leg['n']})"
    return text + (" then timeout" if leg["timed_out"] else "")
