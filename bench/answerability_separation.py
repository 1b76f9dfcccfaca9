"""Does a candidate feature separate answerable from unanswerable e-mails on operators it never saw?

    KB_HOME=... python -m bench.answerability_separation [GOLDEN@AS_OF ...] [--feature NAME ...]

Retrieves every golden case once (the index under KB_HOME, `RetrievalConfig.from_env`), then for
each feature set and each operator: the chunk and case models fitted on the other operators
exactly as `kb eval --cv tenant` fits them (`fit_answerability`, nested calibration), scored on
the held-out one. Reports as JSON, per feature set: the held-out chunk log-loss, how many
answerable e-mails' best candidate holds a quote, and the AUC between answerable (expected
`OK_TO_DRAFT`) and unanswerable (expected `UNKNOWN`) e-mails of the case probability and of the
best candidate's calibrated confidence, pooled and per operator; the same AUC of a gradient-boosted
case model (scikit-learn) over the stored case features; and each feature's AUC alone on the
first-ranked candidate. Feature sets: the stored ones, then each `--feature` (default: the
`kb_eval/specific_terms.py` features) added to both models, then all of them together.

The `kb_eval/specific_terms.py` features are measured, not served: the serving path does not compute
them (they cost the ranking step 1.3 -> 36.5 ms p50, `bench/ranking_cost.py`, and no fit
adopted them, docs/retrieval.md section 7, session 10). This script adds them to each retrieval
of its own process, after `set_pool_features`, from the same plan, direct terms and idf.
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Sequence
from datetime import date

import numpy as np
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.metrics import roc_auc_score

from kb_eval.answerability_fit import (
    FREE_FEATURES,
    Row,
    collect_rows,
    fit_answerability,
    fit_case_model,
    fit_chunk_model,
    out_of_fold_scorers,
)
from kb_eval.cross_validation import load_case_sets, parse_golden_spec
from kb_eval.specific_terms import SPECIFIC_FEATURES, add_specific_features
from kb_retrieval.query.plan import QueryPlan
from kb_retrieval.retrieval import retriever as retriever_module
from kb_retrieval.retrieval.answerability import FEATURE_NAMES
from kb_retrieval.retrieval.candidates import Candidate
from kb_retrieval.retrieval.case_answerability import CASE_FEATURES, case_features
from kb_retrieval.retrieval.config import RetrievalConfig
from kb_retrieval.retrieval.pool_features import set_pool_features
from kb_retrieval.service import open_knowledge_base

GOLDEN = [
    "data/golden/golden.jsonl@2026-11-15",
    "/work/shared/data/devset/golden.jsonl@2026-11-22",
]
CLASSES = ("OK_TO_DRAFT", "UNKNOWN")
# One held-out operator: (answerable?, case probability, top confidence) per labelled case.
Fold = tuple[list[bool], list[float], list[float]]


def _with_specific_features(
    pool: Sequence[Candidate],
    plan: QueryPlan,
    variant_terms: Sequence[Sequence[str]],
    idf: dict[str, float],
    avgdl: float,
    config: RetrievalConfig,
) -> None:
    """`set_pool_features`, then the `kb_eval/specific_terms.py` features of the same pool."""
    set_pool_features(pool, plan, variant_terms, idf, avgdl, config)
    add_specific_features(pool, plan, variant_terms[0] if variant_terms else [], idf)


def _auc(labels: Sequence[bool], scores: Sequence[float]) -> float | None:
    return float(roc_auc_score(labels, scores)) if len(set(labels)) == 2 else None


def _by_case(rows: Sequence[Row]) -> dict[str, list[Row]]:
    by_case: dict[str, list[Row]] = {}
    for row in rows:
        by_case.setdefault(row.case_id, []).append(row)
    return {k: sorted(v, key=lambda r: r.rank) for k, v in by_case.items()}


def held_out(
    rows: Sequence[Row], expected: dict[str, str], chunk: Sequence[str], case: Sequence[str]
) -> dict:
    """Every operator scored by the models fitted on the others, with `chunk` / `case` names."""
    folds: dict[str, Fold] = {}
    loss, count, holds = 0.0, 0, 0
    for tenant in sorted({r.tenant_id for r in rows}):
        train = [r for r in rows if r.tenant_id != tenant]
        model = fit_answerability(train, "bench", names=chunk, ranker=False)
        model = model.model_copy(
            update={"case": fit_case_model(train, out_of_fold_scorers(train, chunk), "", case)}
        )
        labels, case_p, conf = [], [], []
        for case_id, case_rows in _by_case([r for r in rows if r.tenant_id == tenant]).items():
            features = [r.features for r in case_rows]
            scores = [model.score(f) for f in features]
            best = max(range(len(scores)), key=lambda i: (scores[i], -i))
            for row, score in zip(case_rows, scores, strict=True):
                p = min(max(1 / (1 + math.exp(-score)), 1e-9), 1 - 1e-9)
                loss -= math.log(p if row.label else 1 - p)
                count += 1
            if expected[case_id] == "OK_TO_DRAFT":
                holds += case_rows[best].label
            if expected[case_id] in CLASSES:
                labels.append(expected[case_id] == "OK_TO_DRAFT")
                case_p.append(model.case_probability(features) or 0.0)
                conf.append(model.confidence(features[best]))
        folds[tenant] = (labels, case_p, conf)
    return {
        "chunk_log_loss": loss / max(count, 1),
        "best_candidate_holds_quote": holds,
        **auc_summary(folds),
    }


def auc_summary(folds: dict[str, Fold]) -> dict:
    """AUC of the case probability and of the top confidence (answerable vs unanswerable), per
    held-out operator and pooled, from each fold's (labels, case probabilities, confidences)."""
    pooled: Fold = ([], [], [])
    for part in folds.values():
        for bucket, values in zip(pooled, part, strict=True):
            bucket.extend(values)
    per_operator = {
        tenant: {"auc_case": _auc(labels, case_p), "auc_confidence": _auc(labels, conf)}
        for tenant, (labels, case_p, conf) in folds.items()
    }
    labels, case_p, conf = pooled
    return {
        "auc_case": _auc(labels, case_p),
        "auc_confidence": _auc(labels, conf),
        "per_operator": per_operator,
    }


def gbm_case(rows: Sequence[Row], expected: dict[str, str]) -> dict:
    """The stored case features, a gradient-boosted classifier instead of the logistic fit."""
    labels, scores = [], []
    for tenant in sorted({r.tenant_id for r in rows}):
        train = [r for r in rows if r.tenant_id != tenant]
        oof, full = out_of_fold_scorers(train), fit_chunk_model(train)
        x_train, y_train = [], []
        for case_rows in _by_case(train).values():
            f = case_features(
                [r.features for r in case_rows], oof[case_rows[0].tenant_id], CASE_FEATURES
            )
            x_train.append([f[n] for n in CASE_FEATURES])
            y_train.append(case_rows[0].case_answerable)
        model = HistGradientBoostingClassifier(
            max_iter=150, max_leaf_nodes=7, min_samples_leaf=10, learning_rate=0.05, random_state=0
        ).fit(np.array(x_train), np.array(y_train))
        for case_id, case_rows in _by_case([r for r in rows if r.tenant_id == tenant]).items():
            if expected[case_id] in CLASSES:
                f = case_features([r.features for r in case_rows], full, CASE_FEATURES)
                scores.append(float(model.predict_proba([[f[n] for n in CASE_FEATURES]])[0, 1]))
                labels.append(expected[case_id] == "OK_TO_DRAFT")
    return {"auc_case": _auc(labels, scores)}


def univariate(rows: Sequence[Row], expected: dict[str, str], names: Sequence[str]) -> dict:
    """Each feature's AUC alone, on the first-ranked candidate of each e-mail."""
    firsts = [(expected[k], v[0]) for k, v in _by_case(rows).items() if expected[k] in CLASSES]
    labels = [e == "OK_TO_DRAFT" for e, _ in firsts]
    return {n: _auc(labels, [r.features.get(n, 0.0) for _, r in firsts]) for n in names}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("golden", nargs="*", default=GOLDEN)
    parser.add_argument("--feature", action="append", default=None)
    args = parser.parse_args(argv)
    extra = args.feature or list(SPECIFIC_FEATURES)
    retriever_module.set_pool_features = _with_specific_features
    sets = load_case_sets([parse_golden_spec(s, date(2026, 11, 22)) for s in args.golden])
    config = RetrievalConfig.from_env().model_copy(update={"cache_ttl_seconds": 0.0})
    kb = open_knowledge_base(config=config)
    kb.retriever.audit = False
    rows = collect_rows(kb.retriever, [(c, s.as_of) for s in sets for c in s.cases])
    expected = {c.case_id: c.expected_outcome.value for s in sets for c in s.cases}
    chunk, case = list(FEATURE_NAMES), list(CASE_FEATURES)
    variants = {"stored": (chunk, case)}
    variants.update({f"+{n}": ([*chunk, n], [*case, n]) for n in extra})
    variants["+all"] = ([*chunk, *extra], [*case, *extra])
    report = {
        "rows": len(rows),
        "free_features": sorted(FREE_FEATURES),
        "variants": {k: held_out(rows, expected, c, q) for k, (c, q) in variants.items()},
        "gbm_case": gbm_case(rows, expected),
        "univariate_first_candidate": univariate(rows, expected, [*FEATURE_NAMES, *extra]),
    }
    print(json.dumps(report, indent=2, sort_keys=True))


if __name__ == "__main__":
    main()
