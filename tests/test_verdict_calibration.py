"""Recalibrations of the verdict's confidence (kb_eval/fit_verdict_confidence.py), synthetic data."""

from __future__ import annotations

from itertools import pairwise

import numpy as np
import pytest

from kb_eval.answerability_fit import Row, fit_case_model, out_of_fold_scorers
from kb_eval.calibration import expected_calibration_error
from kb_eval.fit_verdict_confidence import (
    VARIANTS,
    CaseScore,
    case_scores,
    fit_platt,
    fit_two_input,
    logit,
    nested_case_scores,
    sigmoid,
)


def _cases(seed: int, n: int = 600) -> list[CaseScore]:
    """Cases whose true probability of being answerable is sigmoid(1 + 2 logit(top) + logit(q))."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        top = float(rng.uniform(0.2, 0.9))
        q = float(rng.uniform(0.1, 0.95))
        p = sigmoid(1.0 + 2.0 * logit(top) + logit(q))
        out.append(CaseScore(f"op{i % 3}", f"case-{i}", top, q, bool(rng.random() < p)))
    return out


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_every_variant_is_increasing_in_the_confidence_and_stays_a_probability(name):
    mapping, _ = VARIANTS[name](_cases(1))
    grid = np.linspace(0.01, 0.99, 50)
    for q in (0.05, 0.5, 0.95):
        values = [mapping(float(c), q) for c in grid]
        assert all(0.0 <= v <= 1.0 for v in values)
        assert all(b >= a for a, b in pairwise(values))


def test_platt_and_two_input_are_calibrated_on_cases_they_were_not_fitted_on():
    train, test = _cases(2), _cases(3)
    labels = [c.answerable for c in test]
    raw = expected_calibration_error([(c.top, y) for c, y in zip(test, labels, strict=True)])
    for fit in (fit_platt, fit_two_input):
        mapping, _ = fit(train)
        pairs = [(mapping(c.top, c.probability), y) for c, y in zip(test, labels, strict=True)]
        assert expected_calibration_error(pairs) < 0.08 < raw
    _, two = fit_two_input(train)
    assert two["b"] == pytest.approx(2.0, abs=0.6) and two["d"] == pytest.approx(1.0, abs=0.4)


def test_fits_are_deterministic():
    cases = _cases(4)
    for fit in VARIANTS.values():
        assert fit(cases)[1] == fit(list(cases))[1]


def _rows(rng: np.random.Generator, tenant: str, cases: int) -> list[Row]:
    rows = []
    for case in range(cases):
        answerable = case % 3 != 0
        for rank in range(6):
            label = answerable and rank == 0
            strength = float(rng.normal(0.7 if label else 0.35, 0.1))
            confidence = float(rng.uniform(0.3, 0.8))
            features = {"vector_direct": strength, "faq": float(rank % 2)}
            rows.append(
                Row(
                    tenant, f"{tenant}-{case}", rank, features, label, label, answerable, confidence
                )
            )
    return rows


def test_case_scores_take_the_most_confident_candidate_and_the_case_label():
    rows = _rows(np.random.default_rng(8), "a", 9)
    scores = {s.case_id: s for s in case_scores(rows)}
    assert len(scores) == 9
    for case_id, score in scores.items():
        mine = [r for r in rows if r.case_id == case_id]
        assert score.top == max(r.confidence for r in mine)
        assert score.answerable == mine[0].case_answerable
        assert score.probability == 0.0


def test_nested_case_probabilities_come_from_a_case_model_without_the_operator():
    rng = np.random.default_rng(9)
    rows = _rows(rng, "a", 24) + _rows(rng, "b", 24) + _rows(rng, "c", 24)
    scores = nested_case_scores(rows)
    assert nested_case_scores(rows) == scores
    scorers = out_of_fold_scorers(rows)
    without_a = fit_case_model([r for r in rows if r.tenant_id != "a"], scorers, "x")
    pool = [r.features for r in rows if r.case_id == "a-4"]
    expected = without_a.probability(pool, scorers["a"])
    assert next(s for s in scores if s.case_id == "a-4").probability == pytest.approx(expected)
    # A fold that holds "c" out fits its calibration on "a" and "b" only.
    fold = nested_case_scores([r for r in rows if r.tenant_id != "c"])
    assert {s.tenant_id for s in fold} == {"a", "b"}
