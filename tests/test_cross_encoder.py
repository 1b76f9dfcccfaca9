"""The fine-tuned MiniLM cross-encoder (`kb_eval/cross_encoder.py`) and the gates of its bench
(`bench/cross_encoder_signal.py`), on fresh made-up examples with the real MiniLM weights."""

from __future__ import annotations

import numpy as np
import pytest

from bench.cross_encoder_signal import CaseValues, gate_variants
from kb_eval.cross_encoder import (
    Pair,
    TrainConfig,
    best_sentences,
    encode_lower,
    fit_and_score,
    frozen_layers,
    load_base,
    train,
)
from kb_retrieval.retrieval.config import RetrievalConfig
from kb_retrieval.text.sentence_units import sentence_units

ANSWERS = [
    (
        "Can we bring our spaniel on the lake walks?",
        "Dogs on a lead are welcome on every lake walk.",
    ),
    ("Is lunch included on the glacier day?", "A packed lunch is included on the glacier day."),
    (
        "What time does the ferry to the island leave?",
        "The island ferry leaves the harbour at 8:15.",
    ),
    ("Do the cabins have a hair dryer?", "Each cabin has a hair dryer and fresh towels."),
]
MISSES = [
    (
        "Can we bring our spaniel on the lake walks?",
        "The lake walks start from the village square.",
    ),
    ("Is lunch included on the glacier day?", "The glacier day needs crampons, which we lend."),
    (
        "What time does the ferry to the island leave?",
        "The island has two small beaches and a cafe.",
    ),
    ("Do the cabins have a hair dryer?", "Cabins sleep four guests in two bunk beds."),
]
TOY = TrainConfig(trainable_layers=1, epochs=12, batch_size=4, head_learning_rate=5e-3, seed=3)


@pytest.fixture(scope="module")
def pairs() -> list[Pair]:
    return [Pair(q, p, True) for q, p in ANSWERS] + [Pair(q, p, False) for q, p in MISSES]


def test_the_lower_layers_match_the_models_own_forward_pass():
    model, tokenizer = load_base()
    texts = [ANSWERS[0], MISSES[2]]
    enc = tokenizer([q for q, _ in texts], [p for _, p in texts], padding=True, return_tensors="pt")
    full = model(**enc).last_hidden_state.detach().numpy()
    states = encode_lower(texts, len(model.encoder.layer))
    for row, state in enumerate(states):
        assert np.allclose(state.numpy(), full[row, : state.shape[0]], atol=1e-5)
    assert states[0].shape[0] != states[1].shape[0]


def test_training_is_deterministic_and_separates_answers_from_misses(pairs):
    tests = [(p.question, p.passage) for p in pairs]
    first = fit_and_score(pairs, tests, TOY)
    again = fit_and_score(pairs, tests, TOY)
    assert np.array_equal(first, again)
    positives, negatives = first[: len(ANSWERS)], first[len(ANSWERS) :]
    assert positives.min() > negatives.max()
    other_seed = fit_and_score(pairs, tests, TrainConfig(**{**TOY.__dict__, "seed": 4}))
    assert not np.array_equal(first, other_seed)


def test_training_needs_both_labels(pairs):
    states = encode_lower([(p.question, p.passage) for p in pairs[:2]], frozen_layers(TOY))
    with pytest.raises(ValueError, match="both a positive and a negative"):
        train(states, [True, True], TOY)


def test_best_sentences_keep_the_closest_sentence_in_the_chunks_order():
    chunk = (
        "Our boats leave from the north pier every morning. "
        "Life jackets in child sizes are on board for every trip. "
        "Parking at the pier costs four euros a day. "
        "Tickets can be changed until the evening before."
    )
    one = best_sentences("are there life jackets for children", chunk, words=12)
    assert one == "Life jackets in child sizes are on board for every trip."
    two = best_sentences("are there life jackets for children", chunk, words=22)
    assert "Life jackets" in two and len(two.split()) <= 22
    assert two == " ".join(u for u in sentence_units(chunk) if u in two)  # the chunk's order
    assert best_sentences("anything", "One short line.", words=1) == "One short line."


def _values(top: float, expected: str, ce: float, tenant: str = "t") -> CaseValues:
    return CaseValues(tenant, expected, top, 0.5, ce, ce)


def test_gates_take_their_thresholds_from_the_training_cases_only():
    config = RetrievalConfig()
    train_values = [
        _values(0.60, "UNKNOWN", 1.0),  # in the band, not answerable: promote above 1.0
        _values(0.50, "OK_TO_DRAFT", 3.0),
        _values(0.70, "OK_TO_DRAFT", -0.5),  # answerable above the unknown line: demote below
        _values(0.30, "UNKNOWN", 9.0),  # under the band: no say
        _values(0.80, "UNKNOWN", -4.0),
    ]
    variants, thresholds = gate_variants(train_values, config)
    assert thresholds["promote_at"] == pytest.approx(1.0, abs=1e-5)
    assert thresholds["demote_at"] == pytest.approx(-0.5, abs=1e-5)
    conf = [0.55, 0.4, 0.2]
    draft = config.low_confidence_threshold
    assert variants["promote"](_values(0.55, "?", 2.0), conf) == [draft, 0.4, 0.2]
    assert variants["promote"](_values(0.55, "?", 0.9), conf) == conf
    assert variants["promote"](_values(0.40, "?", 5.0), [0.4]) == [0.4]
    high = [0.9, 0.66, 0.3]
    demoted = variants["demote"](_values(0.9, "?", -1.0), high)
    assert max(demoted) < config.unknown_threshold and demoted[2] == 0.3
    assert variants["demote"](_values(0.9, "?", 0.0), high) == high
    assert variants["identity"](_values(0.9, "?", 0.0), high) == high
