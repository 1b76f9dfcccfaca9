"""Issue 11 session 9: `question_topics` rejects keywords by their first word before matching
token by token; the topics are those of the plain rule (every keyword matched everywhere)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kb_retrieval.retrieval.conflict_scope import (
    _WORD_RE,
    INTENT_TOPICS,
    _keyword_in,
    question_topics,
)
from kb_retrieval.text.quantities import TOPICS

# Keyword words (a prefix keyword's stem with endings), their neighbours and plain words.
_WORDS = sorted(
    {w.rstrip("*") + end for t in TOPICS for k in t.keywords for w in k for end in ("", "ed")}
    | {w.rstrip("*")[:-1] for t in TOPICS for k in t.keywords for w in k if len(w) > 3}
    | {"we", "the", "a", "lodge", "kayak", "Tuesday", "30", "days"}
)


def _plain(text: str, intents: list[str]) -> frozenset[str]:
    tokens = _WORD_RE.findall(text.casefold())
    found = {topic for intent in intents for topic in INTENT_TOPICS.get(intent, ())}
    found.update(t.name for t in TOPICS if any(_keyword_in(tokens, k) for k in t.keywords))
    return frozenset(found)


@settings(max_examples=300, deadline=None)
@given(
    words=st.lists(st.sampled_from(_WORDS), max_size=40),
    intents=st.lists(st.sampled_from([*INTENT_TOPICS, "other"]), max_size=2),
)
def test_question_topics_equal_the_plain_rule(words, intents):
    text = " ".join(words)
    assert question_topics(text, intents) == _plain(text, intents)


def test_prefix_keywords_and_phrases_still_match():
    text = "Could the refund be processed before we board the ferry? When is check-in?"
    assert question_topics(text, []) == _plain(text, [])
    assert question_topics("Nothing about money here.", []) == _plain(
        "Nothing about money here.", []
    )


def test_every_keyword_alone_with_an_ending():
    """Each keyword written out alone (a prefix word with an ending) finds its topic."""
    for topic in TOPICS:
        for keyword in topic.keywords:
            text = " ".join(w[:-1] + "ing" if w.endswith("*") else w for w in keyword)
            assert topic.name in question_topics(text, []), text
            assert question_topics(text, []) == _plain(text, [])
