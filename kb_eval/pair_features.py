"""Question-and-chunk features read by MiniLM together (issue 12 item 3, session 11): measured by
bench/pair_signal.py, not served.

Every served relevance signal compares one vector of the question with one vector of a chunk or
sentence (a bi-encoder cosine) or counts shared words. These read the two texts together:

- late interaction (`late_features`): MiniLM's contextual token outputs before pooling. Each
  content word of the question (a word the analyzer keeps; its word pieces averaged) gets its
  best cosine over every token of the chunk (each sentence unit encoded as one text). Features:
  the minimum, mean and lowest quartile of those best cosines (`li_min`, `li_mean`, `li_q25`),
  their idf-weighted mean (`li_idf_mean`), the minimum and mean over the question's `RARE`
  rarest words by the tenant's idf (`li_rare_min`, `li_rare_mean`), and the focus in one
  sentence (`li_sentence_rare`: over the chunk's sentences, the best minimum over the rare
  words of their best cosine within that sentence: do the question's specific words all find
  a match in one sentence);
- pair reading (`pair_vector`): MiniLM over "question [SEP] sentence" for the chunk's
  `PAIR_SENTENCES` sentences closest to the question (bi-encoder cosine), mean-pooled and
  normalised as the model pools, averaged over those sentences: a 384-vector that a logistic
  head, fitted per fold on other operators, turns into a score.

Texts are analysed once per process (`lru_cache` keyed by the text). Deterministic: the model in
inference mode on the CPU, no sampling. Every late-interaction feature is a cosine in [-1, 1].
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from kb_retrieval.embedding import sentence_transformer
from kb_retrieval.text.analyzer import analyze
from kb_retrieval.text.sentence_units import sentence_units

RARE = 2
PAIR_SENTENCES = 2
MAX_TOKENS = 256
DIMENSIONS = 384
LATE_FEATURES: tuple[str, ...] = (
    "li_min",
    "li_mean",
    "li_q25",
    "li_idf_mean",
    "li_rare_min",
    "li_rare_mean",
    "li_sentence_rare",
)


@dataclass(frozen=True)
class Words:
    """The content words of a text (each word's first analyzed term) and one unit vector each."""

    terms: tuple[str, ...]
    vectors: np.ndarray


def _model():  # -> SentenceTransformer
    return sentence_transformer()


def _unit(matrix: np.ndarray) -> np.ndarray:
    return matrix / np.maximum(np.linalg.norm(matrix, axis=-1, keepdims=True), 1e-12)


def _encode_words(texts: Sequence[str]) -> list[tuple[np.ndarray, Words]]:
    """Per text: its unit token vectors (special tokens dropped) and its content words."""
    import torch

    model = _model()
    encoded = model.tokenizer(
        list(texts), padding=True, truncation=True, max_length=MAX_TOKENS, return_tensors="pt"
    )
    with torch.inference_mode():
        hidden = model[0].auto_model(**encoded).last_hidden_state.numpy().astype(np.float64)
    out = []
    for i, text in enumerate(texts):
        word_ids = encoded.word_ids(i)
        keep = [j for j, w in enumerate(word_ids) if w is not None]
        pieces: dict[int, list[int]] = {}
        for j in keep:
            pieces.setdefault(word_ids[j], []).append(j)
        terms, rows = [], []
        for w in sorted(pieces):
            span = encoded.word_to_chars(i, w)
            analyzed = analyze(text[span.start : span.end])
            if analyzed:
                terms.append(analyzed[0])
                rows.append(hidden[i, pieces[w]].mean(axis=0))
        tokens = _unit(hidden[i, keep]) if keep else np.zeros((0, DIMENSIONS))
        words = _unit(np.vstack(rows)) if rows else np.zeros((0, DIMENSIONS))
        out.append((tokens, Words(tuple(terms), words)))
    return out


@lru_cache(maxsize=4096)
def question_words(question: str) -> Words:
    """The question's content words with their contextual vectors."""
    return _encode_words([question])[0][1]


@lru_cache(maxsize=16384)
def chunk_sentence_tokens(text: str) -> tuple[np.ndarray, ...]:
    """One unit token matrix per sentence unit of the chunk (each unit encoded as one text)."""
    units = sentence_units(text) or [text]
    return tuple(tokens for tokens, _ in _encode_words(units))


def _rare_indices(terms: Sequence[str], idf: Mapping[str, float]) -> list[int]:
    """Indices of the `RARE` rarest distinct terms (highest idf; a term the tenant's index lacks
    counts as the rarest), first occurrence of each."""
    ceiling = max(idf.values(), default=0.0) + 1.0
    first: dict[str, int] = {}
    for i, term in enumerate(terms):
        first.setdefault(term, i)
    ranked = sorted(first, key=lambda t: (-idf.get(t, ceiling), t))[:RARE]
    return sorted(first[t] for t in ranked)


def late_features(question: str, text: str, idf: Mapping[str, float]) -> dict[str, float]:
    """The late-interaction features of one (question, chunk) pair (all 0 without content words)."""
    words = question_words(question)
    sentences = chunk_sentence_tokens(text)
    if not words.terms or not any(s.size for s in sentences):
        return dict.fromkeys(LATE_FEATURES, 0.0)
    per_sentence = np.vstack(
        [(words.vectors @ s.T).max(axis=1) for s in sentences if s.size]
    )  # sentences x words
    best = per_sentence.max(axis=0)
    weights = np.array([idf.get(t, 0.0) for t in words.terms])
    rare = _rare_indices(words.terms, idf)
    return {
        "li_min": float(best.min()),
        "li_mean": float(best.mean()),
        "li_q25": float(np.quantile(best, 0.25)),
        "li_idf_mean": float(best @ weights / weights.sum()) if weights.sum() > 0 else 0.0,
        "li_rare_min": float(best[rare].min()),
        "li_rare_mean": float(best[rare].mean()),
        "li_sentence_rare": float(per_sentence[:, rare].min(axis=1).max()),
    }


@lru_cache(maxsize=16384)
def _sentence_vectors(text: str) -> tuple[tuple[str, ...], np.ndarray]:
    units = tuple(sentence_units(text) or [text])
    return units, _encode_pooled(units)


def _encode_pooled(texts: Sequence[str]) -> np.ndarray:
    """The model's own sentence vectors (mean pooling, normalised), float64."""
    vectors = _model().encode(
        list(texts), normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
    )
    return np.asarray(vectors, dtype=np.float64)


@lru_cache(maxsize=16384)
def pair_vector(question: str, text: str) -> np.ndarray:
    """Mean of the pooled "question [SEP] sentence" vectors of the chunk's `PAIR_SENTENCES`
    sentences closest to the question (read-only array)."""
    units, vectors = _sentence_vectors(text)
    query = _encode_pooled([question])[0]
    order = sorted(range(len(units)), key=lambda i: (-float(vectors[i] @ query), i))
    pairs = [f"{question} [SEP] {units[i]}" for i in order[:PAIR_SENTENCES]]
    pooled = _encode_pooled(pairs).mean(axis=0)
    out = pooled / max(math.sqrt(float(pooled @ pooled)), 1e-12)
    out.setflags(write=False)
    return out
