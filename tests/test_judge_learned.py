"""The learned claim judge: features, fit, leave-one-operator-out and the shipped model.

Every example here is written fresh for these tests (none is taken from a labelled pair file)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from kb_eval.judge.encoder import TextEncoder
from kb_eval.judge.evaluation import feature_matrix, operator_cv
from kb_eval.judge.features import FEATURE_NAMES, align, negated, pair_features
from kb_eval.judge.learned import MODEL_PATH, VETOES, LogisticJudge, fit, load_model
from kb_retrieval.embedding import FakeHashEmbedder


@pytest.fixture()
def fake_encoder() -> TextEncoder:
    return TextEncoder(FakeHashEmbedder())


def _feature(claim: str, evidence: str, name: str, encoder: TextEncoder) -> float:
    return float(pair_features(claim, [evidence], encoder)[FEATURE_NAMES.index(name)])


def test_negated_flips_the_polarity_of_a_sentence() -> None:
    assert negated("Dogs are welcome in the cabins.") == "dogs are not welcome in the cabins."
    assert "not" not in negated("Dogs are not welcome in the cabins.").split()
    assert negated("Kayaks leave from the north jetty.").startswith("It is not true that")


@pytest.mark.parametrize(
    ("claim", "evidence", "feature"),
    [
        (
            "A life jacket is optional on the river crossing.",
            "A life jacket is compulsory on the river crossing.",
            "opposed_require_advise",
        ),
        (
            "Bicycles are forbidden on the forest trail.",
            "Bicycles are allowed on the forest trail.",
            "opposed_permit_forbid",
        ),
        (
            "Snowshoe hire costs extra on the lake tour.",
            "Snowshoe hire is included on the lake tour.",
            "opposed_included_charged",
        ),
        (
            "We decide which cabin each family gets.",
            "Families choose their own cabin on arrival.",
            "opposed_operator_guest",
        ),
    ],
)
def test_opposed_modality_classes(
    claim: str, evidence: str, feature: str, fake_encoder: TextEncoder
) -> None:
    assert _feature(claim, evidence, feature, fake_encoder) == 1.0
    assert _feature(evidence, evidence, feature, fake_encoder) == 0.0


def test_quantity_features_by_unit_kind(fake_encoder: TextEncoder) -> None:
    evidence = "The canyon hike lasts 3 hours and costs EUR 40 per person."
    same = pair_features("The canyon hike takes 180 minutes.", [evidence], fake_encoder)
    other = pair_features("The canyon hike lasts four hours.", [evidence], fake_encoder)
    absent = pair_features("The canyon hike is 12 km long.", [evidence], fake_encoder)
    matched = FEATURE_NAMES.index("quantities_matched")
    differs = FEATURE_NAMES.index("quantity_same_kind_differs")
    missing = FEATURE_NAMES.index("quantity_kind_absent")
    assert (same[matched], same[differs], same[missing]) == (1.0, 0.0, 0.0)
    assert (other[matched], other[differs], other[missing]) == (0.0, 1.0, 0.0)
    assert (absent[matched], absent[differs], absent[missing]) == (0.0, 0.0, 1.0)


def test_features_of_a_claim_without_evidence(fake_encoder: TextEncoder) -> None:
    row = pair_features("Sledges are pulled by huskies.", [], fake_encoder)
    assert row.shape == (len(FEATURE_NAMES),)
    assert row[FEATURE_NAMES.index("coverage_all")] == 0.0
    assert row[FEATURE_NAMES.index("rule_supported")] == 0.0


def test_align_picks_the_sentence_about_the_claim(fake_encoder: TextEncoder) -> None:
    sentences = [
        "Breakfast is served from seven in the dining hut.",
        "The glacier walk needs crampons, which we lend to every guest.",
    ]
    aligned = align("Crampons for the glacier walk are lent to guests.", sentences, fake_encoder)
    assert aligned.sentence == sentences[1]
    assert aligned.overlap > 0.5


def _synthetic(seed: int, n: int = 90) -> tuple[np.ndarray, list[str], list[str]]:
    """Separable-but-noisy rows in FEATURE_NAMES' width: column 0 pushes supported, 1
    contradicted; three groups; no veto holds."""
    rng = np.random.default_rng(seed)
    labels = ["supported", "contradicted", "unrelated"] * (n // 3)
    features = rng.normal(size=(n, len(FEATURE_NAMES)))
    for row, label in enumerate(labels):
        features[row, 0] += 5.0 if label == "supported" else 0.0
        features[row, 1] += 5.0 if label == "contradicted" else 0.0
    features[:, list(VETOES)] = 0.0
    groups = [f"g{(row // 3) % 3}" for row in range(n)]
    return features, labels, groups


def test_fit_is_deterministic_and_its_threshold_limits_false_support() -> None:
    features, labels, groups = _synthetic(7)
    first, second = fit(features, labels, groups), fit(features, labels, groups)
    assert first.to_json() == second.to_json()
    assert 0.5 <= first.support_threshold <= 1.0 + 1e-6
    assert set(first.thresholds) == {0.01, 0.03, 0.05}
    with pytest.raises(ValueError, match="no support threshold"):
        first.decide(features, 0.2)
    decided = first.decide(features)
    unsupported = [d for d, label in zip(decided, labels, strict=True) if label != "supported"]
    assert unsupported.count("supported") <= 2
    assert decided.count("supported") >= 20


def test_model_json_round_trip_and_stale_features_are_refused(tmp_path: Path) -> None:
    features, labels, groups = _synthetic(11)
    model = fit(features, labels, groups)
    again = LogisticJudge.from_json(json.loads(json.dumps(model.to_json())))
    assert again.decide(features) == model.decide(features)
    stale = model.to_json() | {"features": ["only_one"]}
    path = tmp_path / "model.json"
    path.write_text(json.dumps(stale))
    with pytest.raises(ValueError, match="FEATURE_NAMES"):
        load_model(path)
    with pytest.raises(FileNotFoundError, match="--fit"):
        load_model(tmp_path / "missing.json")


def _pairs() -> list[dict[str, object]]:
    """Three invented operators, each with supported, contradicted and unrelated pairs."""
    rows: list[dict[str, object]] = []
    topics = {
        "fjord-kayak": ("kayak tour", "2 hours", "dry bags are provided"),
        "desert-camp": ("camel ride", "90 minutes", "sandboards are provided"),
        "island-dive": ("reef dive", "45 minutes", "wetsuits are provided"),
    }
    for operator, (trip, length, kit) in topics.items():
        evidence = [f"The {trip} lasts {length}. On the {trip}, {kit}."]
        claims = [
            (f"The {trip} lasts {length}.", "supported"),
            (f"On the {trip}, {kit}.", "supported"),
            (f"The {trip} lasts 5 hours.", "number_changed"),
            (f"On the {trip}, {kit.replace('are', 'are not')}.", "contradicted"),
            ("Parking at the harbour costs EUR 12 a day.", "unrelated"),
            ("The shop sells postcards and stamps.", "unrelated"),
        ]
        for number, (claim, label) in enumerate(claims):
            rows.append(
                {
                    "pair_id": f"{operator}-{number}",
                    "claim": claim,
                    "evidence": evidence,
                    "label": label,
                    "tenant_id": operator,
                }
            )
    return rows


def test_operator_cv_holds_out_each_operator(fake_encoder: TextEncoder) -> None:
    pairs = _pairs()
    result = operator_cv(pairs, fake_encoder)
    assert sorted(result["per_operator"]) == ["desert-camp", "fjord-kayak", "island-dive"]
    assert all(report["n"] == 6 for report in result["per_operator"].values())
    pooled = result["pooled"]
    assert pooled["n"] == 18
    assert sum(sum(row.values()) for row in pooled["confusion"].values()) == 18
    assert {p["n"] for p in result["operating_points"].values()} == {18}
    assert "argmax" in result["operating_points"]
    with pytest.raises(ValueError, match="two operators"):
        operator_cv([p for p in pairs if p["tenant_id"] == "desert-camp"], fake_encoder)


def test_kb_eval_judge_cv_operator_prints_each_held_out_operator(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from kb_pipeline.cli.app import app

    path = tmp_path / "pairs.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in _pairs()))
    args = ["eval-judge", str(path), "--cv", "operator", "--embedder", "fake-hash"]
    result = CliRunner().invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    assert set(json.loads(result.stdout)["per_operator"]) == {
        "desert-camp",
        "fjord-kayak",
        "island-dive",
    }
    table = CliRunner().invoke(app, args)
    assert "| fjord-kayak | 6 |" in table.stdout
    assert "pooled over the held-out folds: 18 pairs" in table.stdout
    assert CliRunner().invoke(app, [*args[:2], "--cv", "tenant"]).exit_code == 2


def test_shipped_model_on_fresh_pairs(minilm) -> None:
    """The shipped judge with the real MiniLM: deterministic, and right on clear fresh cases."""
    encoder = TextEncoder(minilm)
    evidence = [
        "Guided canoe trips start at 09:00 and last four hours. Paddles and buoyancy aids are "
        "included in the price. Children under 8 cannot join the canoe trips."
    ]
    pairs = [
        {"claim": "Canoe trips last 4 hours and begin at 9am.", "label": "supported"},
        {"claim": "Canoe trips last six hours.", "label": "contradicted"},
        {"claim": "The campsite shop sells firewood and ice.", "label": "unrelated"},
    ]
    rows = [p | {"pair_id": str(i), "evidence": evidence} for i, p in enumerate(pairs)]
    model = load_model(MODEL_PATH)
    first = model.probabilities(feature_matrix(rows, encoder))
    again = model.probabilities(feature_matrix(rows, TextEncoder(minilm)))
    assert np.allclose(first, again)
    assert model.decide(feature_matrix(rows, encoder))[1:] == ["contradicted", "unrelated"]
    assert first[0, 0] > first[2, 0]
