"""A small multinomial logistic model over the pair features (deterministic).

The model is fitted over four classes, a changed number apart from other contradictions (the
numbers' features then do not stand for "contradicted" as a whole), and gives P(supported),
P(contradicted) (with a changed number), P(unrelated). A veto (a claim quantity the evidence
does not state, a bound stated the other way round, an opposed modality class in the aligned
clause) sets P(supported) to 0. "supported" is answered only when
its probability reaches a support threshold, chosen on out-of-fold probabilities of the
training groups so that at most a target share of the unsupported pairs would pass (one pair of
thresholds per target in TARGETS; MAX_FALSE_SUPPORT is the default); otherwise the likelier of
contradicted / unrelated, compared with a fitted log-odds bias (the out-of-fold choice that
labels the most unsupported training pairs right). One threshold per target for every pair
(session 6 had one for the pairs the rule judge calls supported and one for the rest; chosen on
two or three out-of-fold pairs each, the pair of lines let more false support through held out).
Standardised features are clipped to +-Z_LIMIT; the drift columns (GATE_ONLY) are blanked before
fitting and read only by the gate.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from kb_eval.judge.drift import DRIFT_FEATURES
from kb_eval.judge.features import FEATURE_NAMES

VETOES = tuple(
    FEATURE_NAMES.index(name)
    for name in (
        "quantity_unstated",
        "bound_opposed",
        "bound_clause_opposed",
        "clause_opposed",
        "conjunct_novel",
        "condition_lifted",
        "rate_basis_differs",
        "condition_lifted_elsewhere",
        "reason_antonym",
    )
)
_OPPOSED_ON_SUBJECT = FEATURE_NAMES.index("opposed_on_subject")
_RULE_CONTRADICTED = FEATURE_NAMES.index("rule_contradicted")
# Read only by the gate, never fitted: "about another thing" decides between contradicted and
# unrelated by rule (a contradiction needs the same subject), not by a weight.
GATE_ONLY = tuple(FEATURE_NAMES.index(name) for name in DRIFT_FEATURES)
MIN_THRESHOLD = 0.5
Z_LIMIT = 5.0
BIAS_GRID = np.round(np.arange(-2.0, 2.01, 0.1), 2)
_EPSILON = 1e-9

LABELS = ("supported", "contradicted", "unrelated")
CLASSES = (*LABELS, "number_changed")
_ABSENT_BIAS = -50.0
REGULARISATION_C = 1.0
MAX_FALSE_SUPPORT = 0.01
TARGETS = (0.01, 0.03, 0.05)
MODEL_PATH = Path(__file__).with_name("judge_model.json")


def standardise(features: np.ndarray, mean: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """Standardised features, clipped to +-Z_LIMIT: a feature that fires on a handful of
    training pairs has a tiny spread, and unclipped its value on a held-out pair would outweigh
    every other feature."""
    return np.clip((features - mean) / scale, -Z_LIMIT, Z_LIMIT)


def _softmax(scores: np.ndarray) -> np.ndarray:
    shifted = np.exp(scores - scores.max(axis=1, keepdims=True))
    return shifted / shifted.sum(axis=1, keepdims=True)


def _judged(scores: np.ndarray) -> np.ndarray:
    """P over LABELS from scores over CLASSES: a changed number is a contradiction."""
    p = _softmax(scores)
    return np.column_stack([p[:, 0], p[:, 1] + p[:, 3], p[:, 2]])


@dataclass(frozen=True)
class LogisticJudge:
    """Standardisation, weights (features x labels), bias and, per target share of unsupported
    pairs judged supported, the support threshold."""

    mean: np.ndarray
    scale: np.ndarray
    weights: np.ndarray
    bias: np.ndarray
    thresholds: dict[float, float]
    contradiction_bias: float = 0.0

    @property
    def support_threshold(self) -> float:
        return self.thresholds[MAX_FALSE_SUPPORT]

    def probabilities(self, features: np.ndarray) -> np.ndarray:
        return _judged(standardise(features, self.mean, self.scale) @ self.weights + self.bias)

    def decide(self, features: np.ndarray, target: float = MAX_FALSE_SUPPORT) -> list[str]:
        """One label per row: supported only above the target's threshold, else the likelier
        other label."""
        if target not in self.thresholds:
            raise ValueError(f"no support threshold for {target}: choose one of {TARGETS}")
        return decide(
            support_probability_gated(self.probabilities(features), features),
            self.thresholds[target],
            self.contradiction_bias,
        )

    def to_json(self) -> dict[str, object]:
        return {
            "features": list(FEATURE_NAMES),
            "labels": list(CLASSES),
            "mean": self.mean.round(6).tolist(),
            "scale": self.scale.round(6).tolist(),
            "weights": self.weights.round(6).tolist(),
            "bias": self.bias.round(6).tolist(),
            "contradiction_bias": round(self.contradiction_bias, 4),
            "support_thresholds": {f"{k:g}": round(v, 4) for k, v in self.thresholds.items()},
        }

    @classmethod
    def from_json(cls, data: dict[str, object], source: str = "model") -> LogisticJudge:
        if data.get("features") != list(FEATURE_NAMES):
            raise ValueError(f"{source}: features differ from this code's FEATURE_NAMES; refit")
        if data.get("labels") != list(CLASSES):
            raise ValueError(f"{source}: classes differ from this code's CLASSES; refit")
        return cls(
            np.asarray(data["mean"], dtype=np.float64),
            np.asarray(data["scale"], dtype=np.float64),
            np.asarray(data["weights"], dtype=np.float64),
            np.asarray(data["bias"], dtype=np.float64),
            {
                float(k): float(v)
                for k, v in data["support_thresholds"].items()  # type: ignore[attr-defined]
            },
            float(data.get("contradiction_bias", 0.0)),  # type: ignore[arg-type]
        )


def support_probability_gated(probabilities: np.ndarray, features: np.ndarray) -> np.ndarray:
    """The probabilities with P(supported) set to 0 where a veto holds: a claim quantity the
    evidence does not state, a bound the evidence states the other way round, a claim in one
    class of an opposed pair whose aligned clause is in the other, or a piece of the claim the
    evidence never mentions (no threshold can make such a claim supported). Where the opposed
    class is on the claim's whole subject ("kayak hire is free" against "kayak hire costs EUR 12
    an hour"), P(unrelated) is set to 0 too: the evidence speaks of the same thing and says
    otherwise. Where the claim's subject or case is one the evidence never names (drift.py) and
    neither that opposition nor the rule judge says contradicted, P(contradicted) is set to 0:
    a claim about another thing is unrelated."""
    gated = probabilities.copy()
    gated[(features[:, list(VETOES)] > 0.5).any(axis=1), 0] = 0.0
    on_subject = features[:, _OPPOSED_ON_SUBJECT] >= 1.0 - 1e-9
    gated[on_subject, 2] = 0.0
    elsewhere = (features[:, list(GATE_ONLY)] > 0).any(axis=1)
    gated[elsewhere & ~on_subject & (features[:, _RULE_CONTRADICTED] < 0.5), 1] = 0.0
    return gated


def decide(
    probabilities: np.ndarray,
    threshold: float,
    contradiction_bias: float = 0.0,
) -> list[str]:
    """Supported when P(supported) reaches the threshold; else contradicted when
    log P(contradicted) + bias >= log P(unrelated), otherwise unrelated."""
    labels = []
    for row in probabilities:
        if row[0] >= threshold:
            labels.append("supported")
        else:
            contradicted = np.log(row[1] + _EPSILON) + contradiction_bias
            labels.append(LABELS[1] if contradicted >= np.log(row[2] + _EPSILON) else LABELS[2])
    return labels


def _fit_weights(
    features: np.ndarray, targets: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """scikit-learn's L2 logistic regression (lbfgs, deterministic) on standardised features,
    over CLASSES (a class absent from the rows gets no weight and a very low bias)."""
    from sklearn.linear_model import LogisticRegression

    features = features.copy()
    features[:, list(GATE_ONLY)] = 0.0
    mean = features.mean(axis=0)
    scale = features.std(axis=0)
    scale[scale < 1e-9] = 1.0
    model = LogisticRegression(C=REGULARISATION_C, max_iter=5000)
    model.fit(standardise(features, mean, scale), targets)
    present = [int(c) for c in model.classes_]
    if not set(range(len(LABELS))) <= set(present):
        raise ValueError(
            "training pairs must hold every label (supported, contradicted, unrelated)"
        )
    weights = np.zeros((features.shape[1], len(CLASSES)))
    bias = np.full(len(CLASSES), _ABSENT_BIAS)
    weights[:, present] = model.coef_.T
    bias[present] = model.intercept_
    return mean, scale, weights, bias


def _threshold(probabilities: np.ndarray, targets: np.ndarray, max_false_support: float) -> float:
    """The lowest P(supported) line that at most max_false_support of the unsupported pairs
    reach (never under MIN_THRESHOLD)."""
    unsupported = np.sort(probabilities[targets != 0, 0])[::-1]
    allowed = int(np.floor(max_false_support * len(unsupported)))
    if len(unsupported) <= allowed:
        return MIN_THRESHOLD
    return max(MIN_THRESHOLD, round(float(unsupported[allowed]), 6) + 1e-6)


def _contradiction_bias(probabilities: np.ndarray, targets: np.ndarray) -> float:
    """The log-odds bias (BIAS_GRID) that labels the most unsupported rows right, contradicted
    against unrelated; ties go to the smallest bias."""
    rows = probabilities[targets != 0]
    truth = targets[targets != 0]
    odds = np.log(rows[:, 1] + _EPSILON) - np.log(rows[:, 2] + _EPSILON)
    scored = [(int(((odds + b >= 0) == (truth == 1)).sum()), -abs(b), -b) for b in BIAS_GRID]
    return float(-max(scored)[2])


def fit(features: np.ndarray, labels: Sequence[str], groups: Sequence[str]) -> LogisticJudge:
    """Fit on labelled rows; the thresholds come from leave-one-group-out probabilities."""
    classes = np.asarray([CLASSES.index(label) for label in labels])
    targets = np.asarray([LABELS.index(_judge_label(label)) for label in labels])
    names = sorted(set(groups))
    out_of_fold = np.zeros((len(targets), len(LABELS)))
    for name in names:
        held = np.asarray([g == name for g in groups])
        if held.all():
            break
        mean, scale, weights, bias = _fit_weights(features[~held], classes[~held])
        out_of_fold[held] = _judged(standardise(features[held], mean, scale) @ weights + bias)
    gated = support_probability_gated(out_of_fold, features)
    thresholds = {
        target: _threshold(gated, targets, target) if len(names) > 1 else MIN_THRESHOLD
        for target in TARGETS
    }
    mean, scale, weights, bias = _fit_weights(features, classes)
    contradiction_bias = _contradiction_bias(out_of_fold, targets) if len(names) > 1 else 0.0
    return LogisticJudge(mean, scale, weights, bias, thresholds, contradiction_bias)


def _judge_label(label: str) -> str:
    return "contradicted" if label == "number_changed" else label


def load_model(path: Path = MODEL_PATH) -> LogisticJudge:
    """The shipped model (fitted by `kb eval-judge --fit`)."""
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no fitted judge model; run kb eval-judge --fit")
    return LogisticJudge.from_json(json.loads(path.read_text(encoding="utf-8")), str(path))
