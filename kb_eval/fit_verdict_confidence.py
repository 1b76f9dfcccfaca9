"""Recalibrations of the verdict's confidence on "the case has relevant items" (issue 12).

The verdict compares each candidate's confidence (`scoring.answerability`, the session-3 model)
with 0.65 / 0.72. Each variant here is a map (confidence, case probability) -> confidence,
increasing in the confidence (so the pack's most confident chunk stays the most confident),
fitted on one row per training case: its top confidence (the most confident candidate), its
case-level answerability probability, and whether it has relevant items. Measured leave one
operator out by `bench/verdict_calibration.py` (docs/retrieval.md section 7, session 11).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from sklearn.isotonic import IsotonicRegression

from kb_eval.answerability_fit import Row, fit_case_model, fit_logistic, out_of_fold_scorers

EPS = 1e-6
ConfidenceMap = Callable[[float, float], float]
Fit = Callable[[Sequence["CaseScore"]], tuple[ConfidenceMap, dict[str, Any]]]


@dataclass(frozen=True)
class CaseScore:
    """One training case: its top confidence, case probability and label."""

    tenant_id: str
    case_id: str
    top: float
    probability: float
    answerable: bool
    quote: bool = False  # the most confident candidate contains a relevant quote


def logit(p: float) -> float:
    p = min(1.0 - EPS, max(EPS, p))
    return math.log(p / (1.0 - p))


def sigmoid(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z))))


def _by_case(rows: Sequence[Row]) -> dict[str, list[Row]]:
    by_case: dict[str, list[Row]] = {}
    for row in rows:
        by_case.setdefault(row.case_id, []).append(row)
    return by_case


def case_scores(
    rows: Sequence[Row], probabilities: dict[str, float] | None = None
) -> list[CaseScore]:
    """One CaseScore per case of `rows` (case probability from `probabilities`, else 0)."""
    out = []
    for case_id, case_rows in sorted(_by_case(rows).items()):
        top = max(case_rows, key=lambda r: (r.confidence, -r.rank))
        out.append(
            CaseScore(
                top.tenant_id,
                case_id,
                top.confidence,
                (probabilities or {}).get(case_id, 0.0),
                top.case_answerable,
                top.label,
            )
        )
    return out


def nested_case_scores(rows: Sequence[Row]) -> list[CaseScore]:
    """CaseScores whose case probability comes from a case model fitted without the case's
    operator (over out-of-fold chunk scores, as `fit_answerability` fits it)."""
    scorers = out_of_fold_scorers(rows)
    probabilities: dict[str, float] = {}
    for tenant in sorted(scorers):
        others = [r for r in rows if r.tenant_id != tenant]
        if not others:
            others = list(rows)
        model = fit_case_model(others, scorers, f"all but {tenant}")
        for case_id, case_rows in _by_case([r for r in rows if r.tenant_id == tenant]).items():
            pool = [r.features for r in sorted(case_rows, key=lambda r: r.rank)]
            probabilities[case_id] = model.probability(pool, scorers[tenant])
    return case_scores(rows, probabilities)


def _labels(cases: Sequence[CaseScore]) -> np.ndarray:
    return np.array([float(c.answerable) for c in cases])


def _logistic(columns: Sequence[Sequence[float]], y: np.ndarray) -> np.ndarray:
    x = np.column_stack([np.ones(len(y)), *[np.asarray(c, dtype=float) for c in columns]])
    return fit_logistic(x, y, l2=1e-3)


def fit_identity(cases: Sequence[CaseScore]) -> tuple[ConfidenceMap, dict[str, Any]]:
    """The session-3 confidence as it is (the baseline)."""
    return (lambda c, q: c), {}


def fit_platt(cases: Sequence[CaseScore]) -> tuple[ConfidenceMap, dict[str, Any]]:
    """sigmoid(a + b * logit(confidence)), b > 0."""
    a, b = _logistic([[logit(c.top) for c in cases]], _labels(cases))
    b = max(float(b), 1e-3)
    return (lambda c, q: sigmoid(a + b * logit(c))), {"a": float(a), "b": b}


def fit_platt_quote(cases: Sequence[CaseScore]) -> tuple[ConfidenceMap, dict[str, Any]]:
    """Platt scaling on "the most confident candidate contains a relevant quote" (the label of
    the release gate's top-chunk ECE) instead of "the case has relevant items"."""
    return fit_platt([replace(c, answerable=c.quote) for c in cases])


def fit_isotonic(cases: Sequence[CaseScore]) -> tuple[ConfidenceMap, dict[str, Any]]:
    """The increasing step function of least squares (pool adjacent violators)."""
    iso = IsotonicRegression(increasing=True, out_of_bounds="clip", y_min=0.0, y_max=1.0)
    iso.fit([c.top for c in cases], _labels(cases))
    xs, ys = iso.X_thresholds_.tolist(), iso.y_thresholds_.tolist()
    return (lambda c, q: float(np.interp(c, xs, ys))), {"x": xs, "y": ys}


def fit_two_input(cases: Sequence[CaseScore]) -> tuple[ConfidenceMap, dict[str, Any]]:
    """sigmoid(a + b * logit(confidence) + d * logit(case probability)), b > 0."""
    y = _labels(cases)
    a, b, d = _logistic([[logit(c.top) for c in cases], [logit(c.probability) for c in cases]], y)
    b = max(float(b), 1e-3)
    return (lambda c, q: sigmoid(a + b * logit(c) + d * logit(q))), {"a": a, "b": b, "d": d}


def fit_platt_min(cases: Sequence[CaseScore]) -> tuple[ConfidenceMap, dict[str, Any]]:
    """Platt scaling of min(confidence, case probability)."""
    a, b = _logistic([[logit(min(c.top, c.probability)) for c in cases]], _labels(cases))
    b = max(float(b), 1e-3)
    return (lambda c, q: sigmoid(a + b * logit(min(c, q)))), {"a": float(a), "b": b}


def fit_platt_mean(cases: Sequence[CaseScore]) -> tuple[ConfidenceMap, dict[str, Any]]:
    """Platt scaling of the mean of the two logits."""
    mean = [(logit(c.top) + logit(c.probability)) / 2 for c in cases]
    a, b = _logistic([mean], _labels(cases))
    b = max(float(b), 1e-3)
    return (lambda c, q: sigmoid(a + b * (logit(c) + logit(q)) / 2)), {"a": float(a), "b": b}


def fit_min_raw(cases: Sequence[CaseScore]) -> tuple[ConfidenceMap, dict[str, Any]]:
    """min(confidence, case probability), not refitted (session 10's suggestion)."""
    return (lambda c, q: min(c, q)), {}


VARIANTS: dict[str, Fit] = {
    "identity": fit_identity,
    "platt": fit_platt,
    "platt_quote": fit_platt_quote,
    "isotonic": fit_isotonic,
    "two_input": fit_two_input,
    "platt_min": fit_platt_min,
    "platt_mean": fit_platt_mean,
    "min_raw": fit_min_raw,
}
