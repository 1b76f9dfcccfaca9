"""Numeric quantities in policy text: durations, percentages, money, ages, times, weights.

Only what conflict detection needs: each quantity carries a normalised value, a unit that
says how it may be compared, its surface form and a few normalised words of context from
which `topic_of` tells what the quantity is about (cancellation window, deposit, ...).
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

_SMALL = (
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
)
_TENS = {
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "eighty": 80,
    "ninety": 90,
}
_WORD_VALUES = {word: float(i) for i, word in enumerate(_SMALL)} | {
    word: float(value) for word, value in _TENS.items()
}
NUMBER_WORD_VALUES: dict[str, float] = dict(_WORD_VALUES)
"""Spelled-out numbers zero..nineteen and the tens up to ninety (shared with the support judge)."""
_TEN_ALT = "|".join(sorted(_TENS, key=len, reverse=True))
_SMALL_ALT = "|".join(sorted(_SMALL, key=len, reverse=True))
_DIGIT_ALT = "|".join(sorted(_SMALL[1:10], key=len, reverse=True))
_WORD_NUM = rf"(?:(?:{_TEN_ALT})(?:[- ](?:{_DIGIT_ALT}))?|{_SMALL_ALT})"
_NUM = rf"(?:\d+(?:\.\d+)?|{_WORD_NUM}(?![a-z]))"
_START = r"(?<![\w.,:$€£])"

_DURATION_UNITS: dict[str, tuple[str, float]] = {
    "minute": ("minutes", 1 / 60),
    "min": ("minutes", 1 / 60),
    "hour": ("hours", 1.0),
    "hr": ("hours", 1.0),
    "h": ("hours", 1.0),
    "day": ("days", 24.0),
    "week": ("weeks", 168.0),
    "fortnight": ("weeks", 336.0),
    "month": ("months", 720.0),
    "year": ("years", 8760.0),
}
_UNIT_FACTORS = {"minutes": 1 / 60, "hours": 1.0, "days": 24.0, "business days": 24.0}
_UNIT_FACTORS |= {"weeks": 168.0, "months": 720.0, "years": 8760.0}

_DURATION = re.compile(
    rf"{_START}(?P<n>{_NUM})(?:\s*(?:-|–|to|and)\s*(?P<n2>{_NUM}))?\+?[\s-]*"
    r"(?:(?P<q>calendar|business|working|clear|full)[\s-]+)?"
    r"(?P<u>minutes?|mins?|hours?|hrs?|h|days?|weeks?|fortnights?|months?|years?)\b['’]?",
    re.I,
)
_A_DURATION = re.compile(r"\ban?\s+(?P<u>hour|week|fortnight|month|year)\b", re.I)
_PERCENT = re.compile(rf"{_START}(?P<n>{_NUM})\s*(?:%|per\s*cent\b|percent\b)", re.I)
_AMOUNT = r"(?P<a>\d{1,3}(?:,\d{3})+(?:\.\d{1,2})?|\d+(?:\.\d{1,2})?)(?![\d,.]\d)"
_CODES = "USD|EUR|GBP|CHF|AUD|CAD|NZD|JPY|NOK|SEK|DKK|ISK|ZAR|INR|MXN|NPR|PEN|CLP|ARS|THB"
_SYMBOLS = {"US$": "USD", "A$": "AUD", "AU$": "AUD", "NZ$": "NZD", "C$": "CAD", "CA$": "CAD"}
_SYMBOLS |= {"$": "USD", "€": "EUR", "£": "GBP", "¥": "JPY"}
_MONEY_WORDS = {"euro": "EUR", "euros": "EUR", "dollar": "USD", "dollars": "USD"}
_MONEY_WORDS |= {"franc": "CHF", "francs": "CHF"}
_SYMBOL_ALT = r"US\$|AU?\$|NZ\$|CA?\$|\$|€|£|¥"
_CURRENCY_BEFORE = re.compile(
    rf"(?:(?<![A-Za-z])(?P<sym>{_SYMBOL_ALT})|\b(?P<code>{_CODES}))\s?{_AMOUNT}"
)
_CURRENCY_AFTER = re.compile(
    rf"(?<![\w.,]){_AMOUNT}\s?(?:(?P<code>{_CODES})\b|(?P<sym>€|£)"
    r"|(?P<word>(?i:euros?|dollars?|francs?))\b)"
)
_WEIGHT = re.compile(rf"{_START}(?P<n>{_NUM})\s*-?\s*(?P<u>kgs?|kilograms?|kilos?|lbs?)\b", re.I)
_YEARS = r"(?:\s*(?:years?|yrs?)(?:[\s-]+(?:old|of\s+age))?)"
_OVER = r"(?:and|or)\s+(?:over|older|above|up(?:wards)?)"
_AGE_MIN = re.compile(
    "|".join(
        (
            rf"\bminimum\s+age(?:\s+(?:of|is|requirement(?:\s+is)?))?\s*[:\-–]?\s*(?P<a>{_NUM})"
            rf"(?:\s*\+)?{_YEARS}?",
            rf"\b(?:aged?|ages)\s+(?P<b>{_NUM})\s*(?:\+{_YEARS}?|{_YEARS}?\s*{_OVER})",
            rf"{_START}(?P<c>{_NUM})\s*\+{_YEARS}",
            rf"{_START}(?P<d>{_NUM}){_YEARS}\s+{_OVER}",
            rf"\bat\s+least\s+(?P<e>{_NUM})\s*(?:years?|yrs?)[\s-]+(?:old|of\s+age)",
            rf"\bmust\s+be\s+(?P<g>{_NUM})\s*(?:years?|yrs?)[\s-]+(?:old|of\s+age)",
        )
    ),
    re.I,
)
_AGE_UNDER = re.compile(
    rf"\b(?:under|below|younger\s+than)\s+(?P<n>{_NUM})"
    rf"(?:{_YEARS}|s\b|-year-olds?\b|(?=\s*(?:[,.;:)!?]|$)|\s+(?:must|are|is|need|needs|require"
    r"|requires|cannot|can't|may|should|will|travel|participate|not)\b))",
    re.I,
)
_AGE_OVER = re.compile(
    rf"\b(?:over|above|older\s+than)\s+(?P<n>{_NUM})"
    r"(?:\s*(?:years?|yrs?)[\s-]+(?:old|of\s+age)|s\b)",
    re.I,
)
_AGE_MAX = re.compile(
    rf"\b(?:aged?|ages|children|kids|child|infants?)\s+(?P<n>{_NUM}){_YEARS}?\s+"
    r"(?:and|or)\s+(?:under|younger|below)\b",
    re.I,
)
_AMPM = re.compile(
    r"(?<![\w:.])(?P<h>1[0-2]|0?[1-9])(?:[:.](?P<m>[0-5]\d))?\s*(?P<ap>[ap])(?:m\b|\.m\b\.?)", re.I
)
_CLOCK = re.compile(r"(?<![\w:.])(?P<h>[01]?\d|2[0-3])(?::|h)(?P<m>[0-5]\d)(?![\d:])", re.I)
_NAMED_TIME = re.compile(r"\b(?:12\s+)?(?P<w>noon|midday|midnight)\b", re.I)
_BOUNDARY = re.compile(r"[.!?](?=\s|$)|\n")
_WINDOW = 8
_MAX_DISTANCE = 6


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
            amount = round(self.value / _UNIT_FACTORS[self.unit], 3)
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


def parse_number(text: str) -> float | None:
    """A digit string or an English number word ("seven", "twenty-one") as a float."""
    cleaned = text.strip().lower()
    if re.fullmatch(r"\d+(?:\.\d+)?", cleaned):
        return float(cleaned)
    parts = re.split(r"[- ]+", cleaned)
    if not parts or any(part not in _WORD_VALUES for part in parts):
        return None
    return sum(_WORD_VALUES[part] for part in parts)


def _tokens(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


class _Extractor:
    """Collects non-overlapping matches in priority order and builds their contexts."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.taken: list[tuple[int, int]] = []
        self.found: list[tuple[int, Quantity]] = []
        self.bounds = [m.end() for m in _BOUNDARY.finditer(text)]

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
        before = _tokens(self.text[sentence_start:start])[-_WINDOW:]
        after = _tokens(self.text[end : max(end, sentence_end)])[:_WINDOW]
        context = " ".join([*before, "#", *after])
        surface = " ".join(match.group(0).split())
        self.found.append((start, Quantity(kind, value, unit, surface, context)))


def _first_group(match: re.Match[str], names: str) -> str:
    return next(match.group(name) for name in names if match.group(name) is not None)


def _times(ex: _Extractor) -> None:
    for m in _AMPM.finditer(ex.text):
        if ex.claim(m):
            hour = int(m.group("h")) % 12 + (12 if m.group("ap").lower() == "p" else 0)
            ex.add(m, "time_of_day", float(hour * 60 + int(m.group("m") or 0)), "hh:mm")
    for m in _NAMED_TIME.finditer(ex.text):
        if ex.claim(m):
            ex.add(m, "time_of_day", 0.0 if m.group("w").lower() == "midnight" else 720.0, "hh:mm")
    for m in _CLOCK.finditer(ex.text):
        if ex.claim(m):
            ex.add(m, "time_of_day", float(int(m.group("h")) * 60 + int(m.group("m"))), "hh:mm")


def _ages(ex: _Extractor) -> None:
    for pattern, unit in (
        (_AGE_MIN, "min"),
        (_AGE_OVER, "over"),
        (_AGE_MAX, "max"),
        (_AGE_UNDER, "under"),
    ):
        for m in pattern.finditer(ex.text):
            raw = _first_group(m, "abcdeg") if unit == "min" else m.group("n")
            value = parse_number(raw)
            if value is not None and 0 < value < 120 and ex.claim(m):
                ex.add(m, "age", value, unit)


def _money(ex: _Extractor) -> None:
    before = list(_CURRENCY_BEFORE.finditer(ex.text))
    for m in [*before, *_CURRENCY_AFTER.finditer(ex.text)]:
        if m.groupdict().get("word"):
            code = _MONEY_WORDS[m.group("word").lower()]
        elif m.group("sym"):
            code = _SYMBOLS[m.group("sym")]
        else:
            code = m.group("code")
        if ex.claim(m):
            ex.add(m, "currency", float(m.group("a").replace(",", "")), code)


def _durations(ex: _Extractor) -> None:
    for m in _DURATION.finditer(ex.text):
        raw = m.group("u").lower().rstrip("s")
        unit, factor = _DURATION_UNITS[raw]
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
    for m in _A_DURATION.finditer(ex.text):
        raw = m.group("u").lower()
        unit, factor = _DURATION_UNITS[raw]
        if ex.claim(m):
            ex.add(m, "duration", factor, unit)


def _simple(ex: _Extractor) -> None:
    for m in _PERCENT.finditer(ex.text):
        value = parse_number(m.group("n"))
        if value is not None and ex.claim(m):
            ex.add(m, "percent", value, "%")
    for m in _WEIGHT.finditer(ex.text):
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


@dataclass(frozen=True)
class _Topic:
    name: str
    kinds: frozenset[str]
    keywords: tuple[tuple[str, ...], ...]
    vetoes: tuple[str, ...] = ()
    requires: tuple[str, ...] = ()


def _topic(name: str, kinds: str, keywords: str, vetoes: str = "", requires: str = "") -> _Topic:
    """A topic: which quantity kinds it applies to, its keywords ("_" joins the words of one
    keyword, "*" ends a prefix), words that rule it out and words one of which it needs."""
    words = tuple(tuple(k.split("_")) for k in keywords.split())
    return _Topic(
        name, frozenset(kinds.split()), words, tuple(vetoes.split()), tuple(requires.split())
    )


_MONEYISH = "duration percent currency"
TOPICS: tuple[_Topic, ...] = (
    _topic(
        "refund_processing",
        "duration",
        "process* issued reimburs* credited take takes appear* card bank account*",
        requires="refund* reimburs* credit* money",
    ),
    _topic(
        "cancellation_fee",
        "currency percent",
        "cancellation_fee* cancellation_charge* admin*_fee* administration_fee*",
    ),
    _topic("amendment", _MONEYISH, "amend* change_fee* name_change* date_change* rebook*"),
    _topic("deposit", _MONEYISH, "deposit*"),
    _topic(
        "payment_due",
        _MONEYISH,
        "balance final_payment* full_payment* paid_in_full payment* instal*",
    ),
    _topic("complaint", "duration", "complain* claim*"),
    _topic(
        "cancellation", "duration percent", "cancel* refund* forfeit* penalt* retain* withdraw*"
    ),
    _topic("guardian", "age", "accompan* guardian* parent* adult* supervis* consent"),
    _topic(
        "minimum_age",
        "age",
        "minimum_age age aged ages child* minor* kid* participant* guest* traveller* traveler*",
        "discount* price* rate* free pay* cost* fare* concession* reduc* ticket* medical* "
        "certificat* doctor* physician* insur* clearance senior* supplement* sign signs signed "
        "signing signature* driv* licen* alcohol drink* rent*",
    ),
    _topic("check_in", "time_of_day duration", "check_in checkin arriv* registration report meet*"),
    _topic("check_out", "time_of_day", "check_out checkout"),
    _topic("pickup", "time_of_day", "pick_up pickup* collect* transfer* shuttle*"),
    _topic("departure_time", "time_of_day", "depart* leave* leaves set_off"),
    _topic("return_time", "time_of_day", "return* finish*"),
    _topic("luggage_weight", "weight", "luggage baggage bag bags suitcase* duffel* backpack*"),
    _topic("discount", "percent currency", "discount* off save saving* early_bird promo*"),
)
TRIP_SPECIFIC_TOPICS = frozenset(
    {"check_in", "check_out", "pickup", "departure_time", "return_time", "luggage_weight"}
    | {"discount"}
)
_TOPICS_BY_NAME = {topic.name: topic for topic in TOPICS}
_BOOKING_ANCHORS = frozenset({"booking", "booked", "purchase", "reservation", "confirmation"})


def _word_matches(pattern: str, token: str) -> bool:
    return token.startswith(pattern[:-1]) if pattern.endswith("*") else token == pattern


class _TokenIndex:
    """Where each word pattern ("refund", "cancel*") occurs in a token list, computed once."""

    def __init__(self, tokens: list[str]) -> None:
        self.tokens = tokens
        self._exact: dict[str, list[int]] = {}
        for index, token in enumerate(tokens):
            self._exact.setdefault(token, []).append(index)
        self._prefix: dict[str, list[int]] = {}

    def starts(self, pattern: str) -> list[int]:
        if not pattern.endswith("*"):
            return self._exact.get(pattern, [])
        found = self._prefix.get(pattern)
        if found is None:
            stem = pattern[:-1]
            found = [i for i, token in enumerate(self.tokens) if token.startswith(stem)]
            self._prefix[pattern] = found
        return found


def _keyword_hits(index: _TokenIndex, keyword: tuple[str, ...]) -> list[tuple[int, int]]:
    """(first, last) token index of each occurrence of `keyword`."""
    tokens, size = index.tokens, len(keyword)
    last_start = len(tokens) - size
    starts = index.starts(keyword[0])
    return [
        (i, i + size - 1)
        for i in starts
        if i <= last_start
        and all(
            _word_matches(p, t) for p, t in zip(keyword[1:], tokens[i + 1 : i + size], strict=True)
        )
    ]


def topic_of(context: str, kind: str | None = None) -> str | None:
    """What a quantity is about: the topic whose keyword is nearest to "#" in `context`.

    Only topics that accept `kind` (and whose required words occur) are considered; a keyword
    farther than six words away does not count; ties go to the longer keyword, then to the
    earlier topic of TOPICS; a veto word of the chosen topic gives None. A duration
    about cancellation anchored on the booking date ("within 24 hours of booking") is the
    separate topic cancellation_after_booking.
    """
    tokens = context.split() if "#" in context.split() else _tokens(context)
    anchor = tokens.index("#") if "#" in tokens else None
    index = _TokenIndex(tokens)
    candidates: list[tuple[int, int, int]] = []
    for priority, topic in enumerate(TOPICS):
        if kind is not None and kind not in topic.kinds:
            continue
        if topic.requires and not _mentions(tokens, topic.requires):
            continue
        for keyword in topic.keywords:
            for first, last in _keyword_hits(index, keyword):
                distance = 0 if anchor is None else max(anchor - last, first - anchor)
                if distance <= _MAX_DISTANCE:
                    candidates.append((distance, -len(keyword), priority))
    if not candidates:
        return None
    topic = TOPICS[min(candidates)[2]]
    if _mentions(tokens, topic.vetoes):
        return None
    after = set(tokens[anchor + 1 : anchor + 4]) if anchor is not None else set()
    if topic.name == "cancellation" and kind == "duration" and _BOOKING_ANCHORS & after:
        return "cancellation_after_booking"
    return topic.name


def _mentions(tokens: list[str], patterns: tuple[str, ...]) -> bool:
    return any(_word_matches(p, t) for p in patterns for t in tokens)


def quantity_topic(quantity: Quantity) -> str | None:
    """topic_of for a quantity, with the age rules: a bare "16+" is a minimum age; an upper
    bound ("under 18") only counts when it is about accompaniment/consent."""
    topic = topic_of(quantity.context, quantity.kind)
    if quantity.kind != "age":
        return topic
    if quantity.unit != "min":
        return topic if topic == "guardian" else None
    vetoes = _TOPICS_BY_NAME["minimum_age"].vetoes
    if topic is None and not _mentions(_tokens(quantity.context), vetoes):
        return "minimum_age"
    return topic
