"""Number words, units and the regular expressions that `quantities.py` extracts with.

Shared by the extraction (`quantities.extract_quantities`) and the topic rules
(`quantity_topics.py`); the building blocks of the patterns stay private here.
"""

from __future__ import annotations

import re

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

DURATION_UNITS: dict[str, tuple[str, float]] = {
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
UNIT_FACTORS = {"minutes": 1 / 60, "hours": 1.0, "days": 24.0, "business days": 24.0}
UNIT_FACTORS |= {"weeks": 168.0, "months": 720.0, "years": 8760.0}

DURATION = re.compile(
    rf"{_START}(?P<n>{_NUM})(?:\s*(?:-|–|to|and)\s*(?P<n2>{_NUM}))?\+?"
    r"(?:\s+or\s+(?:more|fewer|less|longer|over))?[\s-]*"
    r"(?:(?P<q>calendar|business|working|clear|full)[\s-]+)?"
    r"(?P<u>minutes?|mins?|hours?|hrs?|h|days?|weeks?|fortnights?|months?|years?)\b['’]?",
    re.I,
)
A_DURATION = re.compile(r"\ban?\s+(?P<u>hour|week|fortnight|month|year)\b", re.I)
PERCENT = re.compile(rf"{_START}(?P<n>{_NUM})\s*(?:%|per\s*cent\b|percent\b)", re.I)
_AMOUNT = r"(?P<a>\d{1,3}(?:,\d{3})+(?:\.\d{1,2})?|\d+(?:\.\d{1,2})?)(?![\d,.]\d)"
_CODES = "USD|EUR|GBP|CHF|AUD|CAD|NZD|JPY|NOK|SEK|DKK|ISK|ZAR|INR|MXN|NPR|PEN|CLP|ARS|THB"
SYMBOLS = {"US$": "USD", "A$": "AUD", "AU$": "AUD", "NZ$": "NZD", "C$": "CAD", "CA$": "CAD"}
SYMBOLS |= {"$": "USD", "€": "EUR", "£": "GBP", "¥": "JPY"}
MONEY_WORDS = {"euro": "EUR", "euros": "EUR", "dollar": "USD", "dollars": "USD"}
MONEY_WORDS |= {"franc": "CHF", "francs": "CHF"}
_SYMBOL_ALT = r"US\$|AU?\$|NZ\$|CA?\$|\$|€|£|¥"
CURRENCY_BEFORE = re.compile(
    rf"(?:(?<![A-Za-z])(?P<sym>{_SYMBOL_ALT})|\b(?P<code>{_CODES}))\s?{_AMOUNT}"
)
CURRENCY_AFTER = re.compile(
    rf"(?<![\w.,]){_AMOUNT}\s?(?:(?P<code>{_CODES})\b|(?P<sym>€|£)"
    r"|(?P<word>(?i:euros?|dollars?|francs?))\b)"
)
WEIGHT = re.compile(rf"{_START}(?P<n>{_NUM})\s*-?\s*(?P<u>kgs?|kilograms?|kilos?|lbs?)\b", re.I)
_YEARS = r"(?:\s*(?:years?|yrs?)(?:[\s-]+(?:old|of\s+age))?)"
_OVER = r"(?:and|or)\s+(?:over|older|above|up(?:wards)?)"
AGE_MIN = re.compile(
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
AGE_UNDER = re.compile(
    rf"\b(?:under|below|younger\s+than)\s+(?P<n>{_NUM})"
    rf"(?:{_YEARS}|s\b|-year-olds?\b|(?=\s*(?:[,.;:)!?]|$)|\s+(?:must|are|is|need|needs|require"
    r"|requires|cannot|can't|may|should|will|travel|participate|not)\b))",
    re.I,
)
AGE_OVER = re.compile(
    rf"\b(?:over|above|older\s+than)\s+(?P<n>{_NUM})"
    r"(?:\s*(?:years?|yrs?)[\s-]+(?:old|of\s+age)|s\b)",
    re.I,
)
AGE_MAX = re.compile(
    rf"\b(?:aged?|ages|children|kids|child|infants?)\s+(?P<n>{_NUM}){_YEARS}?\s+"
    r"(?:and|or)\s+(?:under|younger|below)\b",
    re.I,
)
AMPM = re.compile(
    r"(?<![\w:.])(?P<h>1[0-2]|0?[1-9])(?:[:.](?P<m>[0-5]\d))?\s*(?P<ap>[ap])(?:m\b|\.m\b\.?)", re.I
)
CLOCK = re.compile(r"(?<![\w:.])(?P<h>[01]?\d|2[0-3])(?::|h)(?P<m>[0-5]\d)(?![\d:])", re.I)
NAMED_TIME = re.compile(r"\b(?:12\s+)?(?P<w>noon|midday|midnight)\b", re.I)
BOUNDARY = re.compile(r"[.!?](?=\s|$)|\n")


def parse_number(text: str) -> float | None:
    """A digit string or an English number word ("seven", "twenty-one") as a float."""
    cleaned = text.strip().lower()
    if re.fullmatch(r"\d+(?:\.\d+)?", cleaned):
        return float(cleaned)
    parts = re.split(r"[- ]+", cleaned)
    if not parts or any(part not in _WORD_VALUES for part in parts):
        return None
    return sum(_WORD_VALUES[part] for part in parts)


def word_tokens(text: str) -> list[str]:
    """Lower-case runs of letters and digits (the words of a quantity's context)."""
    return re.findall(r"[a-z0-9]+", text.lower())
