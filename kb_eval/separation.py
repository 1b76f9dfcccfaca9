"""How well a score separates answerable from unanswerable e-mails (issue 12, session 10).

Answerable = the golden case expects `OK_TO_DRAFT`; unanswerable = it expects `UNKNOWN`. The
area under the ROC curve of a score between the two (0.5: no separation, 1.0: every answerable
e-mail scores above every unanswerable one) reads the effect of a feature directly, without a
threshold. Scores: the pack's top `confidence_score` (the verdict's confidence; a case without
evidence counts 0) and the case-level answerability probability (`case_answerability.py`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sklearn.metrics import roc_auc_score

SCORES = {"confidence_top": "auc_confidence_top", "case_probability": "auc_case_probability"}


def answerable_auc(details: Sequence[dict[str, Any]], score: str) -> float | None:
    """AUC of detail[`score`] (None counts 0) between answerable and unanswerable cases;
    None when either class is absent."""
    pairs = [
        (float(d.get(score) or 0.0), d["expected_outcome"] == "OK_TO_DRAFT")
        for d in details
        if d["expected_outcome"] in ("OK_TO_DRAFT", "UNKNOWN")
    ]
    labels = {label for _, label in pairs}
    if len(labels) < 2:
        return None
    return float(roc_auc_score([label for _, label in pairs], [value for value, _ in pairs]))


def separation(details: Sequence[dict[str, Any]]) -> dict[str, float | int | None]:
    """Both AUCs and the counts they are measured on."""
    figures: dict[str, float | int | None] = {
        key: answerable_auc(details, score) for score, key in SCORES.items()
    }
    figures["auc_answerable"] = sum(1 for d in details if d["expected_outcome"] == "OK_TO_DRAFT")
    figures["auc_unanswerable"] = sum(1 for d in details if d["expected_outcome"] == "UNKNOWN")
    return figures


def case_probability_pairs(details: Sequence[dict[str, Any]]) -> list[tuple[float, bool]]:
    """(case probability, the case has relevant items) for every case that has a probability:
    the quantity the case model is fitted for, so its expected calibration error."""
    return [
        (float(d["case_probability"]), d["n_relevant"] > 0)
        for d in details
        if d.get("case_probability") is not None
    ]


def top_confidence_pairs(details: Sequence[dict[str, Any]]) -> list[tuple[float, bool]]:
    """(the pack's top confidence, the case has relevant items) for every case (no evidence
    counts 0): how well the verdict's confidence is calibrated for "the knowledge base answers",
    the quantity the recalibrations of `kb_eval/fit_verdict_confidence.py` are fitted for."""
    return [(float(d.get("confidence_top") or 0.0), d["n_relevant"] > 0) for d in details]
