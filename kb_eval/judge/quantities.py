"""Quantities in claim and evidence text: normalisation, extraction, unit-aware comparison."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from kb_retrieval.text.quantities import NUMBER_WORD_VALUES


@dataclass(frozen=True)
class Quantity:
    """A normalised number: kind (comparable dimension), value, optional range bounds."""

    kind: str
    value: float
    low: float | None = None
    high: float | None = None
    context: frozenset[str] = frozenset()

    def matches(self, other: Quantity) -> bool:
        if self.kind != other.kind:
            return False
        low, high = other.low, other.high
        if self.low is not None and self.high is not None and self.low != self.high:
            if low is None or high is None:
                return False
            return low - 1e-9 <= self.low and self.high <= high + 1e-9
        if low is not None and high is not None and low - 1e-9 <= self.value <= high + 1e-9:
            return True
        tolerance = 0.02 if self.kind in _TOLERANT_KINDS else 1e-9
        return abs(self.value - other.value) <= tolerance * max(abs(self.value), abs(other.value))


_TOLERANT_KINDS = frozenset({"mass_kg", "length_m", "speed_kmh"})
_UNIT_GROUPS: tuple[tuple[str, float, str], ...] = (
    ("duration_h", 1 / 60, "minute min"),
    ("duration_h", 1.0, "hour hr h"),
    ("duration_h", 24.0, "day|calendar day"),
    ("duration_h", 168.0, "week"),
    ("duration_h", 336.0, "fortnight"),
    ("duration_month", 1.0, "month"),
    ("duration_month", 12.0, "year"),
    ("business_day", 1.0, "business day|working day"),
    ("night", 1.0, "night"),
    ("mass_kg", 1.0, "kg kilo kilogram"),
    ("mass_kg", 0.45359237, "lb pound"),
    ("length_m", 1000.0, "km kilometre kilometer"),
    ("length_m", 1.0, "m metre meter"),
    ("length_m", 0.01, "cm"),
    ("length_m", 0.3048, "ft feet foot"),
    ("length_m", 1609.344, "mile"),
    ("speed_kmh", 1.852, "knot kn"),
    ("speed_kmh", 1.0, "km/h kph"),
    ("speed_kmh", 1.609344, "mph"),
    ("percent", 1.0, "%|percent|per cent"),
    ("volume_l", 1.0, "l litre liter"),
)
_UNITS: dict[str, tuple[str, float]] = {
    unit: (kind, factor)
    for kind, factor, names in _UNIT_GROUPS
    for unit in (names.split("|") if "|" in names else names.split())
}
_UNIT_ALT = "|".join(
    sorted(
        (re.escape(u) + ("s?" if u[-1].isalpha() and len(u) > 1 else "") for u in _UNITS),
        key=len,
        reverse=True,
    )
)
_WORD_NUMBERS = {word: int(value) for word, value in NUMBER_WORD_VALUES.items()}
_CURRENCY_GROUPS = (
    ("usd", "$ us$ usd dollar dollars"),
    ("eur", "€ eur euro euros"),
    ("gbp", "£ gbp"),
    ("chf", "chf"),
    ("cad", "cad"),
    ("aud", "aud"),
    ("nzd", "nzd"),
    ("nok", "nok kroner krone kr"),
    ("sek", "sek"),
    ("dkk", "dkk"),
)
_CURRENCIES = {name: code for code, names in _CURRENCY_GROUPS for name in names.split()}
_CONTRACTIONS: tuple[tuple[str, str], ...] = (
    (r"\bwon't\b", "will not"),
    (r"\bshan't\b", "shall not"),
    (r"\b(it|there|that|here|what|who)'s\b", r"\1 is"),
    (r"'re\b", " are"),
    (r"'ll\b", " will"),
    (r"'ve\b", " have"),
    (r"'d\b", " would"),
    (r"\bi'm\b", "i am"),
)
_FRACTIONS: tuple[tuple[str, str], ...] = (
    (r"\b(?:a|one) quarter of a million\b", "250000"),
    (r"\bhalf a million\b", "500000"),
    (r"\b(?:a|one) (?:couple|pair) of\b", "2"),
    (r"\b(?:a|one)?\s*half of\b", "50% of"),
    (r"\b(?:a|one) (?:quarter|fourth) of\b", "25% of"),
    (r"\b(?:a|one) third of\b", "33.3% of"),
    (r"\bthree(?:[ -]| of a )quarters? of\b", "75% of"),
    (r"\bhalf an hour\b", "30 minutes"),
    (r"\b(?:a|one) quarter of an hour\b", "15 minutes"),
    (r"\b(?:an|one) hour and a half\b", "90 minutes"),
    (r"\b(?:a|one) single (?=(?:minute|hour|day|week|month|year|night)s?\b)", "1 "),
    (r"\bbetween (\d+(?:\.\d+)?) and (\d+(?:\.\d+)?)\b", r"\1 to \2"),
    (r"\b(?:a|one) dozen\b", "12"),
)
_SPOKEN: tuple[tuple[str, str], ...] = (
    (r"\bhalf past (\d{1,2})\b", r"\1:30"),
    (r"\b(?:a )?quarter past (\d{1,2})\b", r"\1:15"),
    (r"\b(\d{1,2}) o'clock\b", r"\1:00"),
    (r"\b(\d{1,2})(?::(\d\d))? in the morning\b", r"\1:\2 am"),
    (r"\b(\d{1,2})(?::(\d\d))? in the (?:afternoon|evening)\b", r"\1:\2 pm"),
    (r":(?= [ap]m\b)", ""),
    (
        r"\b((?:at|by|from|until|till)\s+)(\d{1,2})(?=\s*(?:$|[,;.)](?!\d)|and\b|or\b|sharp\b|on\b))",
        r"\1\2:00",
    ),
    (r"\b(\d+) (euros?|dollars?|pounds?|francs?) (\d\d)\b", r"\1.\3 \2"),
)
# Words that may stand between a number and its unit ("1,400 vertical metres", "3 full days").
_UNIT_MODIFIERS = r"(?:vertical|extra|additional|full|whole|consecutive|further|more|clear)"
# Persons before "N years" make it an age ("children from 12 years"), like "aged" or "old".
_AGED = re.compile(
    r"\b(?:age[ds]?|child(?:ren)?|kids?|teen(?:ager)?s?|adults?|minors?|infants?|babies"
    r"|guests?|participants?|travell?ers?|people|persons?)\b"
)
_SCALES = {"hundred": 100, "thousand": 1000, "million": 1_000_000}
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_NUM = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
_RATE_TARGETS = (
    r"day|night|hour|week|month|year|person|guest|pax|trip|booking|room|group|adult|"
    r"child|traveller|participant|bag"
)
_RATE = re.compile(
    rf"(\d|%|\b(?:usd|eur|gbp|chf|dollars?|euros?|hours?|hrs?|minutes?|mins?|km|kg|miles?|"
    rf"kilometres?|per_\w+)\b)(\s*/\s*|\s+(?:per|a|an)\s+)({_RATE_TARGETS})s?\b"
)
_QUANTITY = re.compile(
    rf"(?P<time>\b(?P<th>\d{{1,2}})(?::(?P<tm>\d{{2}}))?\s*(?P<ap>a\.?m\.?|p\.?m\.?)(?![a-z])"
    rf"|\b(?P<h24>[01]?\d|2[0-3]):(?P<m24>[0-5]\d)\b|\b(?:noon|midday)\b|\bmidnight\b)"
    rf"|(?P<date>\b(?P<mon>{'|'.join(_MONTHS)})[a-z]*\.?\s+(?P<dd>\d{{1,2}})(?:st|nd|rd|th)?\b"
    rf"|\b(?P<dd2>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<mon2>{'|'.join(_MONTHS)})[a-z]*\b)"
    rf"|(?P<money>(?P<cur>us\$|\$|€|£|\b(?:usd|eur|gbp|chf|cad|aud|nzd|nok|sek|dkk)\b)\s?"
    rf"(?P<mv>{_NUM})(?:\s*(?:-|to)\s*(?P<mv3>{_NUM}))?"
    rf"|(?P<mv2>{_NUM})(?:\s*(?:-|to)\s*(?P<mv4>{_NUM}))?\s?(?:us\s)?"
    rf"(?P<cur2>usd|eur|gbp|chf|nok|sek|dkk|kroner|krone|dollars?|euros?|€)\b)"
    rf"|(?P<measure>(?P<n1>{_NUM})(?:\s*(?P<sep>-|to|or|and)\s*(?P<n2>{_NUM}))?\s*-?\s*"
    rf"(?:{_UNIT_MODIFIERS}\s+)?(?P<unit>{_UNIT_ALT})(?![a-z])(?P<old>[\s-]+old)?)"
    rf"|(?P<ordinal>\b(?:day|no\.?|number|room|stage|route)\s+\d+)"
    rf"|(?P<year>\b(?:19|20)\d\d\b)"
    rf"|(?P<bare>(?P<b1>{_NUM})(?:\s*(?P<bsep>-|to)\s*(?P<b2>{_NUM}))?)"
)


def _number(text: str) -> float:
    return float(text.replace(",", ""))


def normalise_text(text: str) -> str:
    """NFKC, lower case, plain quotes and dashes, word numbers as digits, rates marked."""
    text = unicodedata.normalize("NFKC", text).lower()
    text = text.replace("\u2019", "'").replace("\u2013", "-").replace("\u2014", " - ")
    for pattern, replacement in _CONTRACTIONS + _FRACTIONS:
        text = re.sub(pattern, replacement, text)
    text = re.sub(r"\b(\d{1,3})[ \u202f](\d{3})\b(?![.,]\d)", r"\1\2", text)
    for _ in range(3):
        text = _RATE.sub(lambda m: f"{m.group(1)} per_{m.group(3)}", text)
    text = re.sub(
        r"(\d+)\s+(?:or|and)\s+(?:more|over|older|above|longer)\s+(?=[a-z%])", r"minimum \1 ", text
    )
    text = re.sub(
        r"\b(?:a|an|one)\s+(?=(?:minute|hour|day|week|fortnight|month|year|night)s?\b)", "1 ", text
    )
    words = "|".join(sorted(_WORD_NUMBERS, key=len, reverse=True))
    text = re.sub(rf"\b({words})\b(?!\s+of\b|-way)", lambda m: str(_WORD_NUMBERS[m.group(1)]), text)
    text = re.sub(r"\b(\d+)[ -](\d)\b", _tens_and_units, text)
    for pattern, replacement in _SPOKEN:
        text = re.sub(pattern, replacement, text)
    return re.sub(
        r"\b(\d+(?:\.\d+)?) (hundred|thousand|million)\b",
        lambda m: f"{float(m.group(1)) * _SCALES[m.group(2)]:g}",
        text,
    )


def _tens_and_units(match: re.Match[str]) -> str:
    """Digits "20 5" (from "twenty-five") as 25; other digit pairs unchanged."""
    tens, units = int(match.group(1)), int(match.group(2))
    if tens % 10 == 0 and 20 <= tens <= 90:
        return str(tens + units)
    return match.group(0)


def _measure(match: re.Match[str], text: str) -> tuple[list[Quantity], str]:
    raw = match.group("unit")
    kind, factor = _UNITS.get(
        raw, _UNITS.get(raw[:-1] if raw.endswith("s") else raw, ("count", 1.0))
    )
    before = text[max(0, match.start() - 24) : match.start()]
    if kind == "duration_month" and (match.group("old") or _AGED.search(before)):
        kind, factor = "count", 1.0
    values = [_number(match.group("n1"))] + (
        [_number(match.group("n2"))] if match.group("n2") else []
    )
    scaled = [v * factor for v in values]
    if len(scaled) == 2 and match.group("sep") in {"-", "to"}:
        low, high = min(scaled), max(scaled)
        return [Quantity(kind, v, low, high) for v in scaled], " age " if kind == "count" else " "
    return [Quantity(kind, v) for v in scaled], " age " if kind == "count" else " "


def extract_quantities(text: str) -> tuple[list[tuple[Quantity, int]], str]:
    """Quantities of normalised text (each with its offset in the result) and the text with the
    quantities blanked out."""
    found: list[tuple[Quantity, int]] = []
    pieces: list[str] = []
    last = 0
    offset = 0
    for match in _QUANTITY.finditer(text):
        replacement = " "
        quantities: list[Quantity] = []
        if match.group("time"):
            if match.group("ap"):
                hour = int(match.group("th")) % 12 + (12 if match.group("ap")[0] == "p" else 0)
                minutes = hour * 60 + int(match.group("tm") or 0)
            elif match.group("h24"):
                minutes = int(match.group("h24")) * 60 + int(match.group("m24"))
            else:
                minutes = 0 if "midnight" in match.group("time") else 720
            quantities.append(Quantity("time", float(minutes)))
        elif match.group("date"):
            month = _MONTHS.index(match.group("mon") or match.group("mon2")) + 1
            day = int(match.group("dd") or match.group("dd2"))
            quantities.append(Quantity("date", month * 100.0 + day))
        elif match.group("money"):
            currency = _CURRENCIES[(match.group("cur") or match.group("cur2")).strip()]
            amounts = [_number(match.group("mv") or match.group("mv2"))]
            second = match.group("mv3") or match.group("mv4")
            if second:
                amounts.append(_number(second))
            bounds = (min(amounts), max(amounts)) if second else (None, None)
            quantities.extend(Quantity(f"money_{currency}", a, *bounds) for a in amounts)
        elif match.group("measure"):
            quantities, replacement = _measure(match, text)
        elif match.group("ordinal"):
            replacement = " " + re.sub(r"\W+", "", match.group("ordinal")) + " "
        elif match.group("bare"):
            values = [_number(match.group("b1"))]
            if match.group("b2"):
                values.append(_number(match.group("b2")))
            bounds = (min(values), max(values)) if len(values) == 2 else (None, None)
            quantities.extend(Quantity("count", v, *bounds) for v in values)
        head = text[last : match.start()]
        offset += len(head)
        found.extend((quantity, offset) for quantity in quantities)
        pieces.append(head + replacement)
        offset += len(replacement)
        last = match.end()
    pieces.append(text[last:])
    return found, "".join(pieces)
