"""Training rows and the logistic fit of the answerability model (kb_retrieval/retrieval/answerability.py).

Every candidate of every labelled case is one row; its label is 1 when the chunk contains one of
the case's relevant quotes (spec 10 matching), else 0 (every candidate of a case
without relevant items is 0). Signal weights are kept non-negative, so a stronger match never
lowers the probability; category and answer-type-miss weights are free.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date

import numpy as np

from kb_eval.golden import GoldenCase
from kb_eval.golden_eval import _email_payload
from kb_eval.metrics import is_covered
from kb_retrieval.retrieval.answerability import FEATURE_NAMES, AnswerabilityModel
from kb_retrieval.retrieval.case_answerability import (
    CASE_FEATURES,
    CaseAnswerabilityModel,
    ChunkScorer,
    case_features,
)
from kb_retrieval.retrieval.ranker import RANK_ONLY_FEATURES, RankerModel
from kb_retrieval.retrieval.retriever import Retriever

# Features whose weight may be negative (the rest are match strengths, kept >= 0).
FREE_FEATURES = frozenset(
    {"type_miss", "high_precedence", "safety_medical", "itinerary", "faq", "low_tier"}
    | {"vector_gap", "sentence_gap", "passage_gap", "bm25_gap"}
    | {"pool_absent_share", "key_terms_missing"}
    | {"document_margin"}
)
L2 = 1.0
RANK_FEATURES: tuple[str, ...] = (
    *(n for n in FEATURE_NAMES if n != "pool_absent_share"),
    *RANK_ONLY_FEATURES,
)


@dataclass(frozen=True)
class Row:
    """One candidate of one case: its features and whether it contains a relevant quote."""

    tenant_id: str
    case_id: str
    rank: int
    features: dict[str, float]
    label: bool
    answering_version: bool = False
    case_answerable: bool = False
    confidence: float = 0.0  # the verdict's confidence of this candidate (scoring.answerability)
    # The lexical confidence's inputs: cosine, coverage, BM25 and passage coverage of the direct
    # query (what `bench/confidence_refit.py` refits the session-3 model on).
    lexical: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)


@dataclass(frozen=True)
class _Chunk:
    doc_version_id: str
    text: str


def collect_rows(retriever: Retriever, cases: Iterable[tuple[GoldenCase, date]]) -> list[Row]:
    """Retrieve every case (at its own as-of date) and label every candidate by the quotes."""
    rows = []
    for case, as_of in cases:
        trip = case.trip_context.model_dump(exclude_none=True) if case.trip_context else None
        result = retriever.retrieve(
            case.tenant_id,
            _email_payload(case),
            as_of=as_of,
            trip_context=trip,
            sensitivity=list(case.sensitivity) or None,
        )
        for rank, cand in enumerate(result.candidates):
            chunk = _Chunk(cand.version.doc_version_id, cand.text)
            label = any(is_covered(item, chunk) for item in case.relevant)
            version = any(item.doc_version_id == chunk.doc_version_id for item in case.relevant)
            features = dict(cand.features)
            rows.append(
                Row(
                    case.tenant_id,
                    case.case_id,
                    rank,
                    features,
                    label,
                    version,
                    bool(case.relevant),
                    cand.confidence,
                    (cand.vector, cand.coverage, cand.bm25, cand.passage),
                )
            )
    return rows


def design(rows: Sequence[Row], names: Sequence[str] = FEATURE_NAMES) -> np.ndarray:
    """Bias column then one column per feature name."""
    x = np.ones((len(rows), len(names) + 1))
    for i, row in enumerate(rows):
        x[i, 1:] = [row.features.get(name, 0.0) for name in names]
    return x


def fit_logistic(x: np.ndarray, y: np.ndarray, l2: float = L2, steps: int = 100) -> np.ndarray:
    """Newton-Raphson (IRLS) with a ridge penalty on every weight but the bias; deterministic."""
    w = np.zeros(x.shape[1])
    penalty = l2 * np.eye(x.shape[1])
    penalty[0, 0] = 0.0
    for _ in range(steps):
        p = 1 / (1 + np.exp(-np.clip(x @ w, -60, 60)))
        grad = x.T @ (p - y) + penalty @ w
        hess = x.T @ (x * (p * (1 - p))[:, None]) + penalty + 1e-9 * np.eye(x.shape[1])
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-9:
            break
    return w


def fit_match_non_negative(
    x: np.ndarray, y: np.ndarray, names: Sequence[str], free: frozenset[str]
) -> np.ndarray:
    """Logistic weights (column 0 the bias) where every feature outside `free` with a negative
    slope is dropped, the most negative first, and the rest refitted."""
    active = list(range(x.shape[1]))
    while True:
        w = np.zeros(x.shape[1])
        w[active] = fit_logistic(x[:, active], y)
        negative = [i for i in active[1:] if w[i] < 0 and names[i - 1] not in free]
        if not negative:
            return w
        active.remove(min(negative, key=lambda i: w[i]))


def fit_chunk_model(
    rows: Sequence[Row], names: Sequence[str] = FEATURE_NAMES
) -> AnswerabilityModel:
    """Logistic fit over `names`; a match-strength feature with a negative slope is dropped."""
    if not rows:
        raise ValueError("no training rows: the golden cases retrieved no candidates")
    x = design(rows, names)
    y = np.array([float(r.label) for r in rows])
    w = fit_match_non_negative(x, y, names, FREE_FEATURES)
    weights = {name: round(float(w[i + 1]), 4) for i, name in enumerate(names) if w[i + 1] != 0}
    return AnswerabilityModel(bias=round(float(w[0]), 4), weights=weights)


Scorers = ChunkScorer | Mapping[str, ChunkScorer]


def out_of_fold_scorers(
    rows: Sequence[Row], names: Sequence[str] = FEATURE_NAMES
) -> dict[str, AnswerabilityModel]:
    """For each operator of `rows`, the chunk model fitted on every other operator's rows.

    The calibration and the case model are fitted on these scores, so they are calibrated for
    operators the chunk model has not seen (the held-out operator of `--cv tenant` is one).
    With a single operator there is nothing to hold out: its in-sample model is returned.
    """
    tenants = sorted({r.tenant_id for r in rows})
    if len(tenants) < 2:
        return {t: fit_chunk_model(rows, names) for t in tenants}
    return {t: fit_chunk_model([r for r in rows if r.tenant_id != t], names) for t in tenants}


def _scorer(scorers: Scorers, tenant_id: str) -> ChunkScorer:
    return scorers[tenant_id] if isinstance(scorers, Mapping) else scorers


def fit_answerability(
    rows: Sequence[Row],
    fitted_on: str,
    names: Sequence[str] = FEATURE_NAMES,
    calibration_label: str = "answerable",
    nested: bool = True,
    ranker: bool = True,
) -> AnswerabilityModel:
    """The chunk model on every row, then its recalibration and the case model fitted on
    out-of-fold chunk scores (`out_of_fold_scorers`; nested=False: on the in-sample scores),
    and the pairwise ranker (`fit_ranker`; ranker=False: order by the chunk probability)."""
    chunk_model = fit_chunk_model(rows, names)
    scorers: Scorers = out_of_fold_scorers(rows, names) if nested else chunk_model
    a, b = fit_calibration(rows, scorers, calibration_label)
    return chunk_model.model_copy(
        update={
            "calibration_bias": a,
            "calibration_slope": b,
            "fitted_on": fitted_on,
            "case": fit_case_model(rows, scorers, fitted_on),
            "ranker": fit_ranker(rows, fitted_on) if ranker and rankable(rows) else None,
        }
    )


def rankable(rows: Sequence[Row]) -> bool:
    """Some case has a quote-holding and another candidate (else no ranker is fitted and the
    chunk probability orders)."""
    by_case: dict[str, set[bool]] = {}
    for row in rows:
        by_case.setdefault(row.case_id, set()).add(row.label)
    return any(len(labels) == 2 for labels in by_case.values())


def pair_design(rows: Sequence[Row], names: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """One row per (quote-holding, other) candidate pair of a case and its mirror image:
    the difference of their features, label 1 for (holding - other), 0 for the reverse."""
    by_case: dict[str, list[Row]] = {}
    for row in rows:
        by_case.setdefault(row.case_id, []).append(row)
    blocks = []
    for case_id in sorted(by_case):
        x = design(sorted(by_case[case_id], key=lambda r: r.rank), names)[:, 1:]
        labels = np.array([r.label for r in sorted(by_case[case_id], key=lambda r: r.rank)])
        positives, negatives = x[labels], x[~labels]
        if len(positives) and len(negatives):
            blocks.append((positives[:, None, :] - negatives[None, :, :]).reshape(-1, len(names)))
    if not blocks:
        raise ValueError("no case has both a quote-holding and another candidate to rank")
    diffs = np.vstack(blocks)
    return np.vstack([diffs, -diffs]), np.concatenate([np.ones(len(diffs)), np.zeros(len(diffs))])


# Ranker features whose weight may be negative (the rest are match strengths, kept >= 0).
# Whole-chunk coverage is free: next to passage coverage, words matched far apart in a long
# chunk are what a distractor looks like (docs/retrieval.md section 7, session 8).
RANK_FREE = FREE_FEATURES | frozenset(
    {"lexical_top1", "seen_share", "log_length", "first_chunk", "document_vector_gap"}
    | {"policy_high", "policy_itinerary", "policy_faq", "policy_low_tier"}
    | {"coverage_direct", "coverage_best"}
)


def fit_ranker(
    rows: Sequence[Row], fitted_on: str, names: Sequence[str] = RANK_FEATURES
) -> RankerModel:
    """Pairwise logistic ranker (ranker.py): within each case, every quote-holding candidate
    against every other (a match-strength feature with a negative slope is dropped, as in
    `fit_chunk_model`); then its scores Platt-scaled on every row against the quote label,
    with `pool_absent_share` (constant within a case, so the order is the ranker's)."""
    x, y = pair_design(rows, names)
    x = np.hstack([np.zeros((len(x), 1)), x])
    w = fit_match_non_negative(x, y, names, RANK_FREE)
    w = w[1:]
    scores = design(rows, names)[:, 1:] @ w
    absent = np.array([r.features.get("pool_absent_share", 0.0) for r in rows])
    labels = np.array([float(r.label) for r in rows])
    bias, slope, absent_weight = fit_logistic(
        np.column_stack([np.ones(len(rows)), scores, absent]), labels, l2=1e-3
    )
    weights = {name: round(float(w[i]), 4) for i, name in enumerate(names) if w[i] != 0}
    return RankerModel(
        weights=weights,
        bias=round(float(bias), 4),
        slope=round(float(max(slope, 1e-3)), 4),
        absent_weight=round(float(absent_weight), 4),
        fitted_on=fitted_on,
    )


def fit_case_model(
    rows: Sequence[Row],
    scorers: Scorers,
    fitted_on: str,
    names: Sequence[str] = CASE_FEATURES,
) -> CaseAnswerabilityModel:
    """Logistic fit, one row per case (its candidate set's features), label "the case has
    relevant items": the probability that the knowledge base answers, whatever chunk does.
    `scorers`: one chunk model, or one per operator (the out-of-fold ones)."""
    by_case: dict[str, list[Row]] = {}
    for row in rows:
        by_case.setdefault(row.case_id, []).append(row)
    x = np.ones((len(by_case), len(names) + 1))
    y = np.zeros(len(by_case))
    for i, case_rows in enumerate(by_case.values()):
        ordered = sorted(case_rows, key=lambda r: r.rank)
        scorer = _scorer(scorers, ordered[0].tenant_id)
        features = case_features([r.features for r in ordered], scorer, names)
        x[i, 1:] = [features[n] for n in names]
        y[i] = float(ordered[0].case_answerable)
    w = fit_logistic(x, y)
    weights = {name: round(float(w[i + 1]), 4) for i, name in enumerate(names)}
    return CaseAnswerabilityModel(bias=round(float(w[0]), 4), weights=weights, fitted_on=fitted_on)


CALIBRATION_LABELS = ("answerable", "answering_version", "answering_in_top3")


def fit_calibration(
    rows: Sequence[Row], scorers: Scorers, label: str = "answerable"
) -> tuple[float, float]:
    """Platt scaling of the best candidate's score per case against `label`: "answerable" =
    the case has an answer in the knowledge base (relevant items), the quantity UNKNOWN (< 0.65)
    is about; "answering_version" = the best candidate is a chunk of an answering version;
    "answering_in_top3" = one of the three best candidates is. `scorers`: one chunk model, or
    one per operator (the out-of-fold ones)."""
    if label not in CALIBRATION_LABELS:
        raise ValueError(f"calibration label {label!r}: choose one of {CALIBRATION_LABELS}")
    by_case: dict[str, list[tuple[float, Row]]] = {}
    for row in rows:
        score = _scorer(scorers, row.tenant_id).score(row.features)
        by_case.setdefault(row.case_id, []).append((score, row))
    x, y = [], []
    for scored in by_case.values():
        scored.sort(key=lambda pair: (-pair[0], pair[1].rank))
        best, top = scored[0], scored[:3]
        if label == "answerable":
            target = best[1].case_answerable
        elif label == "answering_version":
            target = best[1].answering_version
        else:
            target = any(row.answering_version for _, row in top)
        x.append([1.0, best[0]])
        y.append(float(target))
    a, b = fit_logistic(np.array(x), np.array(y), l2=1e-3)
    return round(float(a), 4), round(float(max(b, 1e-3)), 4)
