"""Numeric quantities in policy text: durations, percentages, money, ages, times, weights.

Only what conflict detection needs: each quantity carries a normalised value, a unit that
says how it may be compared, its surface form and a few normalised words of context from
which `topic_of` tells what the quantity is about (cancellation window, deposit, ...).
The patterns and number words are in `quantity_patterns.py`, the topics and `topic_of` in
`quantity_topics.py`; the names callers import from here are re-exported.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

from kb_retrieval.text.quantity_patterns import (
    A_DURATION,
    AGE_MAX,
    AGE_MIN,
    AGE_OVER,
    AGE_UNDER,
    AMPM,
    BOUNDARY,
    CLOCK,
    CURRENCY_AFTER,
    CURRENCY_BEFORE,
    DURATION,
    DURATION_UNITS,
    MONEY_WORDS,
    NAMED_TIME,
    NUMBER_WORD_VALUES,
    PERCENT,
    SYMBOLS,
    UNIT_FACTORS,
    WEIGHT,
    parse_number,
    word_tokens,
)
from kb_retrieval.text.quantity_topics import (
    TOPICS,
    TOPICS_BY_NAME,
    TRIP_SPECIFIC_TOPICS,
    mentions,
    topic_of,
)

__all__ = [
    "NUMBER_WORD_VALUES",
    "TOPICS",
    "TRIP_SPECIFIC_TOPICS",
    "Quantity",
    "extract_quantities",
    "parse_number",
    "quantity_topic",
    "topic_of",
]

_WINDOW = 8


@dataclass(frozen=True)
class Quantity:
    """A number found in text.

    kind is duration|percent|currency|age|time_of_day|weight. value is normalised: durations in
    hours, times in minutes after midnight, weights in kg, ages in years, money in its currency.
    unit says how the number may be compared: the surface unit of a duration ("hours", "days",
    "business days", "weeks", "months", "years", "minutes"), "%", an ISO currency code, the
    age bound ("min" for 16+, "over" for over 65, "under" for under 18, "max" for 12 and
    under), "hh:mm" or "kg". text is the surface form; context the words of the same sentence
    around it (at most eight each side, lower case, punctuation dropped) with "#" in its place.
    """

    kind: str
    value: float
    unit: str
    text: str
    context: str

    @property
    def label(self) -> str:
        """Short canonical rendering, e.g. "24 hours", "7 days", "50%", "USD 250", "06:00"."""
        if self.kind == "duration":
            amount = round(self.value / UNIT_FACTORS[self.unit], 3)
            unit = self.unit[:-1] if amount == 1 else self.unit
            return f"{amount:g} {unit}"
        if self.kind == "percent":
            return f"{self.value:g}%"
        if self.kind == "currency":
            amount = f"{int(self.value):,}" if self.value.is_integer() else f"{self.value:,.2f}"
            return f"{self.unit} {amount}"
        if self.kind == "age":
            templates = {"min": "{:g}+", "over": "over {:g}", "under": "under {:g}"}
            templates["max"] = "{:g} and under"
            return templates[self.unit].format(self.value)
        if self.kind == "time_of_day":
            hours, minutes = divmod(int(self.value), 60)
            return f"{hours:02d}:{minutes:02d}"
        return f"{round(self.value, 1):g} kg"


class _Extractor:
    """Collects non-overlapping matches in priority order and builds their contexts."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.taken: list[tuple[int, int]] = []
        self.found: list[tuple[int, Quantity]] = []
        self.bounds = [m.end() for m in BOUNDARY.finditer(text)]

    def claim(self, match: re.Match[str]) -> bool:
        start, end = match.span()
        if start == end or any(start < e and s < end for s, e in self.taken):
            return False
        self.taken.append((start, end))
        return True

    def add(self, match: re.Match[str], kind: str, value: float, unit: str) -> None:
        start, end = match.span()
        index = bisect.bisect_right(self.bounds, start)
        sentence_start = self.bounds[index - 1] if index else 0
        sentence_end = self.bounds[index] if index < len(self.bounds) else len(self.text)
        before = word_tokens(self.text[sentence_start:start])[-_WINDOW:]
        after = word_tokens(self.text[end : max(end, sentence_end)])[:_WINDOW]
        context = " ".join([*before, "#", *after])
        surface = " ".join(match.group(0).split())
        self.found.append((start, Quantity(kind, value, unit, surface, context)))


def _first_group(match: re.Match[str], names: str) -> str:
    return next(match.group(name) for name in names if match.group(name) is not None)


def _times(ex: _Extractor) -> None:
    for m in AMPM.finditer(ex.text):
        if ex.claim(m):
            hour = int(m.group("h")) % 12 + (12 if m.group("ap").lower() == "p" else 0)
            ex.add(m, "time_of_day", float(hour * 60 + int(m.group("m") or 0)), "hh:mm")
    for m in NAMED_TIME.finditer(ex.text):
        if ex.claim(m):
            ex.add(m, "time_of_day", 0.0 if m.group("w").lower() == "midnight" else 720.0, "hh:mm")
    for m in CLOCK.finditer(ex.text):
        if ex.claim(m):
            ex.add(m, "time_of_day", float(int(m.group("h")) * 60 + int(m.group("m"))), "hh:mm")


def _ages(ex: _Extractor) -> None:
    for pattern, unit in (
        (AGE_MIN, "min"),
        (AGE_OVER, "over"),
        (AGE_MAX, "max"),
        (AGE_UNDER, "under"),
    ):
        for m in pattern.finditer(ex.text):
            raw = _first_group(m, "abcdeg") if unit == "min" else m.group("n")
            value = parse_number(raw)
            if value is not None and 0 < value < 120 and ex.claim(m):
                ex.add(m, "age", value, unit)


def _money(ex: _Extractor) -> None:
    before = list(CURRENCY_BEFORE.finditer(ex.text))
    for m in [*before, *CURRENCY_AFTER.finditer(ex.text)]:
        if m.groupdict().get("word"):
            code = MONEY_WORDS[m.group("word").lower()]
        elif m.group("sym"):
            code = SYMBOLS[m.group("sym")]
        else:
            code = m.group("code")
        if ex.claim(m):
            ex.add(m, "currency", float(m.group("a").replace(",", "")), code)


def _durations(ex: _Extractor) -> None:
    for m in DURATION.finditer(ex.text):
        raw = m.group("u").lower().rstrip("s")
        unit, factor = DURATION_UNITS[raw]
        qualifier = (m.group("q") or "").lower()
        if qualifier in {"business", "working"} and unit == "days":
            unit = "business days"
        values = [parse_number(m.group("n"))]
        if m.group("n2"):
            values.append(parse_number(m.group("n2")))
        if any(v is None for v in values) or not ex.claim(m):
            continue
        for value in values:
            ex.add(m, "duration", float(value or 0.0) * factor, unit)
    for m in A_DURATION.finditer(ex.text):
        raw = m.group("u").lower()
        unit, factor = DURATION_UNITS[raw]
        if ex.claim(m):
            ex.add(m, "duration", factor, unit)


def _simple(ex: _Extractor) -> None:
    for m in PERCENT.finditer(ex.text):
        value = parse_number(m.group("n"))
        if value is not None and ex.claim(m):
            ex.add(m, "percent", value, "%")
    for m in WEIGHT.finditer(ex.text):
        value = parse_number(m.group("n"))
        if value is not None and ex.claim(m):
            pounds = m.group("u").lower().startswith("lb")
            ex.add(m, "weight", value * 0.45359237 if pounds else value, "kg")


def extract_quantities(text: str) -> list[Quantity]:
    """All quantities of `text`, in order of appearance (ties keep extraction order).

    Whitespace runs are squeezed first (one space, or one line break), which also keeps the
    patterns' backtracking short on pathological input."""
    ex = _Extractor(re.sub(r"\s*\n\s*", "\n", re.sub(r"[^\S\n]+", " ", text)))
    for step in (_times, _ages, _money, _durations, _simple):
        step(ex)
    return [q for _, q in sorted(ex.found, key=lambda item: item[0])]


def quantity_topic(quantity: Quantity) -> str | None:
    """topic_of for a quantity, with the age rules: a bare "16+" is a minimum age; an upper
    bound ("under 18") only counts when it is about accompaniment/consent."""
    topic = topic_of(quantity.context, quantity.kind)
    if quantity.kind != "age":
        return topic
    if quantity.unit != "min":
        return topic if topic == "guardian" else None
    vetoes = TOPICS_BY_NAME["minimum_age"].vetoes
    if topic is None and not mentions(word_tokens(quantity.context), vetoes):
        return "minimum_age"
    return topic
