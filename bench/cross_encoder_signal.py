"""Does a MiniLM cross-encoder fine-tuned per held-out operator separate answerable e-mails?

    KB_HOME=... python -m bench.cross_encoder_signal [GOLDEN@AS_OF ...] [--scores PATH] [--reuse]

Leave one operator out over every operator of the golden sets (issue 12). Every case is retrieved
once with the answerability model fitted on all of them (`collect_rows`: the training rows and
their labels, a candidate holds a relevant quote). Per held-out operator:

- the answerability model is fitted on the other operators (as `kb eval --cv tenant` fits it) and
  each held-out case retrieved with it (`bench/verdict_calibration.py`'s capturing retriever);
- `kb_eval/cross_encoder.py` is fine-tuned on the other operators' pairs only: per case with
  relevant items its quote-holding candidates among the first `POSITIVE_DEPTH` and its first
  `NEGATIVES` other candidates, per case without relevant items its first `UNANSWERABLE`
  candidates (all negatives); the question is the prepared e-mail text, the passage the
  chunk's sentences closest to the direct query (`best_sentences`);
- the `K` most confident candidates of each held-out case are scored.

Reports as JSON: the wall time of the shared lower-layer pass and of each fold's training; chunk
AUC (holds a quote) of the score and of the held-out confidence on the same candidates; how many
answerable e-mails' best candidate holds a quote (by score, by confidence); case AUC between
answerable (expected `OK_TO_DRAFT`) and unanswerable (expected `UNKNOWN`) e-mails of the best
score over the `K` candidates (`ce_max`), of the most confident candidate's score (`ce_top`), of
the top confidence and of the case probability, and of logistic combinations fitted per fold on
the other operators' held-out values; pooled and per operator. Then the outcome: the retrieval's
last step (`Retriever._finish`) re-run with the confidence changed by each variant of
`gate_variants` (thresholds from the other operators' held-out values), pooled and per operator.
The scores are saved to `--scores`; `--reuse` reads them instead of training again (the folds
are retrieved again: the retrieval is deterministic).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.linear_model import LogisticRegression

from bench.answerability_separation import CLASSES, _auc, _by_case
from bench.pair_signal import univariate
from bench.verdict_calibration import GOLDEN, _clone, _figures, _Held, _retrieve, finish_with
from kb_eval.answerability_fit import Row, _Chunk, collect_rows, fit_answerability
from kb_eval.cross_encoder import (
    Pair,
    TrainConfig,
    best_sentences,
    encode_lower,
    frozen_layers,
    score,
    train,
)
from kb_eval.cross_validation import load_case_sets, parse_golden_spec
from kb_eval.metrics import CaseResult, is_covered
from kb_retrieval.retrieval.config import RetrievalConfig
from kb_retrieval.retrieval.retriever import Retriever
from kb_retrieval.service import open_knowledge_base

K = 5
POSITIVE_DEPTH = 10
NEGATIVES = 3
UNANSWERABLE = 4
BAND_LOW = 0.45
EPSILON = 1e-6
NO_SCORE = -30.0  # a case without candidates: below any pair's logit


@dataclass(frozen=True)
class _Text:
    """What the cross-encoder reads of one retrieval: the e-mail and the direct query."""

    question: str
    query: str


def _text_of(plan: Any) -> _Text:
    query = plan.variants[0].text if plan.variants else plan.normalized_text
    return _Text(plan.normalized_text, query)


class _Recorder:
    """A retriever that remembers, per retrieval, its texts and its candidates' texts."""

    def __init__(self, retriever: Retriever) -> None:
        self.retriever = retriever
        self.seen: list[tuple[_Text, list[str]]] = []

    def retrieve(self, tenant_id: str, email: Any, **kwargs: Any) -> Any:
        result = self.retriever.retrieve(tenant_id, email, **kwargs)
        self.seen.append((_text_of(result.plan), [c.text for c in result.candidates]))
        return result


def _pair(text: _Text, chunk: str) -> tuple[str, str]:
    return text.question, best_sentences(text.query, chunk)


def training_pairs(rows: Sequence[Row], texts: dict[str, tuple[_Text, list[str]]]) -> list[Pair]:
    """The pairs of `rows`' cases (module docstring), in case and rank order."""
    pairs = []
    for case_id, case_rows in sorted(_by_case(rows).items()):
        text, chunks = texts[case_id]
        if case_rows[0].case_answerable:
            chosen = [r for r in case_rows[:POSITIVE_DEPTH] if r.label]
            chosen += [r for r in case_rows if not r.label][:NEGATIVES]
        else:
            chosen = case_rows[:UNANSWERABLE]
        for row in sorted(chosen, key=lambda r: r.rank):
            question, passage = _pair(text, chunks[row.rank])
            pairs.append(Pair(question, passage, row.label))
    return pairs


@dataclass
class _Scored:
    """One held-out case: its `K` most confident candidates, their labels and scores."""

    held: _Held
    indices: list[int]
    labels: list[bool]
    pairs: list[tuple[str, str]]
    scores: list[float]


def _scored(held: _Held, with_pairs: bool = True) -> _Scored:
    """`held`'s `K` most confident candidates (their passages too when `with_pairs`)."""
    pool = held.args[2]
    order = sorted(range(len(pool)), key=lambda i: (-held.original[i], i))[:K]
    text = _text_of(held.args[1])
    labels = [
        any(
            is_covered(item, _Chunk(pool[i].version.doc_version_id, pool[i].text))
            for item in held.case.relevant
        )
        for i in order
    ]
    pairs = [_pair(text, pool[i].text) for i in order] if with_pairs else []
    return _Scored(held, order, labels, pairs, [])


def _logit(p: float) -> float:
    p = min(max(p, 1e-6), 1 - 1e-6)
    return math.log(p / (1 - p))


@dataclass(frozen=True)
class CaseValues:
    """The held-out values of one case that the variants read."""

    tenant: str
    expected: str
    top: float
    case_probability: float
    ce_max: float
    ce_top: float


def combination(train: Sequence[CaseValues], names: Sequence[str]) -> Callable[[CaseValues], float]:
    """A logistic of `names` (top/case_probability as log-odds, scores as they are) fitted on
    the answerable and unanswerable cases of `train`."""

    def vector(v: CaseValues) -> list[float]:
        return [
            _logit(getattr(v, n)) if n in ("top", "case_probability") else getattr(v, n)
            for n in names
        ]

    labelled = [v for v in train if v.expected in CLASSES]
    model = LogisticRegression(C=1.0, max_iter=2000).fit(
        np.array([vector(v) for v in labelled]),
        np.array([v.expected == "OK_TO_DRAFT" for v in labelled]),
    )
    return lambda v: float(model.predict_proba(np.array([vector(v)]))[0, 1])


Change = Callable[[CaseValues, list[float]], list[float]]


def gate_variants(
    train: Sequence[CaseValues], config: RetrievalConfig
) -> tuple[dict[str, Change], dict[str, float]]:
    """Confidence changes with thresholds from `train` (other operators' held-out values):
    `promote`: a case whose top confidence is in [`BAND_LOW`, draft line) and whose `ce_max` is
    above every training case's in that band that is not expected `OK_TO_DRAFT` gets its top
    candidate raised to the draft line; `demote`: a case at or above the unknown line whose
    `ce_max` is below every training answerable case's there gets every candidate under the
    unknown line; `both`; `combined`: the top candidate's confidence replaced by the logistic
    of top confidence and `ce_max` (not calibrated for the lines; the trade-off it gives)."""
    draft, unknown = config.low_confidence_threshold, config.unknown_threshold
    band = [v for v in train if BAND_LOW <= v.top < draft and v.expected != "OK_TO_DRAFT"]
    promote_at = max((v.ce_max for v in band), default=math.inf) + EPSILON
    above = [v for v in train if v.top >= unknown and v.expected == "OK_TO_DRAFT"]
    demote_at = min((v.ce_max for v in above), default=-math.inf) - EPSILON
    combined = combination(train, ["top", "ce_max"])

    def promote(v: CaseValues, conf: list[float]) -> list[float]:
        if not conf or not (BAND_LOW <= v.top < draft and v.ce_max >= promote_at):
            return conf
        top = max(range(len(conf)), key=lambda i: (conf[i], -i))
        return [draft if i == top else c for i, c in enumerate(conf)]

    def demote(v: CaseValues, conf: list[float]) -> list[float]:
        if not (v.top >= unknown and v.ce_max < demote_at):
            return conf
        return [min(c, unknown - EPSILON) for c in conf]

    def both(v: CaseValues, conf: list[float]) -> list[float]:
        return promote(v, demote(v, conf))

    def combine(v: CaseValues, conf: list[float]) -> list[float]:
        if not conf:
            return conf
        top = max(range(len(conf)), key=lambda i: (conf[i], -i))
        return [combined(v) if i == top else c for i, c in enumerate(conf)]

    variants: dict[str, Change] = {
        "identity": lambda _, conf: conf,
        "promote": promote,
        "demote": demote,
        "both": both,
        "combined": combine,
    }
    return variants, {"promote_at": promote_at, "demote_at": demote_at}


def _chunk_summary(scored: dict[str, list[_Scored]], expected: dict[str, str]) -> dict:
    out: dict[str, Any] = {"per_operator": {}}
    every: list[tuple[bool, float, float]] = []
    holds = {"score": 0, "confidence": 0, "answerable": 0}
    for tenant, cases in sorted(scored.items()):
        mine = [
            (lab, s, c.held.original[i])
            for c in cases
            for lab, s, i in zip(c.labels, c.scores, c.indices, strict=True)
        ]
        every += mine
        out["per_operator"][tenant] = {
            "auc_score": _auc([m[0] for m in mine], [m[1] for m in mine]),
            "auc_confidence": _auc([m[0] for m in mine], [m[2] for m in mine]),
        }
        for c in cases:
            if expected[c.held.case.case_id] == "OK_TO_DRAFT" and c.labels:
                holds["answerable"] += 1
                holds["confidence"] += c.labels[0]
                best = max(range(len(c.scores)), key=lambda i: (c.scores[i], -i))
                holds["score"] += c.labels[best]
    out["auc_score"] = _auc([m[0] for m in every], [m[1] for m in every])
    out["auc_confidence"] = _auc([m[0] for m in every], [m[2] for m in every])
    out["best_candidate_holds_quote"] = holds
    return out


def case_values(
    scored: dict[str, list[_Scored]], expected: dict[str, str]
) -> dict[str, CaseValues]:
    out = {}
    for tenant, cases in scored.items():
        for c in cases:
            case_id = c.held.case.case_id
            out[case_id] = CaseValues(
                tenant,
                expected[case_id],
                c.held.original[c.indices[0]] if c.indices else 0.0,
                c.held.case_probability,
                max(c.scores, default=NO_SCORE),
                c.scores[0] if c.scores else NO_SCORE,
            )
    return out


def _separation(values: dict[str, CaseValues]) -> dict[str, Any]:
    tenants = {k: v.tenant for k, v in values.items()}
    expected = {k: v.expected for k, v in values.items()}
    out = {
        name: univariate({k: getattr(v, name) for k, v in values.items()}, tenants, expected)
        for name in ("top", "case_probability", "ce_max", "ce_top")
    }
    for names in (["top", "ce_max"], ["top", "case_probability", "ce_max"]):
        held = {}
        for tenant in sorted(set(tenants.values())):
            fitted = combination([v for v in values.values() if v.tenant != tenant], names)
            held.update({k: fitted(v) for k, v in values.items() if v.tenant == tenant})
        out["+".join(names)] = univariate(held, tenants, expected)
    return out


def _fold_scores(
    folds: dict[str, tuple[list[Pair], list[_Scored]]], config: TrainConfig
) -> dict[str, Any]:
    """Train per fold and score its held-out cases in place; the wall times."""
    keys = sorted(
        {(p.question, p.passage) for pairs, _ in folds.values() for p in pairs}
        | {pair for _, cases in folds.values() for c in cases for pair in c.pairs}
    )
    start = time.perf_counter()
    states = dict(
        zip(keys, encode_lower(keys, frozen_layers(config), config.max_tokens), strict=True)
    )
    timing: dict[str, Any] = {"pairs": len(keys), "lower_s": round(time.perf_counter() - start, 1)}
    for tenant, (pairs, cases) in sorted(folds.items()):
        print(f"training without {tenant} on {len(pairs)} pairs", file=sys.stderr, flush=True)
        start = time.perf_counter()
        scorer = train(
            [states[(p.question, p.passage)] for p in pairs], [p.label for p in pairs], config
        )
        timing[f"train_s_{tenant}"] = round(time.perf_counter() - start, 1)
        timing[f"train_pairs_{tenant}"] = len(pairs)
        held_pairs = [pair for c in cases for pair in c.pairs]
        values = score(scorer, [states[p] for p in held_pairs]).tolist()
        for c in cases:
            c.scores, values = values[: len(c.pairs)], values[len(c.pairs) :]
    return timing


def measure(
    retriever: Retriever,
    specs: Sequence[tuple[Any, date]],
    scores_path: Path,
    reuse: bool,
    config: TrainConfig,
) -> dict[str, Any]:
    sets = load_case_sets(specs)
    dated = [(case, s.as_of) for s in sets for case in s.cases]
    expected = {case.case_id: case.expected_outcome.value for case, _ in dated}
    base = retriever.config.model_copy(update={"cache_ttl_seconds": 0.0})
    recorder = _Recorder(_clone(retriever, base))
    rows = collect_rows(recorder, dated)  # type: ignore[arg-type]
    texts = {case.case_id: seen for (case, _), seen in zip(dated, recorder.seen, strict=True)}
    tenants = sorted({case.tenant_id for case, _ in dated})
    folds: dict[str, tuple[list[Pair], list[_Scored]]] = {}
    retrievers: dict[str, Retriever] = {}
    for tenant in tenants:
        train_rows = [r for r in rows if r.tenant_id != tenant]
        model = fit_answerability(
            train_rows, fitted_on=f"all but {tenant}", ranker=base.learned_ranker
        )
        fold = _clone(retriever, base.model_copy(update={"answerability": model}))
        retrievers[tenant] = fold
        held = [_retrieve(fold, case, as_of) for case, as_of in dated if case.tenant_id == tenant]
        pairs = [] if reuse else training_pairs(train_rows, texts)
        folds[tenant] = (pairs, [_scored(h, not reuse) for h in held])
    if reuse:
        saved = json.loads(scores_path.read_text(encoding="utf-8"))
        timing = saved["timing"]
        for _, cases in folds.values():
            for c in cases:
                c.scores = saved["scores"][c.held.case.case_id]
    else:
        timing = _fold_scores(folds, config)
        saved = {
            "timing": timing,
            "scores": {c.held.case.case_id: c.scores for _, cases in folds.values() for c in cases},
        }
        scores_path.write_text(json.dumps(saved, sort_keys=True), encoding="utf-8")
    scored = {tenant: cases for tenant, (_, cases) in folds.items()}
    values = case_values(scored, expected)
    outcome: dict[str, dict[str, dict[str, CaseResult]]] = {}
    thresholds = {}
    for tenant in tenants:
        train_values = [v for v in values.values() if v.tenant != tenant]
        variants, thresholds[tenant] = gate_variants(train_values, base)
        for name, change in variants.items():
            results = outcome.setdefault(name, {}).setdefault(tenant, {})
            for c in scored[tenant]:
                v = values[c.held.case.case_id]
                changed = change(v, list(c.held.original))
                results[c.held.case.case_id] = finish_with(retrievers[tenant], c.held, changed)
    cases_by = {t: [c.held.case for c in scored[t]] for t in tenants}
    every = [case for t in tenants for case in cases_by[t]]
    report_outcome = {}
    for name, per in outcome.items():
        pooled = {k: r for results in per.values() for k, r in results.items()}
        report_outcome[name] = {
            "pooled": _figures(every, pooled),
            "per_operator": {t: _figures(cases_by[t], per[t]) for t in tenants},
        }
    return {
        "settings": {
            "k": K,
            "positive_depth": POSITIVE_DEPTH,
            "negatives": NEGATIVES,
            "unanswerable": UNANSWERABLE,
            "band_low": BAND_LOW,
            **config.__dict__,
        },
        "timing": timing,
        "chunk": _chunk_summary(scored, expected),
        "case_auc": _separation(values),
        "thresholds": thresholds,
        "outcome": report_outcome,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("golden", nargs="*", default=GOLDEN)
    parser.add_argument("--scores", type=Path, default=Path("cross_encoder_scores.json"))
    parser.add_argument("--reuse", action="store_true", help="read --scores instead of training")
    parser.add_argument("--epochs", type=int, default=TrainConfig.epochs)
    parser.add_argument("--trainable-layers", type=int, default=TrainConfig.trainable_layers)
    args = parser.parse_args(argv)
    config = TrainConfig(epochs=args.epochs, trainable_layers=args.trainable_layers)
    specs = [parse_golden_spec(spec, date(2026, 11, 15)) for spec in args.golden]
    kb = open_knowledge_base(config=RetrievalConfig.from_env())
    kb.retriever.audit = False
    report = measure(kb.retriever, specs, args.scores, args.reuse, config)
    print(json.dumps(report, indent=1, sort_keys=True))


if __name__ == "__main__":
    main()
