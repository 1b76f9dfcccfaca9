"""A small multinomial logistic model over the pair features (deterministic).

The model gives P(supported), P(contradicted), P(unrelated). "supported" is answered only when
its probability reaches a support threshold, chosen on out-of-fold probabilities of the
training groups so that at most a target share of the unsupported pairs would pass (one pair of
thresholds per target in TARGETS; MAX_FALSE_SUPPORT is the default); otherwise the likelier of
contradicted / unrelated, compared with a fitted log-odds bias (the out-of-fold choice that
labels the most unsupported training pairs right). The thresholds are class-specific: one for
the pairs the rule judge calls supported and one for the rest, chosen together so that the most
training pairs are judged supported within the target.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from kb_eval.judge.features import FEATURE_NAMES

RULE_SUPPORTED = FEATURE_NAMES.index("rule_supported")
VETOES = tuple(FEATURE_NAMES.index(name) for name in ("quantity_unstated", "bound_opposed"))
MIN_THRESHOLD = 0.5
BIAS_GRID = np.round(np.arange(-2.0, 2.01, 0.1), 2)
_EPSILON = 1e-9
Thresholds = tuple[float, float]

LABELS = ("supported", "contradicted", "unrelated")
REGULARISATION_C = 1.0
MAX_FALSE_SUPPORT = 0.01
TARGETS = (0.01, 0.03, 0.05)
MODEL_PATH = Path(__file__).with_name("judge_model.json")


def _softmax(scores: np.ndarray) -> np.ndarray:
    shifted = np.exp(scores - scores.max(axis=1, keepdims=True))
    return shifted / shifted.sum(axis=1, keepdims=True)


@dataclass(frozen=True)
class LogisticJudge:
    """Standardisation, weights (features x labels), bias and, per target share of unsupported
    pairs judged supported, the support thresholds (rule judge says supported, says otherwise)."""

    mean: np.ndarray
    scale: np.ndarray
    weights: np.ndarray
    bias: np.ndarray
    thresholds: dict[float, Thresholds]
    contradiction_bias: float = 0.0

    @property
    def support_threshold(self) -> Thresholds:
        return self.thresholds[MAX_FALSE_SUPPORT]

    def probabilities(self, features: np.ndarray) -> np.ndarray:
        return _softmax(((features - self.mean) / self.scale) @ self.weights + self.bias)

    def decide(self, features: np.ndarray, target: float = MAX_FALSE_SUPPORT) -> list[str]:
        """One label per row: supported only above the target's threshold, else the likelier
        other label."""
        if target not in self.thresholds:
            raise ValueError(f"no support threshold for {target}: choose one of {TARGETS}")
        return decide(
            support_probability_gated(self.probabilities(features), features),
            features[:, RULE_SUPPORTED] > 0.5,
            self.thresholds[target],
            self.contradiction_bias,
        )

    def to_json(self) -> dict[str, object]:
        return {
            "features": list(FEATURE_NAMES),
            "labels": list(LABELS),
            "mean": self.mean.round(6).tolist(),
            "scale": self.scale.round(6).tolist(),
            "weights": self.weights.round(6).tolist(),
            "bias": self.bias.round(6).tolist(),
            "contradiction_bias": round(self.contradiction_bias, 4),
            "support_thresholds": {
                f"{k:g}": [round(v, 4) for v in pair] for k, pair in self.thresholds.items()
            },
        }

    @classmethod
    def from_json(cls, data: dict[str, object], source: str = "model") -> LogisticJudge:
        if data.get("features") != list(FEATURE_NAMES):
            raise ValueError(f"{source}: features differ from this code's FEATURE_NAMES; refit")
        return cls(
            np.asarray(data["mean"], dtype=np.float64),
            np.asarray(data["scale"], dtype=np.float64),
            np.asarray(data["weights"], dtype=np.float64),
            np.asarray(data["bias"], dtype=np.float64),
            {
                float(k): (float(v[0]), float(v[1]))
                for k, v in data["support_thresholds"].items()  # type: ignore[attr-defined]
            },
            float(data.get("contradiction_bias", 0.0)),  # type: ignore[arg-type]
        )


def support_probability_gated(probabilities: np.ndarray, features: np.ndarray) -> np.ndarray:
    """The probabilities with P(supported) set to 0 where a veto holds: a claim quantity the
    evidence does not state, or a bound the evidence states the other way round (no threshold
    can make such a claim supported)."""
    gated = probabilities.copy()
    gated[(features[:, list(VETOES)] > 0.5).any(axis=1), 0] = 0.0
    return gated


def decide(
    probabilities: np.ndarray,
    rule_supported: np.ndarray,
    thresholds: Thresholds,
    contradiction_bias: float = 0.0,
) -> list[str]:
    """Supported when P(supported) reaches the threshold of the pair's rule verdict group; else
    contradicted when log P(contradicted) + bias >= log P(unrelated), otherwise unrelated."""
    labels = []
    for row, rule in zip(probabilities, rule_supported, strict=True):
        if row[0] >= thresholds[0 if rule else 1]:
            labels.append("supported")
        else:
            contradicted = np.log(row[1] + _EPSILON) + contradiction_bias
            labels.append(LABELS[1] if contradicted >= np.log(row[2] + _EPSILON) else LABELS[2])
    return labels


def _fit_weights(
    features: np.ndarray, targets: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """scikit-learn's L2 logistic regression (lbfgs, deterministic) on standardised features."""
    from sklearn.linear_model import LogisticRegression

    mean = features.mean(axis=0)
    scale = features.std(axis=0)
    scale[scale < 1e-9] = 1.0
    model = LogisticRegression(C=REGULARISATION_C, max_iter=5000)
    model.fit((features - mean) / scale, targets)
    if list(model.classes_) != list(range(len(LABELS))):
        raise ValueError(
            "training pairs must hold every label (supported, contradicted, unrelated)"
        )
    return mean, scale, model.coef_.T.copy(), model.intercept_.copy()


def _threshold(
    probabilities: np.ndarray,
    targets: np.ndarray,
    rule_supported: np.ndarray,
    max_false_support: float,
) -> Thresholds:
    """The pair of P(supported) lines (rule says supported, says otherwise) that lets the most
    supported pairs pass while at most max_false_support of the unsupported pairs do."""
    p = probabilities[:, 0]
    unsupported = targets != 0
    allowed = int(np.floor(max_false_support * unsupported.sum()))
    never = 1.0 + 1e-6
    candidates = sorted({round(float(v), 6) for v in p[rule_supported]} | {never})
    best: tuple[int, Thresholds] | None = None
    for first in (max(MIN_THRESHOLD, c) for c in candidates):
        passed = p >= first
        spent = int((passed & rule_supported & unsupported).sum())
        if spent > allowed:
            continue
        rest = np.sort(p[~rule_supported & unsupported])[::-1]
        left = allowed - spent
        second = max(MIN_THRESHOLD, float(rest[left]) + 1e-6) if len(rest) > left else MIN_THRESHOLD
        gained = int((passed & rule_supported & ~unsupported).sum())
        gained += int(((p >= second) & ~rule_supported & ~unsupported).sum())
        if best is None or gained > best[0]:
            best = (gained, (first, second))
    return best[1] if best else (never, never)


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
    targets = np.asarray([LABELS.index(_judge_label(label)) for label in labels])
    names = sorted(set(groups))
    out_of_fold = np.zeros((len(targets), len(LABELS)))
    for name in names:
        held = np.asarray([g == name for g in groups])
        if held.all():
            break
        mean, scale, weights, bias = _fit_weights(features[~held], targets[~held])
        out_of_fold[held] = _softmax(((features[held] - mean) / scale) @ weights + bias)
    rule_supported = features[:, RULE_SUPPORTED] > 0.5
    gated = support_probability_gated(out_of_fold, features)
    thresholds = {
        target: _threshold(gated, targets, rule_supported, target)
        if len(names) > 1
        else (MIN_THRESHOLD, MIN_THRESHOLD)
        for target in TARGETS
    }
    mean, scale, weights, bias = _fit_weights(features, targets)
    contradiction_bias = _contradiction_bias(out_of_fold, targets) if len(names) > 1 else 0.0
    return LogisticJudge(mean, scale, weights, bias, thresholds, contradiction_bias)


def _judge_label(label: str) -> str:
    return "contradicted" if label == "number_changed" else label


def load_model(path: Path = MODEL_PATH) -> LogisticJudge:
    """The shipped model (fitted by `kb eval-judge --fit`)."""
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no fitted judge model; run kb eval-judge --fit")
    return LogisticJudge.from_json(json.loads(path.read_text(encoding="utf-8")), str(path))
