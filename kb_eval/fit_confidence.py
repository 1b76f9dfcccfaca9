"""Fit the confidence calibration (logistic regression) on the tune split of a golden set.

    python -m kb_eval.fit_confidence data/golden/golden.jsonl --as-of 2026-11-15

Labels (`--label`): `quote` = 1 when the chunk contains a relevant quote (the metrics' rule);
`doc` = 1 for any chunk of an answering document version; `soft` (default) = 1 for a quote, 0.3
for another chunk of an answering version (partial evidence), 0 otherwise. Every candidate of a
case without relevant items is 0. IRLS accepts soft targets directly. The printed
coefficients go into `ConfidenceModel` (kb_retrieval/retrieval/config.py) with the date and data.
"""

from __future__ import annotations

import argparse
import json
from datetime import date
from pathlib import Path

import numpy as np

from kb_eval.golden import load_golden
from kb_eval.metrics import is_covered
from kb_eval.runner import _email_payload
from kb_retrieval.retrieval.config import ConfidenceModel, RetrievalConfig
from kb_retrieval.service import open_knowledge_base


def features(vector: float, coverage: float, bm25: float, half: float, trip: bool) -> list[float]:
    return [1.0, vector, coverage, bm25 / (bm25 + half) if bm25 > 0 else 0.0, float(trip)]


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


def collect(golden: Path, as_of: date, split: str, label: str) -> tuple[np.ndarray, np.ndarray]:
    config = RetrievalConfig(cache_ttl_seconds=0)
    kb = open_knowledge_base(config=config)
    rows, labels = [], []
    for case in load_golden(golden):
        if split != "all" and case.split != split:
            continue
        trip = case.trip_context.model_dump(exclude_none=True) if case.trip_context else None
        result = kb.retriever.retrieve(
            case.tenant_id, _email_payload(case), as_of=as_of, trip_context=trip
        )
        for cand in result.candidates:
            ref = type(
                "Ref", (), {"doc_version_id": cand.version.doc_version_id, "text": cand.text}
            )()
            rows.append(
                features(cand.vector, cand.coverage, cand.bm25, config.confidence.bm25_half)
            )
            if label == "doc":
                labels.append(
                    float(any(item.doc_version_id == ref.doc_version_id for item in case.relevant))
                )
            else:
                labels.append(float(any(is_covered(item, ref) for item in case.relevant)))
    return np.array(rows), np.array(labels)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("golden", type=Path)
    parser.add_argument("--as-of", default="2026-11-15")
    parser.add_argument("--split", default="tune", choices=["tune", "holdout", "all"])
    parser.add_argument("--label", default="soft", choices=sorted(LABELS))
    args = parser.parse_args(argv)
    x, y = collect(args.golden, date.fromisoformat(args.as_of), args.split, args.label)
    w = fit_logistic(x, y)
    model = ConfidenceModel(bias=w[0], w_vector=w[1], w_coverage=w[2], w_bm25=w[3], w_trip=w[4])
    print(
        json.dumps(
            {"samples": len(y), "positives": int(y.sum()), "model": model.model_dump()}, indent=2
        )
    )


if __name__ == "__main__":
    main()
