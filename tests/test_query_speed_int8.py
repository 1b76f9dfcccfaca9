"""Issue 11 session 8: an int8 query vector is a function of its own text, not of its batch."""

from __future__ import annotations

import numpy as np

from kb_retrieval.embedding_onnx import OnnxQueryEncoder

VARIANTS = [
    "Is the glacier walk still on if it rains the night before?",
    "glacier walk rain",
    "We are two families with children aged 9 and 12 and wonder whether the hut-to-hut week "
    "suits them, and which boots they need for the scree on day three.",
]


def test_int8_vectors_do_not_depend_on_the_other_variants(minilm):
    encoder = OnnxQueryEncoder(minilm.model_dir, threads=1, quantized=True)
    together = encoder.encode(VARIANTS)
    for index, text in enumerate(VARIANTS):
        alone = encoder.encode([text])[0]
        assert np.array_equal(together[index], alone), text
    batched = encoder._run([encoder.tokenizer.encode(t) for t in VARIANTS[:2]])[0]
    assert not np.array_equal(batched, together[0]), "a shared pass would change the vector"


def test_int8_passes_on_two_threads_give_the_same_vectors(minilm):
    """Session 9: the variants' passes run side by side, one thread each: same bits, same
    order as one pass after the other."""
    alone = OnnxQueryEncoder(minilm.model_dir, threads=1, quantized=True)
    side_by_side = OnnxQueryEncoder(minilm.model_dir, threads=2, quantized=True)
    assert side_by_side._passes is not None and alone._passes is None
    texts = [*VARIANTS, VARIANTS[1]]
    assert np.array_equal(side_by_side.encode(texts), alone.encode(texts))
    assert np.array_equal(side_by_side.encode(texts[:1]), alone.encode(texts[:1]))
