"""Which conflicts bear on the e-mail (spec 8): the topics it asks about, and values it states.

A disagreement between two chunks on a topic the guest does not ask about (the deposit amount
in a question about life jackets), or with a chunk the answerability model finds unrelated to
the e-mail (under the low-relevance line), does not make the answer uncertain: the draft never
states it. A value the guest states ("your website says a full refund up to 30 days") that every
authoritative chunk stating that topic contradicts is a conflict the guest brings with them:
the operator's text says otherwise, and a person decides what was promised.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from kb_retrieval.models import HIGH_PRECEDENCE
from kb_retrieval.retrieval.conflict_facts import disjoint, fact_key, facts_of, value_labels
from kb_retrieval.retrieval.conflicts import CLAIM_CONTRADICTED, Conflict, ConflictInput
from kb_retrieval.text.quantities import TOPICS, TRIP_SPECIFIC_TOPICS, Quantity, extract_quantities

# Quantity topics each query intent asks about (besides the topics' own keywords in the text).
# What comes back on cancelling depends on what was paid: the deposit kept, the balance due.
_MONEY_BACK = (
    "cancellation",
    "cancellation_after_booking",
    "cancellation_fee",
    "refund_processing",
    "deposit",
    "payment_due",
)
INTENT_TOPICS: dict[str, tuple[str, ...]] = {
    "cancel": _MONEY_BACK,
    "cancellation": _MONEY_BACK,
    "refund": _MONEY_BACK,
    "deposit": ("deposit",),
    "payment": ("payment_due", "deposit"),
    "booking_change": ("amendment",),
    "age": ("minimum_age", "guardian"),
    "check_in": ("check_in", "check_out"),
    "pickup": ("pickup", "departure_time", "return_time"),
    "luggage": ("luggage_weight",),
    "discount": ("discount",),
    "complaint": ("complaint",),
}
_WORD_RE = re.compile(r"[^\W\d_]+")
# A window boundary right before the value ("#" is the value in a quantity's context).
_WINDOW_CUE_RE = re.compile(
    r"\b(?:up to|more than|less than|within|at least|at most|no later than|until|over|under)"
    r" (?:about |around |roughly )?#"
)
# The value is attributed to what someone said or wrote.
_SOURCE_CUE_RE = re.compile(
    r"\b(?:says?|said|saying|told|tells|promis(?:e|es|ed)|states?|stated|claims?|claimed"
    r"|advertis(?:es|ed)|according|read|heard|thought|understood|understand|know)\b"
)


_PREFIX_LENGTHS = frozenset(
    len(word) - 1 for topic in TOPICS for k in topic.keywords for word in k if word.endswith("*")
)


def _keyword_in(tokens: Sequence[str], keyword: tuple[str, ...]) -> bool:
    """`keyword` (words; a trailing "*" makes a prefix) occurs as consecutive tokens."""

    def matches(pattern: str, token: str) -> bool:
        return token.startswith(pattern[:-1]) if pattern.endswith("*") else token == pattern

    size = len(keyword)
    return any(
        all(matches(p, t) for p, t in zip(keyword, tokens[i : i + size], strict=True))
        for i in range(len(tokens) - size + 1)
    )


def question_topics(text: str, intents: Iterable[str]) -> frozenset[str]:
    """The quantity topics an e-mail asks about: its intents' topics and every topic one of
    whose keywords (`text/quantities.py`) it uses."""
    tokens = _WORD_RE.findall(text.casefold())
    # Words and word beginnings of the text: a keyword whose first word is in neither cannot
    # occur (checked before the token-by-token match; same result, a fraction of the work).
    present = set(tokens) | {t[:n] + "*" for t in tokens for n in _PREFIX_LENGTHS}
    found = {topic for intent in intents for topic in INTENT_TOPICS.get(intent, ())}
    found.update(
        topic.name
        for topic in TOPICS
        if any(k[0] in present and _keyword_in(tokens, k) for k in topic.keywords)
    )
    return frozenset(found)


def bears_on(conflict: Conflict, topics: frozenset[str], relevant: frozenset[str]) -> bool:
    """A numeric conflict counts when its topic is asked about and at least two of its chunks
    are `relevant` (chunk ids above the low-relevance line); other kinds always count."""
    if not conflict.topic:
        return True
    return conflict.topic in topics and sum(i in relevant for i in conflict.chunk_ids) >= 2


def stated_rules(text: str) -> dict[tuple[str, str, str], tuple[Quantity, ...]]:
    """The e-mail's quantities stated as a rule: a window ("up to 30 days before", "more than
    60 days") or a value attributed to a source ("the brochure says", "we were told"). A value
    of the guest's own situation ("we leave in seven weeks", "booked ten days ago") is not."""
    found: dict[tuple[str, str, str], list[Quantity]] = {}
    for quantity in extract_quantities(text):
        key = fact_key(quantity)
        if key is not None and (
            _WINDOW_CUE_RE.search(quantity.context) or _SOURCE_CUE_RE.search(quantity.context)
        ):
            found.setdefault(key, []).append(quantity)
    return {key: tuple(values) for key, values in found.items()}


def claim_conflicts(claim_text: str, chunks: Sequence[ConflictInput]) -> list[Conflict]:
    """Values the guest states that the most authoritative chunks stating the same topic all
    contradict (a structured policy before the terms; a schedule stating the value agrees).

    Trip-specific topics (times, luggage weights) are left out: a time the guest names is
    usually their own plan ("we land at 11:00"), not a claim about the operator's terms.
    """
    policy = sorted(
        (c for c in chunks if c.category in HIGH_PRECEDENCE), key=lambda c: (c.rank, c.chunk_id)
    )
    found: list[Conflict] = []
    for key, claimed in sorted(stated_rules(claim_text).items()):
        if key[2] in TRIP_SPECIFIC_TOPICS:
            continue
        stating = [c for c in policy if key in facts_of(c.text)]
        if not stating:
            continue
        best = min(c.category.tier for c in stating)
        stating = [c for c in stating if c.category.tier == best]
        if not all(disjoint(claimed, facts_of(c.text)[key]) for c in stating):
            continue
        stated = [q for c in stating for q in facts_of(c.text)[key]]
        ids = tuple(dict.fromkeys(c.chunk_id for c in stating))
        detail = (
            f"{key[2]} {key[0]}: the e-mail states {', '.join(value_labels(claimed))}; "
            f"the policy states {', '.join(value_labels(stated))}"
        )
        values = value_labels([*claimed, *stated])
        found.append(Conflict(CLAIM_CONTRADICTED, values, ids, detail, key[2]))
    return found
