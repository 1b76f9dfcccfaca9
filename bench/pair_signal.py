"""Do features that read the question and the chunk together separate answerable e-mails?

    KB_HOME=... KB_TORCH_THREADS=1 python -m bench.pair_signal [GOLDEN@AS_OF ...] [--rows PATH]
        [--reuse] [--features PATH] [--cost-sample N]

Retrieves every golden case once (`bench/pair_collect.py`; with `--reuse`, reads the rows saved
at `--rows` instead), then computes `kb_eval/pair_features.py` on the first `TOP` candidates of
each case (the retrieval's own order): the late-interaction features, and the pair-reading score
of a logistic head over `pair_vector`, fitted per held-out operator on the other operators'
candidates (label: the candidate holds a relevant quote; nested for the case model's training
operators, so no operator's label reaches its own value). Each feature's case value is its
maximum over the first `TOP` candidates (also on the first candidate alone, `@1`).

Reports as JSON: each feature's AUC alone between answerable (expected `OK_TO_DRAFT`) and
unanswerable (expected `UNKNOWN`) e-mails, pooled and per operator; the AUC of the case
probability and of the best candidate's calibrated confidence with the stored features and with
each feature added to the case model (two of them also to the chunk model; the fits of
`bench/answerability_separation.py::held_out`, on the held-out operator); and the cost per
e-mail in ms of each feature family on every N-th case (cold caches: the question and its `TOP`
chunks; wall clock of this process, p50 / p95).
The computed features are saved next to the rows (`--features`, default ROWS.features.json) and
read back when that file exists. `KB_TORCH_THREADS=1`: with the cores shared, torch's default
two threads made the same run several times slower.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import date
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.linear_model import LogisticRegression

from bench.answerability_separation import CLASSES, GOLDEN, _auc, _by_case, auc_summary
from bench.pair_collect import TOP, collect, load, save
from kb_eval.answerability_fit import (
    Row,
    fit_answerability,
    fit_case_model,
    out_of_fold_scorers,
)
from kb_eval.cross_validation import load_case_sets, parse_golden_spec
from kb_eval.pair_features import (
    LATE_FEATURES,
    chunk_sentence_tokens,
    late_features,
    pair_vector,
    question_words,
)
from kb_retrieval.retrieval.answerability import FEATURE_NAMES
from kb_retrieval.retrieval.case_answerability import CASE_FEATURES

PAIR = "pair_head"
HEAD_C = 0.1


def _timed(fn: Callable[..., Any], *args: Any) -> tuple[Any, float]:
    start = time.perf_counter()
    value = fn(*args)
    return value, (time.perf_counter() - start) * 1000


def _cold() -> None:
    for cached in (question_words, chunk_sentence_tokens, pair_vector):
        cached.cache_clear()


def _late_all(question: str, texts: Sequence[str], idf: dict[str, float]) -> list[dict]:
    return [late_features(question, t, idf) for t in texts]


def _pairs_all(question: str, texts: Sequence[str]) -> list[np.ndarray]:
    return [pair_vector(question, t) for t in texts]


def compute(cases: dict[str, dict[str, Any]]) -> tuple[dict, dict]:
    """Per case: the late features of each of its first candidates and their pair vectors
    (caches kept across cases: a chunk is read once)."""
    late, pairs = {}, {}
    for done, case_id in enumerate(sorted(cases), 1):
        case = cases[case_id]
        question, texts = case["question"], case["texts"][:TOP]
        late[case_id] = _late_all(question, texts, case["idf"])
        pairs[case_id] = _pairs_all(question, texts)
        if done % 25 == 0:
            print(f"{done}/{len(cases)} cases", file=sys.stderr, flush=True)
    return late, pairs


def computed(cases: dict[str, dict[str, Any]], path: Path) -> tuple[dict, dict]:
    """`compute`, saved to `path` as JSON and read back from it when it exists."""
    if not path.exists():
        late, pairs = compute(cases)
        saved = {"late": late, "pairs": {k: [v.tolist() for v in p] for k, p in pairs.items()}}
        path.write_text(json.dumps(saved, sort_keys=True), encoding="utf-8")
    saved = json.loads(path.read_text(encoding="utf-8"))
    return saved["late"], {k: [np.array(v) for v in p] for k, p in saved["pairs"].items()}


def cost(cases: dict[str, dict[str, Any]], sample: int) -> dict[str, list[float]]:
    """Cold cost in ms of each family on every `sample`-th case (caches cleared before each)."""
    out: dict[str, list[float]] = {"late": [], "pair": []}
    for case_id in sorted(cases)[::sample]:
        case = cases[case_id]
        question, texts = case["question"], case["texts"][:TOP]
        _cold()
        out["late"].append(_timed(_late_all, question, texts, case["idf"])[1])
        _cold()
        out["pair"].append(_timed(_pairs_all, question, texts)[1])
    return out


def _percentiles(values: Sequence[float]) -> dict[str, float]:
    return {
        "p50": round(float(np.percentile(values, 50)), 1),
        "p95": round(float(np.percentile(values, 95)), 1),
    }


def _labels(rows: Sequence[Row]) -> dict[str, list[bool]]:
    """Per case, the labels of its first `TOP` candidates (retrieval order)."""
    return {k: [r.label for r in v[:TOP]] for k, v in _by_case(rows).items()}


def head_scores(
    pairs: dict[str, list[np.ndarray]], labels: dict[str, list[bool]], train: set[str]
) -> LogisticRegression | None:
    """The logistic head fitted on the candidates of the cases in `train`."""
    x = [v for k in sorted(train) for v in pairs[k]]
    y = [lab for k in sorted(train) for lab in labels.get(k, [])[: len(pairs[k])]]
    if len(set(y)) < 2:
        return None
    return LogisticRegression(C=HEAD_C, max_iter=2000).fit(np.array(x), np.array(y))


def _head_value(head: LogisticRegression | None, vectors: Sequence[np.ndarray]) -> float:
    if head is None or not vectors:
        return 0.0
    return float(head.predict_proba(np.array(vectors))[:, 1].max())


def with_case_values(rows: Sequence[Row], values: dict[str, dict[str, float]]) -> list[Row]:
    """`rows` with each case's values set on every one of its rows (a case-level feature)."""
    return [replace(r, features={**r.features, **values.get(r.case_id, {})}) for r in rows]


def univariate(values: dict[str, float], tenants: dict[str, str], expected: dict[str, str]):
    """AUC of one case value alone, pooled and per operator."""
    keys = [k for k in sorted(values) if expected[k] in CLASSES]
    out = {"pooled": _auc([expected[k] == "OK_TO_DRAFT" for k in keys], [values[k] for k in keys])}
    for tenant in sorted(set(tenants.values())):
        mine = [k for k in keys if tenants[k] == tenant]
        labels = [expected[k] == "OK_TO_DRAFT" for k in mine]
        out[tenant] = _auc(labels, [values[k] for k in mine])
    return out


def fold(
    rows: Sequence[Row], expected: dict[str, str], chunk: list[str], case: list[str], tenant: str
) -> tuple[list[bool], list[float], list[float]]:
    """`tenant`'s e-mails scored by the models fitted on the other operators, as
    `bench/answerability_separation.py::held_out` fits them: (answerable, case probability,
    best candidate's confidence)."""
    train = [r for r in rows if r.tenant_id != tenant]
    model = fit_answerability(train, "bench", names=chunk, ranker=False)
    model = model.model_copy(
        update={"case": fit_case_model(train, out_of_fold_scorers(train, chunk), "", case)}
    )
    labels, case_p, conf = [], [], []
    for case_id, case_rows in _by_case([r for r in rows if r.tenant_id == tenant]).items():
        if expected[case_id] not in CLASSES:
            continue
        features = [r.features for r in case_rows]
        scores = [model.score(f) for f in features]
        best = max(range(len(scores)), key=lambda i: (scores[i], -i))
        labels.append(expected[case_id] == "OK_TO_DRAFT")
        case_p.append(model.case_probability(features) or 0.0)
        conf.append(model.confidence(features[best]))
    return labels, case_p, conf


def held_out(
    rows_for: Callable[[str], Sequence[Row]],
    tenants: Sequence[str],
    expected: dict[str, str],
    chunk: list[str],
    case: list[str],
) -> dict:
    """Every operator held out (its rows from `rows_for(operator)`); AUCs pooled and per operator."""
    return auc_summary(
        {tenant: fold(rows_for(tenant), expected, chunk, case, tenant) for tenant in tenants}
    )


def pair_values(
    rows: Sequence[Row], pairs: dict[str, list[np.ndarray]], tenants: dict[str, str]
) -> tuple[dict[str, float], Callable[[str], list[Row]]]:
    """The head's held-out value per case, and per held-out operator the rows carrying nested
    values (each training operator's from a head fitted without it and the held-out one)."""
    labels = _labels(rows)
    by_tenant: dict[str, set[str]] = {}
    for case_id, tenant in tenants.items():
        by_tenant.setdefault(tenant, set()).add(case_id)
    everything = set(tenants)

    def values_without(excluded: set[str], cases: set[str]) -> dict[str, dict[str, float]]:
        head = head_scores(pairs, labels, everything - excluded)
        return {k: {PAIR: _head_value(head, pairs[k])} for k in cases}

    held = {}
    for mine in by_tenant.values():
        held.update({k: v[PAIR] for k, v in values_without(mine, mine).items()})

    def rows_for(tenant: str) -> list[Row]:
        values = values_without(by_tenant[tenant], by_tenant[tenant])
        for other, cases in by_tenant.items():
            if other != tenant:
                values.update(values_without(by_tenant[tenant] | cases, cases))
        return with_case_values(rows, values)

    return held, rows_for


def report(
    rows: Sequence[Row], cases: dict[str, dict[str, Any]], features: Path, sample: int = 5
) -> dict:
    """Every figure of the module docstring."""
    expected = {k: v["expected"] for k, v in cases.items()}
    tenants = {k: v["tenant_id"] for k, v in cases.items()}
    late, pairs = computed(cases, features)
    best3 = {
        k: {n: max((f[n] for f in v), default=0.0) for n in LATE_FEATURES} for k, v in late.items()
    }
    first = {k: {n: (v[0][n] if v else 0.0) for n in LATE_FEATURES} for k, v in late.items()}
    alone = {}
    for n in LATE_FEATURES:
        alone[n] = univariate({k: v[n] for k, v in best3.items()}, tenants, expected)
        alone[f"{n}@1"] = univariate({k: v[n] for k, v in first.items()}, tenants, expected)
    head_values, pair_rows = pair_values(rows, pairs, tenants)
    alone[PAIR] = univariate(head_values, tenants, expected)
    chunk, case = list(FEATURE_NAMES), list(CASE_FEATURES)
    late_rows = with_case_values(rows, best3)
    operators = sorted(set(tenants.values()))
    print("fitting", file=sys.stderr, flush=True)
    variants = {"stored": held_out(lambda _: rows, operators, expected, chunk, case)}
    for n in LATE_FEATURES:
        variants[f"+{n}"] = held_out(lambda _: late_rows, operators, expected, chunk, [*case, n])
    variants["+late_all"] = held_out(
        lambda _: late_rows, operators, expected, chunk, [*case, *LATE_FEATURES]
    )
    variants[f"+{PAIR}"] = held_out(pair_rows, operators, expected, chunk, [*case, PAIR])
    # The case value in the chunk model too: it moves the verdict's confidence (auc_confidence).
    for names in (["li_sentence_rare"], list(LATE_FEATURES)):
        label = "late_all" if len(names) > 1 else names[0]
        variants[f"+{label} (chunk and case)"] = held_out(
            lambda _: late_rows, operators, expected, [*chunk, *names], [*case, *names]
        )
    return {
        "cases": len(cases),
        "rows": len(rows),
        "top": TOP,
        "alone": alone,
        "case_model": variants,
        "cost_ms": {k: _percentiles(v) for k, v in cost(cases, sample).items()},
        "cost_sample": sample,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("golden", nargs="*", default=GOLDEN)
    parser.add_argument("--rows", type=Path, default=Path("pair_rows.json"))
    parser.add_argument("--reuse", action="store_true", help="read --rows instead of retrieving")
    parser.add_argument(
        "--features", type=Path, default=None, help="computed features (default: ROWS.features)"
    )
    parser.add_argument("--cost-sample", type=int, default=5, help="time every N-th case cold")
    args = parser.parse_args(argv)
    if not args.reuse:
        from kb_retrieval.retrieval.config import RetrievalConfig
        from kb_retrieval.service import open_knowledge_base

        sets = load_case_sets([parse_golden_spec(s, date(2026, 11, 22)) for s in args.golden])
        config = RetrievalConfig.from_env().model_copy(update={"cache_ttl_seconds": 0.0})
        kb = open_knowledge_base(config=config)
        kb.retriever.audit = False
        save(collect(kb, sets), args.rows)
    rows, cases = load(args.rows)
    features = args.features or args.rows.with_suffix(".features.json")
    print(json.dumps(report(rows, cases, features, args.cost_sample), indent=2, sort_keys=True))


if __name__ == "__main__":
    main()
