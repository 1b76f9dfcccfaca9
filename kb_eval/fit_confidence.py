"""Fit the confidence calibration (logistic regression) on the tune split of a golden set.

    python -m kb_eval.fit_confidence data/golden/golden.jsonl --as-of 2026-11-15

Two models come out (both in kb_retrieval/retrieval/config.py):
- RELEVANCE, fitted on every candidate with soft labels (1 when the chunk contains a relevant
  quote, 0.3 for another chunk of an answering document version, 0 otherwise): orders candidates
  and carries the floors of docs/spec.md 6.4.
- CONFIDENCE, fitted on the `--top-k` best-ranked candidates per case (default 0: every one),
  label `--label` (default "doc": 1 for a chunk of an answering document version): the
  probability that a top-ranked chunk is evidence from a version that answers the email; the
  0.72 / 0.65 thresholds of docs/spec.md 9.2 are compared with it. docs/retrieval.md section 3 lists the
  variants measured and the rule that chose this one.
Every candidate of a case without relevant items is 0. Signal weights are kept non-negative (a
feature with a negative fitted slope is dropped), so a stronger match never lowers a score. The printed
coefficients go into `ConfidenceModel` (kb_retrieval/retrieval/config.py) with the date and data.
"""

from __future__ import annotations

import argparse
import json
from datetime import date
from pathlib import Path

import numpy as np

from kb_eval.golden import load_golden
from kb_eval.golden_eval import _email_payload
from kb_eval.metrics import is_covered
from kb_retrieval.retrieval.config import ConfidenceModel, RetrievalConfig
from kb_retrieval.service import open_knowledge_base


def features(
    vector: float, coverage: float, bm25: float, half: float, passage: float = 0.0
) -> list[float]:
    return [1.0, vector, coverage, bm25 / (bm25 + half) if bm25 > 0 else 0.0, passage]


def fit_nonnegative(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Logistic fit whose signal weights are >= 0: a feature with a negative fitted slope is
    dropped (weight 0) and the rest refitted. The bias (column 0) is free."""
    active = list(range(x.shape[1]))
    while True:
        w = np.zeros(x.shape[1])
        w[active] = fit_logistic(x[:, active], y)
        negative = [i for i in active[1:] if w[i] < 0]
        if not negative:
            return w
        active.remove(min(negative, key=lambda i: w[i]))


def fit_logistic(x: np.ndarray, y: np.ndarray, l2: float = 1e-2, steps: int = 50) -> np.ndarray:
    """Newton-Raphson (IRLS) with a small ridge penalty; deterministic."""
    w = np.zeros(x.shape[1])
    for _ in range(steps):
        p = 1 / (1 + np.exp(-x @ w))
        grad = x.T @ (p - y) + l2 * w
        hess = x.T @ (x * (p * (1 - p))[:, None]) + l2 * np.eye(x.shape[1])
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return w


LABELS = {
    "quote": lambda quote, same_doc: float(quote),
    "doc": lambda quote, same_doc: float(quote or same_doc),
    "soft": lambda quote, same_doc: 1.0 if quote else SOFT_SAME_DOCUMENT if same_doc else 0.0,
}
SOFT_SAME_DOCUMENT = 0.3


def collect(golden: Path, as_of: date, split: str) -> list[tuple[int, list[float], bool, bool]]:
    """(rank, features, contains a quote, same answering version) for every candidate."""
    config = RetrievalConfig(cache_ttl_seconds=0)
    kb = open_knowledge_base(config=config)
    rows = []
    for case in load_golden(golden):
        if split != "all" and case.split != split:
            continue
        trip = case.trip_context.model_dump(exclude_none=True) if case.trip_context else None
        result = kb.retriever.retrieve(
            case.tenant_id, _email_payload(case), as_of=as_of, trip_context=trip
        )
        for rank, cand in enumerate(result.candidates):
            ref = type(
                "Ref", (), {"doc_version_id": cand.version.doc_version_id, "text": cand.text}
            )()
            quote = any(is_covered(item, ref) for item in case.relevant)
            same_doc = any(item.doc_version_id == ref.doc_version_id for item in case.relevant)
            feats = features(
                cand.vector, cand.coverage, cand.bm25, config.confidence.bm25_half, cand.passage
            )
            rows.append((rank, feats, quote, same_doc))
    return rows


def fit(
    rows: list[tuple[int, list[float], bool, bool]], label: str, top_k: int | None
) -> ConfidenceModel:
    chosen = [r for r in rows if not top_k or r[0] < top_k]
    x = np.array([r[1] for r in chosen])
    y = np.array([LABELS[label](r[2], r[3]) for r in chosen])
    w = fit_nonnegative(x, y)
    return ConfidenceModel(bias=w[0], w_vector=w[1], w_coverage=w[2], w_bm25=w[3], w_passage=w[4])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("golden", type=Path)
    parser.add_argument("--as-of", default="2026-11-15")
    parser.add_argument("--split", default="tune", choices=["tune", "holdout", "all"])
    parser.add_argument(
        "--top-k",
        type=int,
        default=0,
        help="best-ranked candidates per case for CONFIDENCE (0: all)",
    )
    parser.add_argument(
        "--label", default="doc", choices=sorted(LABELS), help="CONFIDENCE label (see LABELS)"
    )
    args = parser.parse_args(argv)
    rows = collect(args.golden, date.fromisoformat(args.as_of), args.split)
    report = {
        "candidates": len(rows),
        "relevance_model": fit(rows, "soft", None).model_dump(),
        "confidence_model": fit(rows, args.label, args.top_k).model_dump(),
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
