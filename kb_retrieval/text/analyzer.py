"""Lexical analyzer shared by BM25 indexing and querying: same tokens on both sides."""

from __future__ import annotations

import calendar
import hashlib
import re
import threading
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

import Stemmer

# NLTK English stopwords (apostrophe-free forms; contractions are expanded before splitting),
# minus the negations "no" and "not", plus the e-mail courtesy words of spec 4.
STOPWORDS: tuple[str, ...] = (
    "a", "about", "above", "after", "again", "against", "ain", "all", "am", "an", "and", "any",
    "are", "aren", "as", "at", "be", "because", "been", "before", "being", "below", "between",
    "both", "but", "by", "can", "couldn", "d", "did", "didn", "do", "does", "doesn", "doing",
    "don", "down", "during", "each", "few", "for", "from", "further", "had", "hadn", "has",
    "hasn", "have", "haven", "having", "he", "her", "here", "hers", "herself", "him",
    "himself", "his", "how", "i", "if", "in", "into", "is", "isn", "it", "its", "itself",
    "just", "ll", "m", "ma", "me", "mightn", "more", "most", "mustn", "my", "myself", "needn",
    "nor", "now", "o", "of", "off", "on", "once", "only", "or", "other", "our", "ours",
    "ourselves", "out", "over", "own", "please", "re", "s", "same", "shan", "she", "should",
    "shouldn", "so", "some", "such", "t", "than", "thank", "thanks", "that", "the", "their",
    "theirs", "them", "themselves", "then", "there", "these", "they", "this", "those",
    "through", "to", "too", "under", "until", "up", "ve", "very", "was", "wasn", "we", "were",
    "weren", "what", "when", "where", "which", "while", "who", "whom", "why", "will", "with",
    "won", "wouldn", "y", "you", "your", "yours", "yourself", "yourselves",
)  # fmt: skip

# Domain-critical short words that must never be treated as stopwords.
KEEP_TERMS: tuple[str, ...] = ("age", "fee", "pfd", "waiver", "not", "no", "non", "min", "max")

_STOPWORD_SET = frozenset(STOPWORDS) - frozenset(KEEP_TERMS)

MONTH_ABBREVIATIONS: dict[str, str] = {
    "january": "jan", "february": "feb", "march": "mar", "april": "apr", "june": "jun",
    "july": "jul", "august": "aug", "september": "sep", "sept": "sep", "october": "oct",
    "november": "nov", "december": "dec",
}  # fmt: skip
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_MONTH_NUMBERS: dict[str, int] = {name: index for index, name in enumerate(_MONTHS, start=1)}

_MONTH = (
    r"(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
)
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"(?:,?\s+((?:19|20)\d{2})(?!\d))?"
_DATE_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("iso", re.compile(r"\b((?:19|20)\d{2})-(\d{1,2})-(\d{1,2})\b")),
    ("month_day", re.compile(rf"\b{_MONTH}\s+{_DAY}\b{_YEAR}", re.IGNORECASE)),
    ("day_month", re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MONTH}(?![a-z]){_YEAR}", re.IGNORECASE)),
    ("slash", re.compile(r"(?<![\d/])(\d{1,2})/(\d{1,2})(?:/(\d{4}|\d{2}))?(?![\d/])")),
    (
        "month_only",
        re.compile(
            r"\b(?:(january|february|april|june|july|august|september|october|november"
            r"|december)|(?:in|during|early|mid|late|by|until|since|through)\s+(may|march))"
            rf"\b{_YEAR}",
            re.IGNORECASE,
        ),
    ),
)
_SLASH_IDIOMS = frozenset({"24/7"})

_TIME_RE = re.compile(
    r"\b(\d{1,2})(?::(\d{2}))?\s*(a\.?m\.?|p\.?m\.?)(?![a-z])|\b(\d{1,2}):(\d{2})\b",
    re.IGNORECASE,
)
_CONTRACTIONS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\bwon'?t\b", re.I), "will not"),
    (re.compile(r"\bcan'?t\b", re.I), "can not"),
    (re.compile(r"\bshan't\b", re.I), "shall not"),
    (re.compile(r"\b(do|does|did|is|are|was|were|has|have|had|could|would|should|must|need)nt\b",
                re.I), r"\1 not"),
    (re.compile(r"n't\b", re.I), " not"),
)  # fmt: skip
_DASHES = dict.fromkeys(map(ord, "\u2010\u2011\u2012\u2013\u2014\u2015\u2212"), "-")
_QUOTES = {ord("\u2018"): "'", ord("\u2019"): "'", ord("\u201c"): '"', ord("\u201d"): '"'}
_TOKEN_RE = re.compile(r"\d{2}:\d{2}|[^\W_]+")
# A hyphenated compound of letters ("wi-fi", "check-in"); its parts are tokens as before.
_INNER_HYPHEN_RE = re.compile(r"(?<=[^\W\d_])-(?=[^\W\d_])")
_COMPOUND_RE = re.compile(r"[^\W\d_]+(?:-[^\W\d_]+)+")
# A compound is also indexed joined when a part is this short or a stopword: such compounds
# are written either way ("wi-fi" / "wifi", "e-mail" / "email", "pick-up" / "pickup").
JOIN_PART_MAX = 2
_ORDINAL_RE = re.compile(r"^(\d+)(?:st|nd|rd|th)$")

_STEMMER = Stemmer.Stemmer("english")
_STEMMER_LOCK = threading.Lock()

_RULES = "|".join(
    (
        *sorted(_STOPWORD_SET),
        "#",
        *(f"{k}={v}" for k, v in sorted(MONTH_ABBREVIATIONS.items())),
        f"#join<={JOIN_PART_MAX}",
    )
)
ANALYZER_VERSION: str = (
    f"en-v1+snowball-{Stemmer.version()}+{hashlib.sha256(_RULES.encode()).hexdigest()[:8]}"
)


@dataclass(frozen=True)
class DateMatch:
    """A date expression found in text: its span and canonical form ("jun 14", year separate)."""

    start: int
    end: int
    canonical: str
    year: str | None


def normalize_text(text: str) -> str:
    """NFKC, unify dashes and curly quotes, collapse whitespace (case is kept)."""
    text = unicodedata.normalize("NFKC", text).translate(_DASHES).translate(_QUOTES)
    return re.sub(r"[ \t\f\v\u00a0]+", " ", text).strip()


def expand_contractions(text: str) -> str:
    """Turn negative contractions ("can't", "doesnt") into "... not" so the negation survives."""
    for pattern, replacement in _CONTRACTIONS:
        text = pattern.sub(replacement, text)
    return text


def _valid_day(month: int, day: int) -> bool:
    return 1 <= month <= 12 and 1 <= day <= calendar.monthrange(2024, month)[1]


def _month_number(word: str) -> int:
    return _MONTH_NUMBERS[word.casefold().rstrip(".")[:3]]


def _canonical(month: int, day: int | None, year: str | None) -> str:
    parts = [_MONTHS[month - 1]]
    if day is not None:
        parts.append(str(day))
    if year:
        parts.append(year)
    return " ".join(parts)


def _date_from_match(kind: str, match: re.Match[str]) -> tuple[int, int | None, str | None] | None:
    groups = match.groups()
    if kind == "iso":
        month, day, year = int(groups[1]), int(groups[2]), groups[0]
    elif kind == "month_day":
        month, day, year = _month_number(groups[0]), int(groups[1]), groups[2]
    elif kind == "day_month":
        month, day, year = _month_number(groups[1]), int(groups[0]), groups[2]
    elif kind == "slash":
        if match.group(0) in _SLASH_IDIOMS:
            return None
        first, second = int(groups[0]), int(groups[1])
        month, day = (first, second) if first <= 12 else (second, first)
        year = groups[2]
        if year is not None and len(year) == 2:
            year = "20" + year
    else:
        return _month_number(groups[0] or groups[1]), None, groups[2]
    return (month, day, year) if _valid_day(month, day) else None


def find_dates(text: str) -> list[DateMatch]:
    """Non-overlapping date expressions of text, leftmost first (earlier pattern wins a tie)."""
    found: list[DateMatch] = []
    taken = bytearray(len(text))
    for kind, pattern in _DATE_PATTERNS:
        for match in pattern.finditer(text):
            start, end = match.span()
            if any(taken[start:end]):
                continue
            parsed = _date_from_match(kind, match)
            if parsed is None:
                continue
            month, day, year = parsed
            found.append(DateMatch(start, end, _canonical(month, day, None), year))
            taken[start:end] = b"\x01" * (end - start)
    return sorted(found, key=lambda item: item.start)


def canonicalize_dates(text: str) -> str:
    """Replace date expressions with canonical tokens: "14th of June, 2026" -> "jun 14 2026"."""
    pieces: list[str] = []
    cursor = 0
    for date in find_dates(text):
        pieces.append(text[cursor : date.start])
        pieces.append(date.canonical + (f" {date.year}" if date.year else ""))
        cursor = date.end
    pieces.append(text[cursor:])
    return "".join(pieces)


def _time_token(match: re.Match[str]) -> str:
    hour_ampm, minute_ampm, meridiem, hour_24, minute_24 = match.groups()
    if meridiem is None:
        hour, minute = int(hour_24), int(minute_24)
        if hour > 23 or minute > 59:
            return match.group(0)
    else:
        hour, minute = int(hour_ampm), int(minute_ampm or 0)
        if not 1 <= hour <= 12 or minute > 59:
            return match.group(0)
        hour = hour % 12 + (12 if meridiem.casefold().startswith("p") else 0)
    return f"{hour:02d}:{minute:02d}"


def canonicalize_times(text: str) -> str:
    """Replace clock times with 24-hour "HH:MM" tokens: "6am", "6:00 a.m." -> "06:00"."""
    return _TIME_RE.sub(_time_token, text)


def prepare(text: str) -> str:
    """Normalised, case-folded text with contractions, dates and times canonicalised."""
    text = expand_contractions(normalize_text(text).casefold())
    return canonicalize_times(canonicalize_dates(text))


@lru_cache(maxsize=200_000)
def _stem(word: str) -> str:
    with _STEMMER_LOCK:
        return _STEMMER.stemWord(word)


def normalize_token(token: str) -> str:
    """Month names to abbreviations, ordinals and leading zeros off numbers, Snowball stem."""
    if token in MONTH_ABBREVIATIONS:
        return MONTH_ABBREVIATIONS[token]
    ordinal = _ORDINAL_RE.match(token)
    if ordinal:
        token = ordinal.group(1)
    if token.isdecimal():
        return str(int(token)) if len(token) <= 2 else token
    if ":" in token or not token.isalpha() or token in _MONTH_NUMBERS:
        return token
    return _stem(token)


def is_stopword(token: str) -> bool:
    return token in _STOPWORD_SET


def analyze(text: str) -> list[str]:
    """BM25 terms of text, in order: normalise, split, drop stopwords, stem; a joinable
    compound (`joined_compound`) adds its joined form after its parts."""
    prepared = prepare(text)
    joined = _joined_compounds(prepared) if "-" in prepared else {}
    terms: list[str] = []
    start = 0
    for end, compound in [*sorted(joined.items()), (len(prepared), "")]:
        terms += [
            normalize_token(t)
            for t in _TOKEN_RE.findall(prepared, start, end)
            if t not in _STOPWORD_SET
        ]
        if compound:
            terms.append(normalize_token(compound))
        start = end
    return terms


def _joined_compounds(prepared: str) -> dict[int, str]:
    """End offset -> joined form of each joinable compound standing alone (not part of a code
    such as "ab-12-cd" or of a longer hyphenated run)."""
    found: dict[int, str] = {}
    covered = -1
    for hyphen in _INNER_HYPHEN_RE.finditer(prepared):
        if hyphen.start() < covered:
            continue
        start = hyphen.start()
        while start and (prepared[start - 1].isalpha() or prepared[start - 1] == "-"):
            start -= 1
        match = _COMPOUND_RE.match(prepared, start)
        if match is None:
            continue
        start, end = match.span()
        covered = end
        if start and (prepared[start - 1].isalnum() or prepared[start - 1] in "-_"):
            continue
        if end < len(prepared) and (prepared[end].isalnum() or prepared[end] in "-_"):
            continue
        if joined := joined_compound(match.group(0)):
            found[end] = joined
    return found


def joined_compound(compound: str) -> str | None:
    """The joined form of a hyphenated compound ("wi-fi" -> "wifi") one of whose parts is at
    most `JOIN_PART_MAX` letters or a stopword, else None ("sea-kayak" stays two words)."""
    parts = compound.split("-")
    if any(len(p) <= JOIN_PART_MAX or p in _STOPWORD_SET for p in parts):
        return "".join(parts)
    return None


def term_frequencies(text: str) -> dict[str, int]:
    """Term -> count for the analyzed text, keys in sorted order."""
    counts: dict[str, int] = {}
    for term in analyze(text):
        counts[term] = counts.get(term, 0) + 1
    return dict(sorted(counts.items()))
