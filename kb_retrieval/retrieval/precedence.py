"""Whether a policy-like question's evidence holds its required high-precedence source (spec 5;
spec 7: "evidence exists but required high-precedence category is missing" -> NEEDS_REVIEW).

The evidence is the pack. A required-category chunk that is usable (confidence >= 0.65, above the
low-relevance line) meets the requirement. So does one above the low-relevance line whose own
confidence is lower, when it states the answer (`states_answer`): one of its sentences (at most 40
words) uses the vocabulary of a policy intent the e-mail asks about and at least one other word of
the direct question outside the value ("day" in "45 days" does not count), and states a value
(an amount, a percentage, a duration, a time, an age).
Drafting still needs a usable chunk; this only decides whether the authoritative source is there.

That second way is closed when the question is sensitive (refund, safety, medical, legal,
exceptions: the authoritative chunk must itself be confident) or when the evidence reports a
conflict (the evidence disagrees, so a person checks which source holds).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence

from kb_retrieval.query.plan import QueryPlan
from kb_retrieval.query.vocabulary import INTENT_PATTERNS, POLICY_INTENTS
from kb_retrieval.retrieval.candidates import Candidate
from kb_retrieval.retrieval.departure_agreement import read_sentences
from kb_retrieval.text.analyzer import analyze

_INTENT_RES = {name: re.compile(INTENT_PATTERNS[name]) for name in sorted(POLICY_INTENTS)}
# Words of the direct question, besides the intent's own vocabulary, that an answer sentence uses.
MIN_OTHER_TERMS = 1


def precedence_met(
    plan: QueryPlan,
    authoritative: Sequence[Candidate],
    usable_ids: Collection[str],
    *,
    conflicted: bool,
) -> bool:
    """`authoritative`: the pack's required-category chunks above the low-relevance line (that
    speak of any commitment asked). One of them is usable; or, for a question that is not
    sensitive and evidence without a conflict, one of them `states_answer`."""
    if any(c.chunk_id in usable_ids for c in authoritative):
        return True
    if plan.sensitivity or plan.exception_request or conflicted:
        return False
    return any(states_answer(plan, c.text) for c in authoritative)


def states_answer(plan: QueryPlan, text: str) -> bool:
    """A sentence of `text` uses an asked policy intent's vocabulary and another word of the
    direct question, and states a value."""
    asked = [_INTENT_RES[i] for i in sorted(set(plan.intents) & POLICY_INTENTS)]
    if not asked or not plan.variants:
        return False
    question = frozenset(analyze(plan.variants[0].text))
    for sentence in read_sentences(text):
        if not sentence.labels:
            continue
        # the value's own words ("45 days") are not words of the question it answers
        terms = sentence.terms - sentence.value_terms
        own: set[str] = set()
        for pattern in asked:
            for match in pattern.finditer(sentence.text):
                own.update(analyze(match.group(0)))
        if own and len((question & terms) - own) >= MIN_OTHER_TERMS:
            return True
    return False
