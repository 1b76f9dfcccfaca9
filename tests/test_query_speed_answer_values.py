"""`answer_values` with the per-process sentence cache equals reading every sentence afresh."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kb_retrieval.query.plan import build_query_plan
from kb_retrieval.retrieval import departure_agreement
from kb_retrieval.retrieval.departure_agreement import (
    MAX_SENTENCE_WORDS,
    MIN_SHARED_TERMS,
    answer_values,
)
from kb_retrieval.text.analyzer import analyze, prepare
from kb_retrieval.text.quantities import extract_quantities

WORDS = ["ferry", "leaves", "harbour", "lodge", "breakfast", "served", "kayaks", "return", "the"]
VALUES = ["07:45", "at 18:30", "2 hours", "EUR 40", "3 days", "12 kg", "noon"]
QUESTIONS = [
    "When does the ferry leave the harbour?",
    "How long is breakfast served at the lodge?",
    "What time do the kayaks return?",
    "Hello!",
]


def _fresh(plan, text: str) -> frozenset[str]:
    """The rule read without the cache: every sentence prepared and analysed again."""
    asked = set(analyze(plan.variants[0].text)) if plan.variants else set()
    need = min(MIN_SHARED_TERMS, len(asked))
    values: set[str] = set()
    for sentence in departure_agreement.SENTENCE_SPLIT.split(prepare(text)):
        if len(sentence.split()) > MAX_SENTENCE_WORDS:
            continue
        if need and len(asked & set(analyze(sentence))) >= need:
            values.update(q.label for q in extract_quantities(sentence))
    return frozenset(values)


_sentence = st.lists(st.sampled_from(WORDS + VALUES), min_size=1, max_size=50).map(
    lambda words: " ".join(words) + "."
)


@settings(max_examples=150, deadline=None)
@given(
    sentences=st.lists(_sentence, min_size=1, max_size=6),
    joiner=st.sampled_from([" ", "\n", "\n\n"]),
    question=st.sampled_from(QUESTIONS),
)
def test_cached_answer_values_equal_a_fresh_reading(sentences, joiner, question):
    text = joiner.join(sentences)
    plan = build_query_plan(question)
    want = _fresh(plan, text)
    assert answer_values(plan, text) == want
    assert answer_values(plan, text) == want  # from the cache


def test_one_text_read_for_two_questions():
    """The cache keeps the sentences, not a question's answer: a second question over the
    same text gets its own values."""
    text = "The ferry leaves the harbour at 07:45. Breakfast is served at the lodge until 10:00."
    ferry = build_query_plan("When does the ferry leave the harbour?")
    breakfast = build_query_plan("Until when is breakfast served at the lodge?")
    assert answer_values(ferry, text) == {"07:45"}
    assert answer_values(breakfast, text) == {"10:00"}
    assert departure_agreement.read_sentences.cache_info().currsize >= 1
