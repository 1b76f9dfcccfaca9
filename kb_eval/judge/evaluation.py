"""Reports of a judge on labelled pairs: the learned judge, its fit and leave-one-operator-out."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from kb_eval.judge.claim_judge import judge_claim
from kb_eval.judge.encoder import TextEncoder
from kb_eval.judge.features import pair_features, prefetch_pairs
from kb_eval.judge.learned import (
    MAX_FALSE_SUPPORT,
    MODEL_PATH,
    TARGETS,
    LogisticJudge,
    fit,
    load_model,
    support_probability_gated,
)
from kb_eval.judge.scoring import LABELS, report

Pair = dict[str, object]


def _evidence(pair: Pair) -> list[str]:
    return [str(text) for text in pair["evidence"]]  # type: ignore[attr-defined]


def feature_matrix(pairs: Sequence[Pair], encoder: TextEncoder) -> np.ndarray:
    """One feature row per pair (every text embedded once, in one batch)."""
    prefetch_pairs([(str(p["claim"]), _evidence(p)) for p in pairs], encoder)
    rows = [pair_features(str(p["claim"]), _evidence(p), encoder) for p in pairs]
    return np.stack(rows) if rows else np.zeros((0, 0))


def group_of(pair: Pair) -> str:
    """The fitting group of a pair: its operator, else its own split ("own-dev", "own-holdout")."""
    if "tenant_id" in pair:
        return str(pair["tenant_id"])
    return f"own-{pair.get('split', 'all')}"


def _decisions(
    model: LogisticJudge, features: np.ndarray, target: float = MAX_FALSE_SUPPORT
) -> tuple[list[str], list[str]]:
    probabilities = model.probabilities(features)
    labels = model.decide(features, target)
    reasons = [
        "p(supported/contradicted/unrelated) = " + "/".join(f"{p:.2f}" for p in row)
        for row in probabilities
    ]
    return labels, reasons


def rules_report(pairs: Sequence[Pair]) -> Pair:
    """The rule judge (judge_claim) on labelled pairs."""
    verdicts = [judge_claim(str(p["claim"]), _evidence(p)) for p in pairs]
    return report(pairs, [v.label for v in verdicts], [v.reason for v in verdicts])


def learned_report(
    pairs: Sequence[Pair],
    encoder: TextEncoder,
    target: float = MAX_FALSE_SUPPORT,
    model_path: Path = MODEL_PATH,
) -> Pair:
    """The shipped learned judge on labelled pairs (figures on its own training pairs flatter)."""
    model = load_model(model_path)
    labels, reasons = _decisions(model, feature_matrix(pairs, encoder), target)
    return report(pairs, labels, reasons)


def fit_model(
    pairs: Sequence[Pair], encoder: TextEncoder, path: Path = MODEL_PATH
) -> LogisticJudge:
    """Fit the learned judge on every pair and write it to `path` (sorted JSON)."""
    features = feature_matrix(pairs, encoder)
    model = fit(features, [str(p["label"]) for p in pairs], [group_of(p) for p in pairs])
    path.write_text(json.dumps(model.to_json(), indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return model


def _held_out(
    pairs: Sequence[Pair], features: np.ndarray, names: Sequence[str]
) -> tuple[dict[str, Pair], Pair, Pair]:
    """Fit without each fitting group in turn and judge it: per group, the pooled report at the
    default target, and the pooled reports at every target and without a threshold."""
    labels = [str(p["label"]) for p in pairs]
    groups = [group_of(p) for p in pairs]
    held_pairs: list[Pair] = []
    decided: dict[str, list[str]] = {}
    reasons: list[str] = []
    per_group: dict[str, Pair] = {}
    for name in names:
        held = np.asarray([g == name for g in groups])
        train = np.flatnonzero(~held)
        subset = [p for p, h in zip(pairs, held, strict=True) if h]
        held_pairs += subset
        model = fit(features[train], [labels[i] for i in train], [groups[i] for i in train])
        chosen, why = _decisions(model, features[held])
        reasons += why
        per_group[name] = report(subset, chosen, why) | {
            "support_threshold": round(model.support_threshold, 4)
        }
        for target in TARGETS:
            decided.setdefault(f"max_false_support_{target:g}", []).extend(
                model.decide(features[held], target)
            )
        argmax = support_probability_gated(
            model.probabilities(features[held]), features[held]
        ).argmax(axis=1)
        decided.setdefault("argmax", []).extend(LABELS[int(i)] for i in argmax)
    points = {name: report(held_pairs, chosen, reasons) for name, chosen in decided.items()}
    for point in points.values():
        point.pop("errors")
    default = f"max_false_support_{MAX_FALSE_SUPPORT:g}"
    return per_group, report(held_pairs, decided[default], reasons), points


def operator_cv(pairs: Sequence[Pair], encoder: TextEncoder) -> Pair:
    """Leave one operator out: for each operator (tenant_id), fit on every other pair and judge
    the held-out operator's pairs; per operator and pooled over the held-out predictions.
    "pooled" uses the default false-support target; "operating_points" pools the same folds at
    every target and without a threshold. Pairs without an operator (data/judge) are held out
    the same way by their own split ("own-dev", "own-holdout"), reported apart under "own"."""
    operators = sorted({str(p["tenant_id"]) for p in pairs if "tenant_id" in p})
    if len(operators) < 2:
        raise ValueError("--cv operator needs pairs of at least two operators (tenant_id)")
    features = feature_matrix(pairs, encoder)
    per_operator, pooled, points = _held_out(pairs, features, operators)
    result: Pair = {"per_operator": per_operator, "pooled": pooled, "operating_points": points}
    own = sorted({group_of(p) for p in pairs if "tenant_id" not in p})
    if len(own) > 1:
        per_split, own_pooled, own_points = _held_out(pairs, features, own)
        result["own"] = {
            "per_split": per_split,
            "pooled": own_pooled,
            "operating_points": own_points,
        }
    return result
