"""What one MiniLM pass over (question, evidence) pairs would add to the query path.

A cross-encoder (a MiniLM fine-tuned to read the question and a chunk together) is the one
relevance signal not yet tried for issue 12; before anyone trains one, this measures what its
forward pass costs on this machine. The weights are the packaged all-MiniLM-L6-v2 (a fine-tuned
copy has the same shape, so the same cost), float32 and torch dynamic int8, on fresh text: one
question, one evidence sentence (~45 word pieces with the question) or one chunk (~145), 1 or 3
pairs per pass. Baseline in the same run: the question alone through the same model (the kind
of pass the query path already pays for each variant).

    .venv/bin/python -m bench.pair_pass_cost --json [--repeats 20]
"""

from __future__ import annotations

import statistics
import time
from typing import Any

from bench.common import base_parser, finish, log, machine

QUESTION = (
    "We are hoping to bring our own kayak for the week, is there somewhere safe to store it "
    "overnight and is there a charge?"
)
SENTENCE = "Guests may store personal equipment in the locked boathouse at no extra cost."
CHUNK = " ".join(
    ["Storage and equipment.", *[SENTENCE] * 6, "Ask the base manager for the key on arrival."]
)
SHAPES = {
    "question alone (baseline)": [QUESTION],
    "question + sentence, 1 pair": [f"{QUESTION} [SEP] {SENTENCE}"],
    "question + sentence, 3 pairs": [f"{QUESTION} [SEP] {SENTENCE}"] * 3,
    "question + chunk, 1 pair": [f"{QUESTION} [SEP] {CHUNK}"],
    "question + chunk, 3 pairs": [f"{QUESTION} [SEP] {CHUNK}"] * 3,
}


def _timed(model: Any, texts: list[str], repeats: int) -> dict[str, float]:
    model.encode(texts, batch_size=len(texts))
    samples = []
    for _ in range(repeats):
        started = time.perf_counter()
        model.encode(texts, batch_size=len(texts))
        samples.append((time.perf_counter() - started) * 1000)
    ordered = sorted(samples)
    return {
        "p50_ms": round(statistics.median(ordered), 2),
        "p95_ms": round(ordered[int(0.95 * (len(ordered) - 1))], 2),
    }


def measure(repeats: int) -> dict[str, Any]:
    """p50 / p95 ms per pass for each shape and precision, and the ratio to the baseline."""
    import torch
    from sentence_transformers import SentenceTransformer

    from kb_retrieval.model_files import minilm_model_dir

    model = SentenceTransformer(str(minilm_model_dir()), device="cpu")
    model.max_seq_length = 256
    models = {
        "float32": model,
        "int8": torch.quantization.quantize_dynamic(model, {torch.nn.Linear}, dtype=torch.qint8),
    }
    result: dict[str, Any] = {"torch_threads": torch.get_num_threads(), "precisions": {}}
    for precision, encoder in models.items():
        rows: dict[str, Any] = {}
        for shape, texts in SHAPES.items():
            log(f"{precision}: {shape}")
            rows[shape] = _timed(encoder, texts, repeats)
            rows[shape]["word_pieces"] = len(encoder.tokenizer(texts[0])["input_ids"])
        base = rows["question alone (baseline)"]["p50_ms"]
        for row in rows.values():
            row["p50_over_baseline"] = round(row["p50_ms"] / base, 2)
        result["precisions"][precision] = rows
    return result


def render(result: dict[str, Any]) -> str:
    lines = [
        "| precision | shape | word pieces | p50 / p95 ms | p50 / baseline |",
        "| --- " * 5 + "|",
    ]
    for precision, rows in result["precisions"].items():
        for shape, row in rows.items():
            lines.append(
                f"| {precision} | {shape} | {row['word_pieces']} | {row['p50_ms']} / "
                f"{row['p95_ms']} | {row['p50_over_baseline']} |"
            )
    return "\n".join(lines)


def main() -> None:
    parser = base_parser(__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    started = time.perf_counter()
    info = machine()
    result = measure(5 if args.quick else args.repeats)
    finish(result, "pair_pass_cost", args, ["repeats", "quick"], info, started, render)


if __name__ == "__main__":
    main()
