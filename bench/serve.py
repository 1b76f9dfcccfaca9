"""`kb serve` latency and throughput at 1, 4 and 16 concurrent clients beside in-process retrieve.

Both demo tenants are ingested with the real pipeline and model; the measured tenant
(`alpine-treks`) is then grown with synthetic copies of its own documents to --tenant-chunks
chunks (bench/retrieval_scale.py: perturbed real window vectors, same text and terms). Then,
in the same run, on the same database and queries (the alpine-treks e-mails of the golden set,
the retriever's result cache off: KB_RETRIEVAL_CACHE_TTL_SECONDS=0, audit rows written as the
service writes them):

- `kb serve` is started as a subprocess (its own model and snapshot, --workers threads) and
  is ready when /readyz answers 200; asks are POST /v1/tenants/alpine-treks/ask with a token;
- 1 client: each e-mail is asked in-process (`Retriever.retrieve` in this process) and then
  over HTTP, in turn, so that both see the same load of a shared machine; the packs are
  compared byte for byte (`identical_packs`);
- 4 and 16 clients: client threads (one httpx.Client each, keep-alive) share --requests asks
  after one warm-up ask each. Every answer must be 200 (failures are counted).

Reported: p50/p95/p99/mean per level, throughput (requests/s over the level's wall time), and
the service overhead = service p50 at 1 client / in-process p50 (targets: <= 1.2 at 1 client,
p95 <= 150 ms at 4 clients).

    .venv/bin/python -m bench.serve [--quick] [--json] [--tenant-chunks 10000] [--requests 160]
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from bench.common import (
    REPO,
    base_parser,
    bench_home,
    finish,
    header,
    log,
    machine,
    percentile,
    ratio,
    table,
)
from bench.retrieval_build import load_triggers_off
from bench.retrieval_measure import AS_OF, golden_queries
from bench.retrieval_scale import (
    HNSW_INDEX,
    MEASURED,
    grow,
    open_demo_knowledge_base,
    prepare_corpus,
    rebuild_hnsw,
    tenant_counts,
)

LEVELS = (1, 4, 16)


def stats(samples: Sequence[float]) -> dict[str, Any]:
    """n, p50, p95, p99 and mean in milliseconds."""
    if not samples:
        return {"n": 0}
    return {
        "n": len(samples),
        "p50": round(percentile(samples, 50), 2),
        "p95": round(percentile(samples, 95), 2),
        "p99": round(percentile(samples, 99), 2),
        "mean": round(sum(samples) / len(samples), 2),
    }


def paired(
    db: Any, pipeline: Any, base: str, token: str, queries: list[dict[str, Any]], n: int
) -> dict[str, Any]:
    """One client, each e-mail asked in-process then over HTTP, so that both see the same load
    of a shared machine; in-process is `Retriever.retrieve` (cache off, audit on) called from
    one worker thread, as the service calls it: torch's intra-op threads behave very
    differently from the main thread on a loaded machine (docs/benchmarks.md)."""
    import httpx

    from kb_retrieval.retrieval.config import RetrievalConfig
    from kb_retrieval.retrieval.pack import dumps_pack
    from kb_retrieval.retrieval.retriever import Retriever

    config = RetrievalConfig(cache_ttl_seconds=0)
    retriever = Retriever(db, pipeline.embedder, pipeline.versions, config)
    url = f"{base}/v1/tenants/{MEASURED}/ask"
    local: list[float] = []
    served: list[float] = []
    steps: dict[str, float] = {}
    same = 0
    worker = ThreadPoolExecutor(1)

    def retrieve(email: Any) -> Any:
        return worker.submit(retriever.retrieve, MEASURED, email, as_of=AS_OF).result()

    with worker, httpx.Client(headers={"Authorization": f"Bearer {token}"}, timeout=120) as http:
        for case in queries[:2]:
            retrieve(case["email"])
            http.post(url, json={"email": case["email"], "as_of": str(AS_OF)})
        for i in range(n):
            email = queries[i % len(queries)]["email"]
            t0 = time.perf_counter()
            result = retrieve(email)
            local.append((time.perf_counter() - t0) * 1000)
            for step, ms in result.timings_ms.items():
                steps[step] = steps.get(step, 0.0) + ms / n
            t0 = time.perf_counter()
            response = http.post(url, json={"email": email, "as_of": str(AS_OF)})
            served.append((time.perf_counter() - t0) * 1000)
            response.raise_for_status()
            same += response.text == dumps_pack(result.pack)
    return {
        "in_process": {
            "latency_ms": stats(local),
            "throughput_rps": round(n / (sum(local) / 1000), 2),
            "steps_mean_ms": {k: round(v, 2) for k, v in sorted(steps.items())},
        },
        "service": {
            "clients": 1,
            "latency_ms": stats(served),
            "throughput_rps": round(n / (sum(served) / 1000), 2),
            "failures": 0,
            "first_failure": None,
        },
        "identical_packs": same,
    }


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_service(url: str, port: int, workers: int) -> tuple[subprocess.Popen[bytes], float]:
    """`kb serve` as a subprocess on the bench database; returns it once /readyz is 200."""
    import httpx

    env = {
        **os.environ,
        "KB_DATABASE_URL": url,
        "KB_RETRIEVAL_CACHE_TTL_SECONDS": "0",
        "PYTHONPATH": str(REPO),
    }
    command = [sys.executable, "-c", "from kb_pipeline.cli import app; app()", "serve",
               "--port", str(port), "--workers", str(workers)]  # fmt: skip
    started = time.perf_counter()
    process = subprocess.Popen(command, env=env, cwd=REPO, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"kb serve exited with {process.returncode}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=2).status_code == 200:
                return process, round(time.perf_counter() - started, 2)
        except httpx.TransportError:
            pass
        time.sleep(0.5)
    process.terminate()
    raise RuntimeError("kb serve was not ready within 600 s")


def load_level(
    base: str, token: str, queries: list[dict[str, Any]], clients: int, n: int
) -> dict[str, Any]:
    """`n` asks spread over `clients` threads (after one warm-up ask per client)."""
    import httpx

    from kb_retrieval.retrieval.pack import validate_pack

    url = f"{base}/v1/tenants/{MEASURED}/ask"
    samples: list[float] = []
    failures: list[str] = []
    lock = threading.Lock()
    barrier = threading.Barrier(clients + 1)

    def client(index: int) -> None:
        with httpx.Client(headers={"Authorization": f"Bearer {token}"}, timeout=120) as http:
            http.post(
                url, json={"email": queries[index % len(queries)]["email"], "as_of": str(AS_OF)}
            )
            barrier.wait()
            for i in range(index, n, clients):
                body = {"email": queries[i % len(queries)]["email"], "as_of": str(AS_OF)}
                t0 = time.perf_counter()
                response = http.post(url, json=body)
                elapsed = (time.perf_counter() - t0) * 1000
                with lock:
                    if response.status_code != 200:
                        failures.append(f"{response.status_code} {response.text[:200]}")
                        continue
                    samples.append(elapsed)
                if i < clients:
                    validate_pack(response.json())

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    for thread in threads:
        thread.start()
    barrier.wait()
    started = time.perf_counter()
    for thread in threads:
        thread.join()
    wall = time.perf_counter() - started
    return {
        "clients": clients,
        "latency_ms": stats(samples),
        "throughput_rps": round(len(samples) / wall, 2),
        "failures": len(failures),
        "first_failure": failures[0] if failures else None,
    }


def run(args: Any, home: Any) -> dict[str, Any]:
    from kb_retrieval.serving.tokens import TokenStore

    db, _, pipeline, setup = open_demo_knowledge_base(home)
    conn = db.connect()
    corpus = prepare_corpus(conn, args.seed)
    targets = {filler.tenant_id: 0 for filler in corpus.fillers} | {MEASURED: args.tenant_chunks}
    started = time.perf_counter()
    conn.execute(f"DROP INDEX IF EXISTS {HNSW_INDEX}")
    with conn.transaction(), load_triggers_off(conn, [MEASURED]):
        grow(conn, corpus.fillers, targets, corpus.pool, corpus.rng, args, pipeline.versions)
    rebuild_hnsw(conn, corpus.hnsw_definition, "512MB")
    setup["grow_s"] = round(time.perf_counter() - started, 2)
    counts = tenant_counts(conn, MEASURED)
    conn.close()
    log(f"tenant {MEASURED}: {counts}")
    queries = golden_queries(args.queries)
    token = TokenStore(db).create(MEASURED, "bench").secret
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    process, ready_s = start_service(home.url, port, args.workers)
    setup["service_ready_s"] = ready_s
    try:
        log(f"1 client, in-process and service in turn x{args.requests}")
        pair = paired(db, pipeline, base, token, queries, args.requests)
        levels = [pair["service"]]
        for clients in LEVELS[1:]:
            log(f"service, {clients} clients x{args.requests}")
            levels.append(load_level(base, token, queries, clients, args.requests))
    finally:
        process.terminate()
        process.wait(timeout=60)
    baseline = pair["in_process"]
    db.close()
    one = levels[0]["latency_ms"]
    return {
        "setup": setup,
        "tenant": counts,
        "in_process": baseline,
        "service": levels,
        "identical_packs": pair["identical_packs"],
        "overhead_p50_1_client": ratio(one["p50"], baseline["latency_ms"]["p50"]),
        "overhead_mean_1_client": ratio(one["mean"], baseline["latency_ms"]["mean"]),
    }


def render(result: dict[str, Any]) -> str:
    base = result["in_process"]
    rows = [["in-process retrieve", 1, *_cells(base["latency_ms"]), base["throughput_rps"], "-"]]
    for level in result["service"]:
        rows.append(
            ["kb serve (HTTP)", level["clients"], *_cells(level["latency_ms"]),
             level["throughput_rps"], level["failures"]]
        )  # fmt: skip
    lines = header(result, f"tenant {result['tenant']['tenant_chunks']:,} chunks")
    lines += [
        "",
        table(
            ["path", "clients", "p50 ms", "p95 ms", "p99 ms", "mean ms", "req/s", "failures"], rows
        ),
        "",
        f"service overhead at 1 client: p50 x{result['overhead_p50_1_client']}, "
        f"mean x{result['overhead_mean_1_client']}; identical packs "
        f"{result['identical_packs']}/{base['latency_ms']['n']}; in-process steps (mean ms): "
        f"{base['steps_mean_ms']}",
    ]
    return "\n".join(lines)


def _cells(latency: dict[str, Any]) -> list[Any]:
    return [latency.get(k) for k in ("p50", "p95", "p99", "mean")]


def main(argv: Sequence[str] | None = None) -> None:
    parser = base_parser(__doc__.splitlines()[0])
    parser.add_argument("--tenant-chunks", type=int, help="chunks of the measured tenant")
    parser.add_argument("--requests", type=int, help="timed asks per level (and in-process)")
    parser.add_argument("--queries", type=int, default=40, help="golden e-mails of alpine-treks")
    parser.add_argument("--workers", type=int, default=2, help="kb serve --workers")
    parser.add_argument("--mix", type=float, default=0.5)
    parser.add_argument("--noise", type=float, default=0.02)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    args.tenant_chunks = args.tenant_chunks or (2000 if args.quick else 10000)
    args.requests = args.requests or (40 if args.quick else 160)
    info = machine()
    log(f"load {info['loadavg_start']}; tenant chunks {args.tenant_chunks:,}")
    started = time.perf_counter()
    with bench_home("serve", keep=args.keep) as home:
        result = run(args, home)
    finish(
        result,
        "serve",
        args,
        ("tenant_chunks", "requests", "queries", "workers", "mix", "noise", "seed", "quick"),
        info,
        started,
        render,
    )


if __name__ == "__main__":
    main()
