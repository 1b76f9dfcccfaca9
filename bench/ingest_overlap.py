"""Would parsing in a worker process while the model embeds shorten ingestion on this machine?

The demo documents (both tenants, `--replicas` times) are parsed and chunked in one worker
process (multiprocessing "spawn", as the parse guard's worker) and the windows of their chunks
are embedded in this process with the real MiniLM model, in batches of 64. Two schedules,
alternated `--rounds` times so that a change of the machine's load hits both:

- `serial`: all documents parsed and chunked in the worker, then all windows embedded (what a
  Dagster run does today: the parse and chunk assets before the embedding asset);
- `overlap`: the worker parses and chunks while the model embeds the same windows.

Reported per schedule: wall seconds, CPU seconds of this process and of the worker. Overlap
helps by at most the worker's time, and only when a core is idle while the model runs.

    .venv/bin/python -m bench.ingest_overlap [--json] [--replicas N] [--rounds N]
"""

from __future__ import annotations

import multiprocessing
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from bench.common import DEMO_TENANTS, base_parser, finish, log, machine, summary, table

BATCH = 64


def documents() -> list[Path]:
    """The demo tenants' source files (every file next to a kb.yaml but the manifest)."""
    return sorted(p for p in DEMO_TENANTS.glob("*/*") if p.name != "kb.yaml")


def parse_and_chunk(paths: list[str]) -> tuple[list[str], float]:
    """Worker: chunk texts of the files that parse, and the worker's CPU seconds for them."""
    from kb_retrieval.ingestion.chunking import WordPieceCounter, chunk_document
    from kb_retrieval.model_files import load_fast_tokenizer
    from kb_retrieval.parsing import parse_file
    from kb_retrieval.parsing.errors import ParseError

    started = time.process_time()
    counter = WordPieceCounter(load_fast_tokenizer())
    texts = []
    for path in paths:
        try:
            parsed = parse_file(Path(path))
        except ParseError:
            continue
        texts += [c.text for c in chunk_document(parsed, Path(path).stem, counter)]
    return texts, time.process_time() - started


def embed_all(embedder: Any, windows: list[str]) -> None:
    for start in range(0, len(windows), BATCH):
        embedder.embed(windows[start : start + BATCH])


def one_round(embedder: Any, pool: ProcessPoolExecutor, paths: list[str], windows: list[str]):
    """Wall and CPU seconds of the serial and the overlapped schedule."""
    out = {}
    for schedule in ("serial", "overlap"):
        wall, cpu = time.perf_counter(), time.process_time()
        future = pool.submit(parse_and_chunk, paths)
        if schedule == "serial":
            future.result()
        embed_all(embedder, windows)
        _texts, worker_cpu = future.result()
        out[schedule] = {
            "wall_s": time.perf_counter() - wall,
            "main_cpu_s": time.process_time() - cpu,
            "worker_cpu_s": worker_cpu,
        }
    return out


def run(args: Any) -> dict[str, Any]:
    from kb_retrieval.service import make_embedder

    embedder = make_embedder("minilm")
    embedder.embed(["warm-up"])
    paths = [str(p) for p in documents()] * args.replicas
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(1, mp_context=context) as pool:
        texts, _cpu = pool.submit(parse_and_chunk, paths).result()  # warm the worker
        windows = [w for text in texts for w in embedder.windows(text)]
        log(f"{len(paths)} files, {len(texts)} chunks, {len(windows)} windows")
        rounds = []
        for index in range(args.rounds):
            rounds.append(one_round(embedder, pool, paths, windows))
            log(f"round {index + 1}: {rounds[-1]}")
    summaries = {
        schedule: {
            key: summary([r[schedule][key] for r in rounds], 3)
            for key in ("wall_s", "main_cpu_s", "worker_cpu_s")
        }
        for schedule in ("serial", "overlap")
    }
    serial, overlap = (summaries[s]["wall_s"]["p50"] for s in ("serial", "overlap"))
    return {
        "setup": {"files": len(paths), "chunks": len(texts), "windows": len(windows)},
        "rounds": rounds,
        "summary": summaries,
        "overlap_over_serial_wall": round(overlap / serial, 3),
        "worker_share_of_serial_cpu": round(
            summaries["serial"]["worker_cpu_s"]["p50"]
            / (
                summaries["serial"]["worker_cpu_s"]["p50"]
                + summaries["serial"]["main_cpu_s"]["p50"]
            ),
            3,
        ),
    }


def render(result: dict[str, Any]) -> str:
    rows = [
        [s, *(result["summary"][s][k]["p50"] for k in ("wall_s", "main_cpu_s", "worker_cpu_s"))]
        for s in ("serial", "overlap")
    ]
    return "\n".join(
        [
            f"ingest overlap: load {result['machine']['loadavg_start']} -> "
            f"{result['machine'].get('loadavg_end')}; {result['setup']}",
            table(["schedule", "wall s p50", "main CPU s p50", "worker CPU s p50"], rows),
            f"overlap / serial, wall: {result['overlap_over_serial_wall']}; worker share of the "
            f"serial CPU time: {result['worker_share_of_serial_cpu']}",
        ]
    )


def main(argv: Sequence[str] | None = None) -> None:
    parser = base_parser(__doc__.splitlines()[0])
    parser.add_argument("--replicas", type=int, help="copies of the demo files per round")
    parser.add_argument("--rounds", type=int, help="serial/overlap pairs")
    args = parser.parse_args(argv)
    args.replicas = args.replicas or (1 if args.quick else 3)
    args.rounds = args.rounds or (1 if args.quick else 3)
    info = machine()
    started = time.perf_counter()
    result = run(args)
    finish(result, "ingest_overlap", args, ("replicas", "rounds", "quick"), info, started, render)


if __name__ == "__main__":
    main()
