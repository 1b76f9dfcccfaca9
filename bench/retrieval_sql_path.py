"""The PostgreSQL path's steps alone at a large tenant: versions, vector leg (index vs exact),
lexical leg and term statistics, on a built retrieval KB_HOME (the 1M row):

    .venv/bin/python -m bench.retrieval_sql_path --kb-home /work/tmp/kbhome-growth --queries 10 \\
        --tenant-index --probes 5 10 20

For the measured tenant's golden e-mails (plans, variants and query vectors as `retrieve` builds
them): the exact scan (the recall reference), the vector leg as retrieval runs it (exact below
`exact_scan_max_vectors`, else an index scan: the tenant's IVFFlat index when it has one,
`--tenant-index` creates it, else the global HNSW index) at each `--probes`, and which index
each statement scanned; the lexical leg and `term_idf`. Each step is timed in its own
transaction with custom plans, as `_search_database` runs it. `--tenant` measures the same
e-mails on another tenant (a small one: the exact scan is used there).

Session 8: the lexical steps with the postings table and with the chunk statements (the
baseline, same run), and `path`: the whole PostgreSQL path per e-mail as retrieval runs it,
with postings and with the chunk statements in turn (`--steps path`, `--no-baseline`).
Session 9: eligibility is joined server-side (no version ids loaded: the `versions` step only
builds the Scope) and the lexical statement returns df (no `term_idf` step); `--hits FILE`
writes each e-mail's hits of both legs, the terms' idf and the merged candidates of the `path`
step, to compare the candidates of two commits (docs/benchmarks.md, session 9).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from bench.common import base_parser, bench_home, load, log, summary
from bench.retrieval_measure import HUGE, golden_queries, plans_for, scope_for
from bench.retrieval_recall import recall_stats
from bench.retrieval_scale import HNSW_INDEX, MEASURED, open_demo_knowledge_base

SCANS = "SELECT coalesce(pg_stat_get_xact_numscans(to_regclass(%s)), 0)"


def _timed(step: Any, *args: Any) -> tuple[Any, float]:
    """step(*args) and its milliseconds."""
    started = time.perf_counter()
    out = step(*args)
    return out, (time.perf_counter() - started) * 1000


def _hits(rows: Sequence[tuple[int, int, float]]) -> dict[int, list[tuple[int, float]]]:
    out: dict[int, list[tuple[int, float]]] = {}
    for vidx, pk, score in rows:
        out.setdefault(int(vidx), []).append((int(pk), float(score)))
    return out


def vector_runs(
    db: Any, kb: Any, tenant: str, vectors: list[Any], probes: Sequence[int]
) -> dict[str, Any]:
    """The exact scan, then the vector leg at each IVFFlat `probes`, recall against the exact."""
    from kb_retrieval.retrieval import candidates as legs
    from kb_retrieval.retrieval import sql
    from kb_retrieval.retrieval.config import RetrievalConfig
    from kb_retrieval.retrieval.vector_index import index_name

    tenant_index = index_name(tenant)
    runs: dict[str, Any] = {}
    exact: list[Any] = []
    for label, config, setting in [
        ("exact", RetrievalConfig(exact_scan_max_vectors=HUGE), None),
        *((f"probes_{p}", RetrievalConfig(), p) for p in probes),
    ]:
        hits, times, used = [], [], {"tenant_ivfflat": 0, "hnsw": 0}
        for query_vectors in vectors:
            with db.tenant(tenant) as conn:
                conn.execute(sql.FORCE_CUSTOM_PLANS)
                scope = scope_for(conn, kb, legs, tenant)
                before = [
                    conn.execute(SCANS, (i,)).fetchone()[0] for i in (tenant_index, HNSW_INDEX)
                ]
                if setting is not None:
                    original = sql.IVFFLAT_PROBES
                    sql.IVFFLAT_PROBES = setting
                try:
                    rows, ms = _timed(legs.vector_leg, conn, scope, query_vectors, config)
                finally:
                    if setting is not None:
                        sql.IVFFLAT_PROBES = original
                after = [
                    conn.execute(SCANS, (i,)).fetchone()[0] for i in (tenant_index, HNSW_INDEX)
                ]
            used["tenant_ivfflat"] += after[0] > before[0]
            used["hnsw"] += after[1] > before[1]
            hits.append(_hits(rows))
            times.append(ms)
        if label == "exact":
            exact = hits
        row: dict[str, Any] = {"ms": summary(times), "queries_on_index": used}
        if label != "exact":
            row |= recall_stats(hits, exact, [True] * len(hits))
        runs[label] = row
        log(f"{tenant} vector {label}: {row}")
    return runs


def lexical_runs(db: Any, kb: Any, tenant: str, plans: list[Any]) -> dict[str, Any]:
    """Eligible versions, the lexical leg and term_idf per query, each timed alone."""
    from kb_retrieval.retrieval import candidates as legs
    from kb_retrieval.retrieval import sql
    from kb_retrieval.retrieval.config import RetrievalConfig
    from kb_retrieval.text.analyzer import analyze

    config = RetrievalConfig()
    versions_ms, lexical_ms, idf_ms, terms = [], [], [], []
    for plan in plans:
        variant_terms = [analyze(v.text) for v in plan.variants]
        every = sorted({t for words in variant_terms for t in words})
        terms.append(len(every))
        with db.tenant(tenant) as conn:
            conn.execute(sql.FORCE_CUSTOM_PLANS)
            scope, ms = _timed(scope_for, conn, kb, legs, tenant)
            versions_ms.append(ms)
            _, ms = _timed(legs.lexical_leg, conn, scope, variant_terms, config)
            lexical_ms.append(ms)
            _, ms = _timed(legs.term_idf, conn, scope, every)
            idf_ms.append(ms)
    out = {
        "versions_ms": summary(versions_ms),
        "lexical_ms": summary(lexical_ms),
        "term_idf_ms": summary(idf_ms),
        "terms_per_query": summary(terms, 1),
    }
    log(f"{tenant} lexical: {out}")
    return out


@contextmanager
def chunk_statements(on: bool) -> Iterator[None]:
    """While `on`, the lexical statements read the chunks (the path before postings)."""
    from kb_retrieval.retrieval import lexical_sql

    original = lexical_sql.postings_scope
    if on:
        lexical_sql.postings_scope = lambda conn, params: None
    try:
        yield
    finally:
        lexical_sql.postings_scope = original


def path_runs(
    db: Any, kb: Any, tenant: str, plans: list[Any], vectors: list[Any], baseline: bool
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The whole PostgreSQL path per e-mail as `Retriever._search_database` runs it (scope,
    both legs with the terms' idf, merge, candidate rows), in one transaction, each step timed;
    with the postings, and with the chunk statements (`baseline`) on the same e-mails, in turn."""
    from kb_retrieval.retrieval import candidates as legs
    from kb_retrieval.retrieval import sql
    from kb_retrieval.retrieval.config import RetrievalConfig
    from kb_retrieval.text.analyzer import analyze

    config = RetrievalConfig()
    modes = ["postings", "chunks"] if baseline else ["postings"]
    times: dict[str, dict[str, list[float]]] = {m: {} for m in modes}
    tops: dict[str, list[Any]] = {m: [] for m in modes}
    seen: list[dict[str, Any]] = []
    for plan, query_vectors in zip(plans, vectors, strict=True):
        variant_terms = [analyze(v.text) for v in plan.variants]
        for mode in modes:
            step: dict[str, float] = {}
            started = time.perf_counter()
            with chunk_statements(mode == "chunks"), db.tenant(tenant) as conn:
                conn.execute(sql.FORCE_CUSTOM_PLANS)
                scope, step["versions"] = _timed(scope_for, conn, kb, legs, tenant)
                (vector_hits, lexical_hits, (idf, _avgdl)), step["legs"] = _timed(
                    legs.search_legs, conn, scope, query_vectors, variant_terms, config
                )
                order, _seen, _top1 = legs.merge_quota(plan, vector_hits, lexical_hits, config)
                _, step["candidates"] = _timed(
                    legs.fetch_candidates, conn, scope, order, query_vectors
                )
            step["total"] = (time.perf_counter() - started) * 1000
            for name, ms in step.items():
                times[mode].setdefault(name, []).append(ms)
            tops[mode].append(sorted((v, pk) for v, pk, _ in lexical_hits))
            if mode == "postings":
                seen.append(_found(vector_hits, lexical_hits, idf, order))
    out: dict[str, Any] = {
        mode: {name: summary(series) for name, series in steps.items()}
        for mode, steps in times.items()
    }
    if baseline:
        out["same_lexical_hits"] = tops["postings"] == tops["chunks"]
        out["total_p50_ratio_chunks_over_postings"] = round(
            out["chunks"]["total"]["p50"] / out["postings"]["total"]["p50"], 2
        )
    log(f"{tenant} path: {out}")
    return out, seen


def _found(
    vector_hits: Sequence[Any], lexical_hits: Sequence[Any], idf: dict[str, float], order: list[int]
) -> dict[str, Any]:
    """What one e-mail's path found (scores to 1e-9): both legs' hits, idf, merged candidates."""
    return {
        "vector": sorted((int(v), int(pk), round(float(s), 9)) for v, pk, s in vector_hits),
        "lexical": sorted((int(v), int(pk), round(float(s), 9)) for v, pk, s in lexical_hits),
        "idf": {term: round(value, 9) for term, value in sorted(idf.items())},
        "candidates": [int(pk) for pk in order],
    }


def main(argv: Sequence[str] | None = None) -> None:
    parser = base_parser(__doc__.splitlines()[0])
    parser.add_argument("--kb-home", type=Path, required=True, help="a built bench.retrieval home")
    parser.add_argument("--queries", type=int, default=10, help="golden e-mails of alpine-treks")
    parser.add_argument("--tenant", default=MEASURED, help="tenant the e-mails are asked of")
    parser.add_argument("--probes", type=int, nargs="+", default=[10], help="ivfflat.probes")
    parser.add_argument(
        "--tenant-index", action="store_true", help="create the tenant's IVFFlat index if missing"
    )
    parser.add_argument(
        "--steps",
        nargs="+",
        choices=["vector", "lexical", "path"],
        default=["vector", "lexical", "path"],
        help="what to measure: vector recall, lexical steps, the whole path",
    )
    parser.add_argument("--hits", type=Path, help="write each e-mail's hits here (JSON)")
    parser.add_argument(
        "--no-baseline",
        action="store_true",
        help="the whole path with postings only (not also with the chunk statements)",
    )
    args = parser.parse_args(argv)
    started = time.perf_counter()
    result: dict[str, Any] = {"tenant": args.tenant, "load_before": load()}
    with bench_home("retrieval", path=args.kb_home) as home:
        db, embedder, kb, _setup = open_demo_knowledge_base(home, reuse=True)
        if args.tenant_index:
            from kb_retrieval.retrieval.vector_index import create_tenant_vector_index

            with db.admin() as conn:
                conn.execute("SET LOCAL maintenance_work_mem = '1GB'")
                info, ms = _timed(create_tenant_vector_index, conn, args.tenant)
            result["tenant_index"] = {**info.__dict__, "ms": round(ms, 1)}
            log(f"tenant index: {result['tenant_index']}")
        plans = [p for p in plans_for(db, golden_queries(args.queries)) if p.quality_ok]
        vectors = [embedder.embed_query([v.text for v in p.variants]) for p in plans]
        result["queries"] = len(plans)
        if "vector" in args.steps:
            result["vector"] = vector_runs(db, kb, args.tenant, vectors, args.probes)
        if "lexical" in args.steps:
            for mode in ("postings", "chunks"):
                with chunk_statements(mode == "chunks"):
                    result[f"lexical_{mode}"] = lexical_runs(db, kb, args.tenant, plans)
        if "path" in args.steps:
            result["path"], found = path_runs(
                db, kb, args.tenant, plans, vectors, baseline=not args.no_baseline
            )
            if args.hits:
                args.hits.write_text(json.dumps(found, indent=1, sort_keys=True))
        db.close()
    result["load_after"] = load()
    result["wall_s"] = round(time.perf_counter() - started, 1)
    print(json.dumps(result, indent=2, sort_keys=True))


if __name__ == "__main__":
    main()
