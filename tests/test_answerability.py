"""The answerability model, its fit and the leave-one-operator-out protocol (fresh examples only)."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import numpy as np
import pytest

from kb_eval.answerability_fit import (
    Row,
    fit_answerability,
    fit_calibration,
    fit_case_model,
    fit_chunk_model,
    out_of_fold_scorers,
)
from kb_eval.cross_validation import (
    CaseSet,
    cross_validate,
    format_cv_table,
    load_case_sets,
    parse_golden_spec,
)
from kb_eval.golden import load_golden
from kb_retrieval.models import Category
from kb_retrieval.query.answer_type import answer_type_match, asked_kinds, stated_kinds
from kb_retrieval.retrieval.answerability import (
    FEATURE_NAMES,
    AnswerabilityModel,
    add_gap_features,
    add_query_term_features,
    answer_features,
    default_model,
    pack_confidences,
)
from kb_retrieval.retrieval.case_answerability import (
    CASE_FEATURES,
    CaseAnswerabilityModel,
    case_features,
)
from tests.conftest import GOLDEN


@pytest.mark.parametrize(
    ("question", "kinds"),
    [
        ("What would the harbour transfer cost for four people?", {"currency"}),
        ("How long is the boat crossing to the island?", {"duration"}),
        ("What time should we be at the pier on the first morning?", {"time_of_day"}),
        ("How old does my nephew have to be to join the glacier walk?", {"age"}),
        ("Is there a limit on how heavy our duffel bags can be?", {"weight"}),
        ("Can we bring our own wetsuits?", set()),
    ],
)
def test_asked_kinds_reads_general_question_forms(question, kinds):
    assert asked_kinds(question) == frozenset(kinds)


def test_answer_type_match_compares_asked_and_stated_kinds():
    stated = stated_kinds("The harbour transfer is EUR 45 per person and takes 40 minutes.")
    assert {"currency", "duration"} <= stated
    assert answer_type_match(frozenset({"duration"}), stated) == 1.0
    assert answer_type_match(frozenset({"age"}), stated) == 0.0
    assert answer_type_match(frozenset(), stated) is None
    # A question about money is answered by a percentage too (a share of the price).
    assert answer_type_match(frozenset({"currency"}), stated_kinds("a 20% surcharge")) == 1.0


def _features(**overrides: float) -> dict[str, float]:
    base = answer_features(
        sims=[0.5, 0.6],
        sentence_sims=[],
        coverages=[0.4, 0.7],
        bm25s=[4.0, 8.0],
        passages=[0.3, 0.5],
        asked=frozenset({"duration"}),
        text="Check-in closes 30 minutes before the ferry leaves.",
        category=Category.FAQ,
        seen=2,
        variants=3,
        lexical_top1=False,
    )
    return {**base, **overrides}


def test_features_take_every_variant_and_the_category():
    features = _features()
    assert features["vector_direct"] == 0.5 and features["vector_best"] == 0.6
    assert features["coverage_best"] == 0.7 and features["bm25_best"] == 0.5
    assert features["type_match"] == 1.0 and features["type_miss"] == 0.0
    assert features["faq"] == 1.0 and features["high_precedence"] == 0.0
    assert features["seen_share"] == pytest.approx(2 / 3)
    assert set(features) <= set(FEATURE_NAMES)


def test_gap_and_query_term_features_are_relative_to_the_same_retrieval():
    pool = [_features(vector_best=0.7), _features(vector_best=0.5)]
    add_gap_features(pool)
    assert pool[0]["vector_gap"] == 0.0 and pool[1]["vector_gap"] == pytest.approx(0.2)
    terms = [{"ferri": 1, "checkin": 2}, {"ferri": 1}]
    idf = {"ferri": 1.0, "checkin": 2.0, "kayak": 3.0}
    add_query_term_features(pool, terms, ["ferri", "checkin", "kayak"], idf)
    assert pool[0]["pool_absent_share"] == pytest.approx(0.5)  # "kayak": in no candidate
    assert pool[0]["key_terms_missing"] == 0.0 and pool[1]["key_terms_missing"] == 0.5


def test_a_stronger_match_never_lowers_the_stored_models_probability():
    model = default_model()
    weak, strong = _features(), _features(vector_direct=0.8, passage_direct=0.9)
    assert model.probability(strong) >= model.probability(weak)
    assert 0.0 < model.confidence(weak) < 1.0


def _rows(rng: np.random.Generator, tenant: str, cases: int) -> list[Row]:
    rows = []
    for case in range(cases):
        answerable = case % 3 != 0
        for rank in range(8):
            label = answerable and rank == 0
            strength = rng.normal(0.75 if label else 0.35, 0.1)
            features = {"vector_direct": strength, "faq": float(rank % 2)}
            rows.append(Row(tenant, f"{tenant}-{case}", rank, features, label, label, answerable))
    return rows


def test_fit_separates_answers_and_keeps_match_weights_non_negative():
    rng = np.random.default_rng(7)
    rows = _rows(rng, "a", 40) + _rows(rng, "b", 40)
    model = fit_answerability(rows, "synthetic", names=("vector_direct", "faq", "coverage_direct"))
    assert model.weights["vector_direct"] > 0
    assert model.weights.get("coverage_direct", 0.0) >= 0
    answer = model.probability({"vector_direct": 0.75})
    other = model.probability({"vector_direct": 0.35})
    assert answer > 0.5 > other
    # Calibrated on each case's best candidate: answerable in two cases of three.
    _bias, b = fit_calibration(rows, model, "answerable")
    assert b > 0
    with pytest.raises(ValueError, match="calibration label"):
        fit_calibration(rows, model, "made-up")


def test_the_case_model_is_fitted_on_whether_a_case_is_answered():
    rng = np.random.default_rng(11)
    rows = _rows(rng, "a", 60) + _rows(rng, "b", 60)
    chunk = fit_answerability(rows, "synthetic", names=("vector_direct", "faq"))
    assert chunk.case is not None and set(chunk.case.weights) == set(CASE_FEATURES)
    case = fit_case_model(rows, chunk, "synthetic", names=("chunk_logit", "second"))
    assert case.weights["chunk_logit"] > 0
    answered = [{"vector_direct": 0.8}, {"vector_direct": 0.3}]
    unanswered = [{"vector_direct": 0.35}, {"vector_direct": 0.3}]
    assert case.probability(answered, chunk) > 0.65 > case.probability(unanswered, chunk)
    # Fitted on two answered cases in three: the mean probability is near the base rate.
    by_case: dict[str, list[dict[str, float]]] = {}
    for row in rows:
        by_case.setdefault(row.case_id, []).append(row.features)
    mean = np.mean([case.probability(pool, chunk) for pool in by_case.values()])
    assert abs(mean - 2 / 3) < 0.05


def test_calibration_and_case_model_are_fitted_on_out_of_fold_scores():
    rng = np.random.default_rng(5)
    names = ("vector_direct", "faq")
    rows = _rows(rng, "a", 30) + _rows(rng, "b", 30) + _rows(rng, "c", 30)
    scorers = out_of_fold_scorers(rows, names)
    assert sorted(scorers) == ["a", "b", "c"]
    for tenant, scorer in scorers.items():
        others = fit_chunk_model([r for r in rows if r.tenant_id != tenant], names)
        assert scorer.weights == others.weights and scorer.bias == others.bias
    nested = fit_answerability(rows, "synthetic", names=names)
    in_sample = fit_answerability(rows, "synthetic", names=names, nested=False)
    assert nested.weights == in_sample.weights  # the chunk model itself sees every row
    assert (nested.calibration_bias, nested.calibration_slope) == fit_calibration(rows, scorers)
    assert nested.case == fit_case_model(rows, scorers, "synthetic")
    assert in_sample.case == fit_case_model(rows, in_sample, "synthetic")
    assert nested.case != in_sample.case
    # One operator: nothing to hold out, its own model scores it.
    single = out_of_fold_scorers(_rows(rng, "a", 20), names)
    assert list(single) == ["a"]


def test_case_features_take_any_named_chunk_feature_and_an_empty_pool():
    model = AnswerabilityModel(bias=0.0, weights={"vector_direct": 2.0})
    pool = [
        {"vector_direct": 0.2, "sentence_best": 0.4},
        {"vector_direct": 0.9, "sentence_best": 0.7, "faq": 1.0},
        {"vector_direct": 0.5},
    ]
    features = case_features(pool, model, ("chunk_logit", "second", "support3", "sentence_best"))
    assert features["chunk_logit"] == pytest.approx(1.8)
    assert features["sentence_best"] == 0.7  # the best candidate's own feature, by name
    assert features["second"] == pytest.approx(1 / (1 + np.exp(-1.0)))
    assert features["support3"] == pytest.approx(1 / (1 + np.exp(-1.0)) + 1 / (1 + np.exp(-0.4)))
    assert case_features([], model, ("chunk_logit", "faq")) == {"chunk_logit": 0.0, "faq": 0.0}
    case = CaseAnswerabilityModel(bias=3.0, weights={"chunk_logit": 1.0})
    assert case.probability(pool, model) > 0.65
    assert case.probability([], model) == 0.0


def test_golden_specs_carry_their_own_as_of_date(tmp_path: Path):
    default = date(2026, 1, 1)
    assert parse_golden_spec("a.jsonl", default) == (Path("a.jsonl"), default)
    assert parse_golden_spec("x/b.jsonl@2026-11-22", default) == (
        Path("x/b.jsonl"),
        date(2026, 11, 22),
    )
    with pytest.raises(ValueError, match="ISO date"):
        parse_golden_spec("b.jsonl@tomorrow", default)
    first = tmp_path / "first.jsonl"
    first.write_text(GOLDEN.read_text().splitlines()[0] + "\n")
    with pytest.raises(ValueError, match="two golden files"):
        load_case_sets([(first, default), (first, default)])
    case = json.loads(GOLDEN.read_text().splitlines()[0])
    case["case_id"] = "another-id"
    second = tmp_path / "second.jsonl"
    second.write_text(json.dumps(case) + "\n")
    with pytest.raises(ValueError, match="also appears in"):
        load_case_sets([(first, default), (second, default)])


def test_leave_one_operator_out_never_fits_on_the_held_out_operator(retriever):
    cases = load_golden(GOLDEN)
    subset = [c for c in cases if c.tenant_id == "alpine-treks"][:6]
    subset += [c for c in cases if c.tenant_id == "coastal-kayak"][:6]
    sets = [CaseSet(GOLDEN, date(2026, 11, 15), tuple(subset))]
    report = cross_validate(retriever, sets)
    assert set(report["per_operator"]) == {"alpine-treks", "coastal-kayak"}
    for tenant, model in report["models"].items():
        assert model["fitted_on"] == f"leave-one-out: all but {tenant}"
        fitted = AnswerabilityModel.model_validate(model)
        assert fitted.weights  # something was learned from the other operator
    assert report["pooled"]["cases"] == 12
    assert sum(f["cases"] for f in report["per_operator"].values()) == 12
    assert {d["case_id"] for d in report["details"]} == {c.case_id for c in subset}
    confusion = report["outcome_confusion"]
    assert sum(n for row in confusion.values() for n in row.values()) == 12
    for detail in report["details"]:
        assert confusion[detail["expected_outcome"]][detail["outcome"]] >= 1
    right = sum(confusion[o][o] for o in confusion)
    assert right == round(report["pooled"]["outcome_accuracy"] * 12)
    for figures in [*report["per_operator"].values(), report["pooled"]]:
        assert 0.0 <= figures["ece_chunks"] <= 1.0
        assert 0.0 <= figures["outcome_accuracy"] <= 1.0
    table = format_cv_table(report)
    assert "| pooled | 12 |" in table and "| alpine-treks | 6 |" in table
    json.dumps(report, default=str)


def test_pack_shows_each_chunks_own_probability_under_the_top_confidence():
    # The top chunk keeps the verdict's confidence; the others show their chunk probability,
    # capped at the top value, so the pack's maximum is what 0.65 / 0.72 were compared with.
    shown = pack_confidences([0.55, 0.81, 0.78, 0.40], [0.62, 0.35, 0.90, 0.05])
    assert shown == [0.62, 0.81, 0.81, 0.05]
    assert max(shown) == 0.81
    # Equal confidences: the first keeps it.
    assert pack_confidences([0.7, 0.7], [0.2, 0.1]) == [0.7, 0.1]
    assert pack_confidences([], []) == []
    with pytest.raises(ValueError, match="one probability"):
        pack_confidences([0.5], [])
