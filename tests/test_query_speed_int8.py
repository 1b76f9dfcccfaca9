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
