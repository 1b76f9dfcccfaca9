"""Question-and-chunk features (`kb_eval/pair_features.py`) and the pair-signal bench's held-out
logic (`bench/pair_signal.py`), on fresh examples with the real MiniLM."""

from __future__ import annotations

import numpy as np
import pytest

from bench.pair_signal import head_scores, pair_values, univariate, with_case_values
from kb_eval.answerability_fit import Row
from kb_eval.pair_features import (
    LATE_FEATURES,
    _rare_indices,
    chunk_sentence_tokens,
    late_features,
    pair_vector,
    question_words,
)

QUESTION = "Does the safari minibus have air conditioning for the long transfer?"
STATES = (
    "Transfers between the parks use our own minibuses with pop-up roofs. "
    "Every minibus has air conditioning and a cool box with drinking water."
)
LACKS = (
    "Transfers between the parks use our own minibuses with pop-up roofs. "
    "Every minibus has sliding windows and a cool box with drinking water."
)
IDF = {"safari": 0.4, "minibus": 1.2, "air": 2.6, "condit": 3.1, "long": 0.9, "transfer": 0.8}


@pytest.fixture(autouse=True)
def _model(minilm):
    """The session's MiniLM is loaded (the features read the same model files)."""
    return minilm


def test_chunk_stating_the_asked_thing_scores_higher_than_one_about_the_same_vehicle():
    states, lacks = late_features(QUESTION, STATES, IDF), late_features(QUESTION, LACKS, IDF)
    for name in ("li_mean", "li_idf_mean", "li_rare_min", "li_rare_mean", "li_sentence_rare"):
        assert states[name] > lacks[name] + 0.1, name


def test_rare_words_in_one_sentence_beat_rare_words_in_separate_sentences():
    apart = "The minibus seats seven guests. Our lodge rooms have air conditioning."
    together = "The minibus seats seven guests and has air conditioning."
    idf = {"minibus": 3.0, "air": 2.0, "condit": 2.5}
    question = "Is there air conditioning in the minibus?"
    assert (
        late_features(question, together, idf)["li_sentence_rare"]
        > late_features(question, apart, idf)["li_sentence_rare"]
    )


def test_features_are_bounded_and_repeat_exactly_from_cold_caches():
    first = late_features(QUESTION, STATES, IDF)
    vector = np.array(pair_vector(QUESTION, STATES))
    for cached in (question_words, chunk_sentence_tokens, pair_vector):
        cached.cache_clear()
    assert late_features(QUESTION, STATES, IDF) == first
    assert np.array_equal(pair_vector(QUESTION, STATES), vector)
    assert set(first) == set(LATE_FEATURES)
    assert all(-1.0 <= value <= 1.0 + 1e-9 for value in first.values())
    assert abs(float(vector @ vector) - 1.0) < 1e-9
    assert not pair_vector(QUESTION, STATES).flags.writeable


def test_question_without_content_words_gives_zeros():
    assert late_features("Can you do that?", STATES, IDF) == dict.fromkeys(LATE_FEATURES, 0.0)


def test_question_words_are_the_analyzed_content_words():
    assert question_words(QUESTION).terms == (
        "safari",
        "minibus",
        "air",
        "condit",
        "long",
        "transfer",
    )
    assert question_words(QUESTION).vectors.shape == (6, 384)


def test_a_word_the_index_lacks_counts_as_the_rarest():
    terms = ["minibus", "snorkel", "air", "minibus"]
    assert _rare_indices(terms, {"minibus": 2.0, "air": 1.0}) == [0, 1]


def _rows(case_id: str, tenant: str, labels: list[bool]) -> list[Row]:
    return [
        Row(tenant, case_id, rank, {"vector_best": 0.5}, label, label, any(labels))
        for rank, label in enumerate(labels)
    ]


def test_pair_head_values_are_held_out_and_nested():
    rng = np.random.default_rng(0)
    tenants = {f"{t}-{i}": t for t in ("a", "b", "c") for i in range(6)}
    rows, pairs = [], {}
    for case_id, tenant in sorted(tenants.items()):
        labels = [int(case_id[-1]) % 2 == 0, False]
        rows.extend(_rows(case_id, tenant, labels))
        pairs[case_id] = [rng.normal(size=4) + (3.0 if lab else 0.0) for lab in labels]
    # A case the retrieval found nothing for (no rows, no pair vectors) scores 0.
    tenants["a-empty"], pairs["a-empty"] = "a", []
    held, rows_for = pair_values(rows, pairs, tenants)
    assert set(held) == set(tenants)
    assert held["a-empty"] == 0.0
    assert all(0.0 <= v <= 1.0 for v in held.values())
    # A held-out operator's value comes from a head that never saw it: changing its labels
    # leaves its own values unchanged.
    flipped = [
        Row(r.tenant_id, r.case_id, r.rank, r.features, not r.label) if r.tenant_id == "a" else r
        for r in rows
    ]
    held_flipped, _ = pair_values(flipped, pairs, tenants)
    assert all(held_flipped[k] == held[k] for k in tenants if tenants[k] == "a")
    assert any(held_flipped[k] != held[k] for k in tenants if tenants[k] == "b")
    # Within operator a's fold, operator b's values come from a head fitted on c alone.
    head_c = head_scores(
        pairs,
        {k: [r.label for r in rows if r.case_id == k] for k in pairs},
        {k for k, t in tenants.items() if t == "c"},
    )
    fold_rows = rows_for("a")
    b_case = next(k for k, t in sorted(tenants.items()) if t == "b")
    value = next(r.features["pair_head"] for r in fold_rows if r.case_id == b_case)
    assert value == pytest.approx(float(head_c.predict_proba(np.array(pairs[b_case]))[:, 1].max()))


def test_case_values_reach_every_row_and_univariate_auc():
    rows = _rows("x", "a", [True, False]) + _rows("y", "a", [False, False])
    marked = with_case_values(rows, {"x": {"li_min": 0.9}})
    assert [r.features.get("li_min") for r in marked] == [0.9, 0.9, None, None]
    expected = {"x": "OK_TO_DRAFT", "y": "UNKNOWN", "z": "NEEDS_REVIEW"}
    auc = univariate({"x": 0.9, "y": 0.2, "z": 0.0}, {"x": "a", "y": "a", "z": "a"}, expected)
    assert auc == {"pooled": 1.0, "a": 1.0}
