"""Whether the departures an e-mail leaves open give the same answer (spec 9.3).

Spec 9.3 asks a clarifying question when the answer depends on a trip or date the e-mail does
not pin down "where the evidence differs between them". Two departures of one trip share most
of their itinerary and differ in a few values (the meeting time, the first day's start). What a
draft would state is the values (times, durations, amounts) of the sentences that use at least
two words of the question (a line of more than 40 words is a flattened table, not read), in every
usable itinerary chunk of those departures; when each other departure states every one of those
values in such a sentence too, the departure does not change the answer (a value stated
elsewhere, the sauna's 17:00 against the other departure's meeting at 17:00, does not count).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from functools import lru_cache
from itertools import combinations
from typing import NamedTuple

from kb_retrieval.query.answer_type import asked_kinds, stated_kinds
from kb_retrieval.query.plan import QueryPlan
from kb_retrieval.retrieval.candidates import Candidate
from kb_retrieval.text.analyzer import analyze, find_dates, normalize_text, prepare
from kb_retrieval.text.quantities import extract_quantities

SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+|\n+")
MIN_SHARED_TERMS = 2
# A longer "sentence" is a flattened table or list (many statements in one line): not read.
MAX_SENTENCE_WORDS = 40
# Texts whose sentence analysis is kept per process (least recently used dropped).
SENTENCE_CACHE_TEXTS = 4096
# Dates closer than this are read as days of one departure's programme, not two departures.
MIN_DEPARTURE_GAP_DAYS = 28


def answer_values(plan: QueryPlan, text: str) -> frozenset[str]:
    """Values stated by the sentences of `text` that use two words of the direct question."""
    asked = set(analyze(plan.variants[0].text)) if plan.variants else set()
    need = min(MIN_SHARED_TERMS, len(asked))
    if not need:
        return frozenset()
    values: set[str] = set()
    for sentence in read_sentences(text):
        if len(asked & sentence.terms) >= need:
            values.update(sentence.labels)
    return frozenset(values)


class ReadSentence(NamedTuple):
    """A read sentence of a text (prepared, at most `MAX_SENTENCE_WORDS` words)."""

    text: str
    terms: frozenset[str]
    labels: tuple[str, ...]
    # The analyzed words of its quantities ("45 days": "day"), not words of what it is about.
    value_terms: frozenset[str]


@lru_cache(maxsize=SENTENCE_CACHE_TEXTS)
def read_sentences(text: str) -> tuple[ReadSentence, ...]:
    """Each read sentence of `text`: its analyzed terms and its quantities' labels and words.
    A function of the text alone, kept per process for the `SENTENCE_CACHE_TEXTS` texts used
    last: a tenant's answering chunks recur across e-mails (also read by `precedence.py`)."""
    out = []
    for sentence in SENTENCE_SPLIT.split(prepare(text)):
        if len(sentence.split()) <= MAX_SENTENCE_WORDS:
            quantities = extract_quantities(sentence)
            out.append(
                ReadSentence(
                    sentence,
                    frozenset(analyze(sentence)),
                    tuple(q.label for q in quantities),
                    frozenset().union(*(analyze(q.text) for q in quantities)),
                )
            )
    return tuple(out)


def departures_agree(
    plan: QueryPlan,
    answering: Sequence[Candidate],
    doc_ids: Collection[str],
    chunks: Sequence[Candidate],
) -> bool:
    """Every departure of `doc_ids` states the answer values of each `answering` chunk of the
    other departures in answer sentences of its own `chunks`. False when there are fewer than two departures
    or no answering chunk states a value: nothing shows that they agree."""
    if len(doc_ids) < 2:
        return False
    memo: dict[str, frozenset[str]] = {}  # per text: answering chunks are among `chunks`

    def values_of(text: str) -> frozenset[str]:
        if text not in memo:
            memo[text] = answer_values(plan, text)
        return memo[text]

    stated = {
        doc_id: frozenset().union(
            *(values_of(c.text) for c in chunks if c.version.doc_id == doc_id)
        )
        for doc_id in doc_ids
    }
    compared = False
    for chunk in answering:
        if chunk.version.doc_id not in doc_ids:
            continue
        values = values_of(chunk.text)
        if not values:
            continue
        compared = True
        for doc_id in doc_ids:
            if doc_id != chunk.version.doc_id and not values <= stated[doc_id]:
                return False
    return compared


def departures_differ_within(plan: QueryPlan, text: str) -> bool:
    """One chunk (an itinerary listing several departures) gives the answer per departure, and
    the answers differ: two or more of its answer sentences each name one date and state
    different values of the kind the question asks for ("what time": a time of day).

    An answer sentence (at most `MAX_SENTENCE_WORDS` words) shares a word with the direct
    question and states a value of an asked kind; when the question asks for no kind of value,
    it shares `MIN_SHARED_TERMS` words and any value counts. The dates must lie at least
    `MIN_DEPARTURE_GAP_DAYS` apart: the dated days of one departure's programme ("14 June: meet
    at 09:00", "15 June: start at 08:00") are not departures.
    """
    if not plan.variants:
        return False
    question = frozenset(analyze(plan.variants[0].text))
    kinds = asked_kinds(plan.guest_text or plan.normalized_text)
    need = 1 if kinds else MIN_SHARED_TERMS
    per_date: dict[str, frozenset[str]] = {}
    for dates, terms, values in _dated_sentences(text):
        stated = frozenset(label for kind, label in values if not kinds or kind in kinds)
        if len(dates) != 1 or not stated or len(question & terms) < need:
            continue
        per_date[dates[0]] = per_date.get(dates[0], frozenset()) | stated
    return any(
        per_date[a] != per_date[b] and _days_apart(a, b) >= MIN_DEPARTURE_GAP_DAYS
        for a, b in combinations(sorted(per_date), 2)
    )


def _days_apart(a: str, b: str) -> int:
    """Days between two canonical dates ("sep 18", or "sep" for a month: its 15th) within a
    year, the shorter way round the calendar."""
    first, second = _day_of_year(a), _day_of_year(b)
    gap = abs(first - second)
    return min(gap, 365 - gap)


def _day_of_year(canonical: str) -> int:
    month, _, day = canonical.partition(" ")
    days = int(day.split()[0]) if day else 15
    return _MONTH_STARTS[_MONTHS.index(month)] + days


_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_MONTH_STARTS = (0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334)


@lru_cache(maxsize=SENTENCE_CACHE_TEXTS)
def _dated_sentences(
    text: str,
) -> tuple[tuple[tuple[str, ...], frozenset[str], tuple[tuple[str, str], ...]], ...]:
    """Each read sentence of `text`: the dates it names (canonical, in order; the days when it
    names any), its analyzed terms and its quantities (kind, label). Kept per process like
    `read_sentences`."""
    out = []
    for sentence in SENTENCE_SPLIT.split(normalize_text(text)):
        if not sentence or len(sentence.split()) > MAX_SENTENCE_WORDS:
            continue
        named = list(dict.fromkeys(d.canonical for d in find_dates(sentence.casefold())))
        # "the June departure (7 June 2027)" names one date: a month alone yields to a day
        days = [d for d in named if any(ch.isdigit() for ch in d)]
        dates = tuple(days or named)
        quantities = tuple((q.kind, q.label) for q in extract_quantities(sentence))
        out.append((dates, frozenset(analyze(sentence)), quantities))
    return tuple(out)


def states_kind_asked(plan: QueryPlan, chunks: Sequence[Candidate]) -> bool:
    """Whether the departures' `chunks` could decide the answer: True unless the question asks
    for a kind of value (`asked_kinds`: an age, a price, a time; an age also when it speaks of a
    guest's age, the age intent) that none of them states anywhere (tables included). Two
    departures' itineraries that state no age do not make "is she old enough" depend on which
    departure the guest takes. A time of day asked is a departure's own logistics: always True
    (one chunk of an itinerary may hold the times of another)."""
    kinds = asked_kinds(plan.guest_text or plan.normalized_text)
    if "age" in plan.intents:
        kinds |= {"age"}
    if not kinds or "time_of_day" in kinds:
        return True
    wanted = kinds | {"percent"} if "currency" in kinds else kinds
    return any(wanted & stated_kinds(c.text) for c in chunks)
