"""Whether a chunk states the kind of value a question asks for, in a sentence about it.

A question that asks "what time", "how much", "how old" or "how heavy" is answered by a sentence
that states a time, an amount, an age or a weight *and* names something the question names ("the
boat leaves at 17:00" for "what time do we board the boat"). A chunk that states such a value
about something else (the sauna's 17:00) does not count. The test reads the chunk's sentences
(`value_sentences`, cached per text); the words of the value itself ("45 days": "day") are not
counted as shared words.
"""

from __future__ import annotations

from collections.abc import Collection
from functools import lru_cache
from typing import NamedTuple

from kb_retrieval.models import Category
from kb_retrieval.query.vocabulary import GENERIC_TRIP_NOUNS
from kb_retrieval.retrieval.departure_agreement import (
    MAX_SENTENCE_WORDS,
    SENTENCE_CACHE_TEXTS,
    SENTENCE_SPLIT,
)
from kb_retrieval.text.analyzer import analyze, normalize_text
from kb_retrieval.text.quantities import extract_quantities

# The candidate feature holding `states_typed_answer` for the direct question: read by the
# verdict's confidence (`RetrievalConfig.typed_answer_logit`), not by the learned model.
TYPED_ANSWER = "typed_answer"
# The sources whose stated values may raise the confidence: not marketing (a brochure's price or
# time never outranks the policy, spec 6) and not internal operations documents (not for guests).
TYPED_ANSWER_SOURCES = frozenset(Category) - {Category.MARKETING, Category.OPERATIONS_INTERNAL}


# Words that say what kind of value is asked ("what time", "how much", "what fee", "how old"),
# not what it is about: a sentence sharing only these states some other value.
QUESTION_FORM_WORDS = frozenset(
    analyze(
        "time hour early late long soon far advance ahead many deadline notice much cost costs "
        "price prices fee fees "
        "charge charged surcharge percent percentage share portion part old age ages year years "
        "heavy weigh weight kg kilo kilos lb lbs day days night nights week weeks month months "
        "minute minutes"
    )
)
_GENERIC = frozenset(analyze(" ".join(sorted(GENERIC_TRIP_NOUNS))))


class _ValueSentence(NamedTuple):
    """A sentence that states at least one value: its words, its values' kinds and words."""

    terms: frozenset[str]
    kinds: frozenset[str]
    value_terms: frozenset[str]


@lru_cache(maxsize=SENTENCE_CACHE_TEXTS)
def value_sentences(text: str) -> tuple[_ValueSentence, ...]:
    """The sentences of `text` (at most `MAX_SENTENCE_WORDS` words: a longer line is a flattened
    table) that state a value. Quantities are read before case folding: "EUR 560" is money,
    "eur 560" is not (`extract_quantities`)."""
    out = []
    for sentence in SENTENCE_SPLIT.split(normalize_text(text)):
        if len(sentence.split()) > MAX_SENTENCE_WORDS:
            continue
        quantities = extract_quantities(sentence)
        if quantities:
            out.append(
                _ValueSentence(
                    frozenset(analyze(sentence)),
                    frozenset(q.kind for q in quantities),
                    frozenset().union(*(analyze(q.text) for q in quantities)),
                )
            )
    return tuple(out)


def focus_terms(question: str, direct_terms: Collection[str]) -> frozenset[str]:
    """The direct query's words that name what the question is about: without the words of
    the question form, of the values the question states ("day 2", "14-year-old") and the
    generic trip nouns."""
    value_words = {w for q in extract_quantities(question) for w in analyze(q.text)}
    return frozenset(direct_terms) - QUESTION_FORM_WORDS - _GENERIC - value_words


def states_typed_answer(asked: Collection[str], question_terms: Collection[str], text: str) -> bool:
    """A sentence of `text` states a value of an asked kind and shares one of `question_terms`
    (`focus_terms`) that is not a word of the value."""
    if not asked or not question_terms:
        return False
    wanted = frozenset(question_terms)
    for sentence in value_sentences(text):
        if sentence.kinds.intersection(asked) and (wanted & sentence.terms) - sentence.value_terms:
            return True
    return False
