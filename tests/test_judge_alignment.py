"""Clause/token alignment features, the support threshold, the rule judge's negated
predicate, and data/judge-style pairs held out in `--cv operator`.

Every example is written fresh for these tests (none is taken from a labelled pair file)."""

from __future__ import annotations

import numpy as np
import pytest

from kb_eval.judge.alignment import ALIGNMENT_FEATURES, alignment_features, evidence_clauses
from kb_eval.judge.claim_judge import judge_claim
from kb_eval.judge.encoder import TextEncoder
from kb_eval.judge.evaluation import operator_cv
from kb_eval.judge.learned import _threshold, decide
from kb_retrieval.embedding import FakeHashEmbedder


@pytest.fixture()
def encoder() -> TextEncoder:
    return TextEncoder(FakeHashEmbedder())


def _features(claim: str, sentences: list[str], encoder: TextEncoder) -> dict[str, float]:
    values = alignment_features(claim, sentences, sentences[0], encoder)
    return dict(zip(ALIGNMENT_FEATURES, values, strict=True))


def test_evidence_clauses_split_at_semicolons_and_contrast_words() -> None:
    sentence = (
        "We suggest gaiters for every river walk; on the canyon day gaiters are compulsory, "
        "but sandals are fine in camp."
    )
    clauses = evidence_clauses([sentence, "Tea is served at five."])
    assert clauses[0] == "We suggest gaiters for every river walk"
    assert "on the canyon day gaiters are compulsory" in clauses
    assert "but sandals are fine in camp." in clauses
    assert clauses[-1] == "Tea is served at five."
    assert evidence_clauses(["Yes, of course."]) == ["Yes, of course."]


def test_clause_modality_is_read_on_the_aligned_clause(encoder: TextEncoder) -> None:
    sentence = "We suggest gaiters for every river walk; on the canyon day gaiters are compulsory."
    rule = _features("Gaiters are compulsory on every river walk.", [sentence], encoder)
    assert rule["clause_opposed"] == 1.0
    same = _features("We suggest gaiters for every river walk.", [sentence], encoder)
    assert same["clause_opposed"] == 0.0


def test_clause_negation_mismatch(encoder: TextEncoder) -> None:
    evidence = ["Campfires are not allowed in the reserve, and litter must be carried out."]
    assert (
        _features("Campfires are allowed in the reserve.", evidence, encoder)[
            "clause_negation_mismatch"
        ]
        == 1.0
    )
    assert (
        _features("Campfires are not allowed in the reserve.", evidence, encoder)[
            "clause_negation_mismatch"
        ]
        == 0.0
    )


def test_modality_the_evidence_never_uses(encoder: TextEncoder) -> None:
    evidence = ["Guests may bring a folding chair to the lakeside concert."]
    strong = _features("Guests must bring a folding chair to the concert.", evidence, encoder)
    assert strong["claim_strong_class_unstated"] > 0.0
    plain = _features("Guests may bring a folding chair to the concert.", evidence, encoder)
    assert plain["claim_strong_class_unstated"] == 0.0


def test_token_alignment_against_the_aligned_sentence(encoder: TextEncoder) -> None:
    sentences = ["The pottery class starts at nine in the barn.", "Aprons are lent by the studio."]
    stated = _features("The pottery class starts in the barn.", sentences, encoder)
    assert stated["sentence_words_same"] == 1.0
    assert stated["sentence_words_elsewhere"] == 0.0
    combined = _features("The pottery class in the barn lends aprons.", sentences, encoder)
    assert combined["sentence_words_same"] < 1.0
    assert combined["sentence_words_elsewhere"] > 0.0


def test_quantity_differs_on_the_aligned_sentence(encoder: TextEncoder) -> None:
    sentences = ["The ferry crossing takes 40 minutes.", "The return ferry takes an hour."]
    other = _features("The ferry crossing takes 60 minutes.", sentences, encoder)
    assert other["sentence_quantity_differs"] == 1.0
    same = _features("The ferry crossing takes forty minutes.", sentences, encoder)
    assert same["sentence_quantity_differs"] == 0.0


def test_rule_judge_sees_a_negated_predicate_that_is_not_a_content_word() -> None:
    evidence = ["Evening boat trips are available on request for groups of eight."]
    assert judge_claim("Evening boat trips are not available.", evidence).label == "contradicted"
    assert judge_claim("Evening boat trips are available.", evidence).label == "supported"


def test_the_support_threshold_keeps_false_support_within_the_target() -> None:
    p_supported = np.asarray([0.99, 0.97, 0.9, 0.8, 0.95, 0.85, 0.6, 0.3])
    targets = np.asarray([0, 0, 0, 0, 1, 2, 1, 2])
    probabilities = np.stack([p_supported, 1 - p_supported, np.zeros(8)], axis=1)
    line = _threshold(probabilities, targets, 0.0)
    assert 0.95 < line <= 0.97
    labels = decide(probabilities, line)
    assert labels.count("supported") == 2
    assert all(label != "supported" for label, t in zip(labels, targets, strict=True) if t)
    loose = _threshold(probabilities, targets, 0.25)
    assert 0.85 < loose <= 0.9
    assert _threshold(probabilities[:4], targets[:4], 0.0) == 0.5


def test_pairs_without_an_operator_are_held_out_by_their_split(encoder: TextEncoder) -> None:
    rows: list[dict[str, object]] = []
    places = {
        "glacier-hikes": ("ice walk", "3 hours", "crampons are lent"),
        "river-rafts": ("raft trip", "2 hours", "helmets are lent"),
        "own-dev": ("bird walk", "90 minutes", "binoculars are lent"),
        "own-holdout": ("cave tour", "1 hour", "lamps are lent"),
    }
    for group, (trip, length, kit) in places.items():
        evidence = [f"The {trip} lasts {length}. On the {trip}, {kit}."]
        claims = [
            (f"The {trip} lasts {length}.", "supported"),
            (f"On the {trip}, {kit}.", "supported"),
            (f"The {trip} lasts 5 hours.", "number_changed"),
            (f"On the {trip}, {kit.replace('are', 'are not')}.", "contradicted"),
            ("The gift shop sells maps.", "unrelated"),
            ("Parking costs EUR 9 a day.", "unrelated"),
        ]
        for number, (claim, label) in enumerate(claims):
            row: dict[str, object] = {
                "pair_id": f"{group}-{number}",
                "claim": claim,
                "evidence": evidence,
                "label": label,
            }
            if group.startswith("own-"):
                row["split"] = group.removeprefix("own-")
            else:
                row["tenant_id"] = group
            rows.append(row)
    result = operator_cv(rows, encoder)
    assert sorted(result["per_operator"]) == ["glacier-hikes", "river-rafts"]
    assert sorted(result["own"]["per_split"]) == ["own-dev", "own-holdout"]
    assert result["own"]["pooled"]["n"] == 12
    assert result["pooled"]["n"] == 12


def test_contradiction_bias_moves_the_line_between_contradicted_and_unrelated() -> None:
    from kb_eval.judge.learned import _contradiction_bias

    # every contradicted row has P(contradicted) a little under P(unrelated): a positive bias
    # labels them right without mislabelling the clearly unrelated rows
    probabilities = np.asarray(
        [[0.1, 0.42, 0.48], [0.1, 0.40, 0.50], [0.0, 0.1, 0.9], [0.0, 0.2, 0.8], [1.0, 0.0, 0.0]]
    )
    targets = np.asarray([1, 1, 2, 2, 0])
    bias = _contradiction_bias(probabilities, targets)
    assert 0.2 <= bias < 1.3
    labels = decide(probabilities[:4], 0.99, bias)
    assert labels == ["contradicted", "contradicted", "unrelated", "unrelated"]
    assert decide(probabilities[:2], 0.99) == ["unrelated"] * 2
    balanced = np.asarray([[0.0, 0.7, 0.3], [0.0, 0.3, 0.7]])
    assert _contradiction_bias(balanced, np.asarray([1, 2])) == 0.0


def test_a_stated_limit_is_not_a_prohibition(encoder: TextEncoder) -> None:
    from kb_eval.judge.modality import classes

    assert not classes("Never more than ten riders share a boat.")["forbid"]
    assert classes("Never more than ten riders share a boat.")["limited"]
    assert classes("Riders never swim in the harbour.")["forbid"]
    evidence = ["Each boat takes at most ten riders, so everyone gets a paddle."]
    limit = _features(
        "No more than ten riders share a boat, so everyone paddles.", evidence, encoder
    )
    assert limit["clause_opposed"] == 0.0
    assert limit["claim_strong_class_unstated"] == 0.0
