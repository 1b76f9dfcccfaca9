"""Deterministic support judge: does a set of evidence texts state a claim?

Labels: "supported" (the evidence states every part of the claim, with the same numbers),
"contradicted" (the best-aligned evidence says the opposite, or gives another value for one of
the claim's quantities) and "unrelated" (the evidence does not address the claim or leaves a part
of it unstated). A claim that is a whole sentence of its evidence (after normalisation) is
supported before any rule runs: another sentence's antonym or negation cannot unsay it, and an
extractive drafter's sentences were misjudged that way. Otherwise, per clause of the claim
(", and ...", "; ...", ", but ..."):

1. Quantities (durations, money, percentages, times of day, ages and counts, weights, lengths,
   speeds, dates) are extracted and normalised: "7 days" = "seven days" = "one week",
   "$250" = "USD 250", "06:00" = "6am", "15 kg" = "33 lb" (2% tolerance for unit conversion);
   a value inside an evidence range ("30-59 days") matches.
2. The remaining words become content terms: negation cues become "not", domain synonyms are
   merged (traveller/participant/guest, must/required/mandatory), stopwords dropped, words
   lightly stemmed.
3. The evidence is cut into sentences and clauses; an exception clause ("except where ...",
   "with the exception of ...") carries the terms of its main clause with the opposite polarity.
   The best unit is the one matching most quantities, then most terms.
4. Decision: too little term overlap -> unrelated; opposite polarity (odd vs even number of
   negations) or an antonym -> contradicted; a claim quantity missing from the evidence while
   the aligned evidence has a quantity of the same kind -> contradicted, without one -> unrelated;
   otherwise supported when enough of the clause's terms are in the best unit.
A claim is supported when all its clauses are, contradicted when any clause is.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from kb_eval.claims import (
    ANTONYMS,
    PHRASES,
    STOPWORDS,
    SYNONYMS,
    WEAK_TERMS,
    split_sentences,
)
from kb_retrieval.quantities import NUMBER_WORD_VALUES

LABELS = ("supported", "contradicted", "unrelated")
MIN_SHARED_FOR_TOPIC = 0.34
MIN_COVERAGE_SUPPORTED = 0.75


@dataclass(frozen=True)
class Verdict:
    label: str
    reason: str


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
)
_CURRENCIES = {name: code for code, names in _CURRENCY_GROUPS for name in names.split()}
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
    rf"|(?P<money>(?P<cur>us\$|\$|€|£|\b(?:usd|eur|gbp|chf|cad|aud|nzd)\b)\s?(?P<mv>{_NUM})"
    rf"|(?P<mv2>{_NUM})\s?(?P<cur2>usd|eur|gbp|chf|dollars?|euros?|€)\b)"
    rf"|(?P<measure>(?P<n1>{_NUM})(?:\s*(?P<sep>-|to|or|and)\s*(?P<n2>{_NUM}))?\s*-?\s*"
    rf"(?P<unit>{_UNIT_ALT})(?![a-z])(?P<old>[\s-]+old)?)"
    rf"|(?P<ordinal>\b(?:day|no\.?|number|room|stage|route)\s+\d+)"
    rf"|(?P<year>\b(?:19|20)\d\d\b)"
    rf"|(?P<bare>(?P<b1>{_NUM})(?:\s*(?P<bsep>-|to)\s*(?P<b2>{_NUM}))?)"
)
_NEGATION = re.compile(r"\bnot\b")


def _number(text: str) -> float:
    return float(text.replace(",", ""))


def normalise_text(text: str) -> str:
    """NFKC, lower case, plain quotes and dashes, word numbers as digits, rates marked."""
    text = unicodedata.normalize("NFKC", text).lower()
    text = text.replace("\u2019", "'").replace("\u2013", "-").replace("\u2014", " - ")
    for _ in range(3):
        text = _RATE.sub(lambda m: f"{m.group(1)} per_{m.group(3)}", text)
    text = re.sub(
        r"(\d+)\s+(?:or|and)\s+(?:more|over|older|above|longer)\s+(?=[a-z%])", r"minimum \1 ", text
    )
    text = re.sub(
        r"\b(?:a|an|one)\s+(?=(?:minute|hour|day|week|fortnight|month|year|night)s?\b)", "1 ", text
    )
    words = "|".join(sorted(_WORD_NUMBERS, key=len, reverse=True))
    return re.sub(rf"\b({words})\b(?!\s+of\b|-way)", lambda m: str(_WORD_NUMBERS[m.group(1)]), text)


def _measure(match: re.Match[str], text: str) -> tuple[list[Quantity], str]:
    raw = match.group("unit")
    kind, factor = _UNITS.get(
        raw, _UNITS.get(raw[:-1] if raw.endswith("s") else raw, ("count", 1.0))
    )
    before = text[max(0, match.start() - 24) : match.start()]
    if kind == "duration_month" and (match.group("old") or re.search(r"\bage[ds]?\b", before)):
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
            amount = _number(match.group("mv") or match.group("mv2"))
            quantities.append(Quantity(f"money_{currency}", amount))
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


def _stem(word: str) -> str:
    if word in SYNONYMS:
        return SYNONYMS[word]
    for suffix, replacement in (
        ("ies", "y"),
        ("ied", "y"),
        ("ing", ""),
        ("ed", ""),
        ("ly", ""),
        ("s", ""),
    ):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3 and not word.endswith("ss"):
            word = word[: -len(suffix)] + replacement
            break
    if word in SYNONYMS:
        return SYNONYMS[word]
    if len(word) > 3 and word.endswith("e"):
        word = word[:-1]
    return SYNONYMS.get(word, word[:6])


def _rewrite(text: str) -> str:
    for pattern, replacement in PHRASES:
        text = pattern.sub(replacement, text)
    return text


def _terms(text: str) -> list[str]:
    terms = []
    for token in re.findall(r"[a-z][a-z']*", text):
        token = token.removesuffix("'s").strip("'")
        if not token or token in STOPWORDS or token.startswith("per_"):
            continue
        stem = _stem(token)
        if stem and stem not in STOPWORDS:
            terms.append(stem)
    return terms


def terms_of(text: str) -> frozenset[str]:
    """Content terms of free text (normalised, stemmed, synonyms merged, numbers left out)."""
    _, blanked = extract_quantities(normalise_text(text))
    return frozenset(_terms(_rewrite(f" {blanked} ")))


_ANTONYM_STEMS = tuple((_stem(left), _stem(right)) for left, right in ANTONYMS)


@dataclass(frozen=True)
class _Unit:
    """A clause: its content terms, the terms in a negation's scope, negation count, numbers,
    the terms of its text's heading and the index of that text."""

    terms: frozenset[str]
    scoped: frozenset[str]
    negations: int
    quantities: tuple[Quantity, ...]
    heading: frozenset[str] = frozenset()
    source: int = 0

    @property
    def all_terms(self) -> frozenset[str]:
        return self.terms | self.heading


_EXCEPTION = re.compile(
    r"\b(?:except(?: where| when| if| for)?|unless|with the exception of|"
    r"other than|apart from)\b"
)
_CLAIM_CLAUSE = re.compile(
    r";\s*|,\s*(?:but|while|whereas|so|and)\s+|\s+but\s+"
    r"|\s+and\s+(?=(?:it|they|you|we|this|that|there|can|may|must|will|is|are|has|have|takes?|"
    r"costs?|includes?|needs?|requires?)\b|(?:\w+\s+){1,2}(?:is|are|can|may|must|will)\b)"
)
_SEGMENT = re.compile(r"[,:;()]")


def _context(blanked: str, offset: int, clause_terms: frozenset[str]) -> frozenset[str]:
    """Topic words of a quantity: its comma/colon segment (plus the next one when the number
    closes its segment); the whole clause when the segment has no words."""
    before = _SEGMENT.split(blanked[:offset])
    after = _SEGMENT.split(blanked[offset:])
    words = _terms(_rewrite(before[-1] + " " + after[0]))
    if not _terms(_rewrite(after[0])) and len(after) > 1:
        words += _terms(_rewrite(after[1]))
    if not _terms(_rewrite(before[-1])) and len(before) > 1:
        words += _terms(_rewrite(before[-2]))
    return frozenset(words) or clause_terms


def _unit(text: str, inherited: _Unit | None = None) -> _Unit:
    """Build a unit from normalised clause text; an exception clause inherits its main clause
    (its terms, and the opposite polarity)."""
    located, blanked = extract_quantities(text)
    rewritten = _rewrite(f" {blanked} ")
    terms = frozenset(_terms(rewritten))
    scoped = frozenset(
        following[0] for tail in rewritten.split(" not ")[1:] if (following := _terms(tail))
    )
    quantities = tuple(
        Quantity(q.kind, q.value, q.low, q.high, _context(blanked, offset, terms))
        for q, offset in located
    )
    negations = len(_NEGATION.findall(rewritten))
    if inherited is not None:
        return _Unit(
            terms | inherited.terms,
            terms | inherited.terms,
            negations + (inherited.negations % 2 == 0),
            quantities,
        )
    return _Unit(terms, scoped, negations, quantities)


def _heading_terms(sentences: list[str]) -> frozenset[str]:
    """Terms of a text's heading ("Snowshoe Weekend: ..."), which apply to all its sentences."""
    if not sentences:
        return frozenset()
    head, colon, _ = sentences[0].partition(":")
    if colon and len(head.split()) <= 6:
        return frozenset(_terms(_rewrite(f" {normalise_text(head)} ")))
    return frozenset()


def evidence_units(evidence_texts: Sequence[str]) -> list[_Unit]:
    """Sentences and clauses of the evidence, each with terms, negations and quantities."""
    units: list[_Unit] = []
    for source, text in enumerate(evidence_texts):
        sentences = split_sentences(text)
        heading = _heading_terms(sentences)
        for sentence in sentences:
            for clause in re.split(r";\s*|\s+but\s+", normalise_text(sentence)):
                parts = _EXCEPTION.split(clause, maxsplit=1)
                found = [_unit(parts[0])]
                if len(parts) == 2:
                    found.append(_unit(parts[1], found[0]))
                units.extend(
                    _Unit(u.terms, u.scoped, u.negations, u.quantities, heading - u.terms, source)
                    for u in found
                )
    return units


def _antonym(terms: frozenset[str], others: frozenset[str]) -> tuple[str, str] | None:
    for left, right in _ANTONYM_STEMS:
        for mine, theirs in ((left, right), (right, left)):
            if mine in terms and theirs in others and mine not in others and theirs not in terms:
                return mine, theirs
    return None


def _aligned(quantity: Quantity, other: Quantity) -> bool:
    """Same kind and about the same thing (a shared topic word near both numbers)."""
    return other.kind == quantity.kind and bool((quantity.context & other.context) - WEAK_TERMS)


def _check_quantities(clause: _Unit, related: list[_Unit]) -> Verdict | None:
    """Every claim quantity must be in the evidence with the same value (topic-aligned)."""
    for quantity in clause.quantities:
        candidates = [q for unit in related for q in unit.quantities if q.kind == quantity.kind]
        aligned = [q for q in candidates if _aligned(quantity, q)]
        if any(quantity.matches(other) for other in aligned or candidates):
            continue
        if aligned:
            return Verdict("contradicted", f"{quantity.kind} {quantity.value:g} differs")
        return Verdict("unrelated", f"{quantity.kind} {quantity.value:g} not stated")
    return None


def _weight(terms: frozenset[str]) -> float:
    return sum(0.5 if term in WEAK_TERMS else 1.0 for term in terms)


def _coverage(terms: frozenset[str], units: list[_Unit]) -> float:
    """Weighted share of terms found in units (heading-only matches count half)."""
    own = frozenset().union(*(unit.terms for unit in units))
    heading = frozenset().union(*(unit.heading for unit in units)) - own
    found = _weight(terms & own) + 0.5 * _weight(terms & heading)
    return found / _weight(terms) if terms else 1.0


def _judge_clause(clause: _Unit, units: list[_Unit]) -> Verdict:
    def score(unit: _Unit) -> tuple[int, int, int, int]:
        matched = sum(any(q.matches(e) for e in unit.quantities) for q in clause.quantities)
        aligned = sum(any(_aligned(q, e) for e in unit.quantities) for q in clause.quantities)
        return matched, aligned, len(clause.terms & unit.all_terms), -len(unit.terms)

    best = max(units, key=score)
    terms = clause.terms
    shared = terms & best.all_terms
    related = [best] + [u for u in units if u is not best and terms & u.terms]
    for unit in related:
        pair = _antonym(terms, unit.terms)
        if pair:
            return Verdict("contradicted", f"antonyms {pair[0]}/{pair[1]}")
    coverage = _coverage(terms, [best])
    numbers_aligned = any(_aligned(q, e) for q in clause.quantities for e in best.quantities)
    if terms and (not shared or (coverage < MIN_SHARED_FOR_TOPIC and not numbers_aligned)):
        everywhere = frozenset().union(*(unit.all_terms for unit in units))
        return Verdict("unrelated", f"low overlap: {sorted(terms - everywhere)} not in evidence")
    everywhere = frozenset().union(*(unit.all_terms for unit in units))
    if clause.negations % 2 != best.negations % 2 and (
        shared & (clause.scoped | best.scoped) or clause.scoped - everywhere
    ):
        return Verdict("contradicted", f"negation mismatch on {sorted(shared)}")
    verdict = _check_quantities(clause, related)
    if verdict is not None:
        return verdict
    anchors = (terms & best.terms) - WEAK_TERMS
    same_text = [best] + [
        u for u in related if u.source == best.source and u is not best and anchors & u.terms
    ]
    for term in clause.scoped - best.all_terms:
        holders = [u for u in same_text if term in u.terms]
        if holders and all(u.negations % 2 != clause.negations % 2 for u in holders):
            return Verdict("contradicted", f"negation mismatch on {term}")
    if _coverage(terms, same_text) < MIN_COVERAGE_SUPPORTED:
        return Verdict("unrelated", f"not stated: {sorted(terms - best.all_terms)}")
    return Verdict("supported", f"stated ({len(shared)}/{len(terms)} terms)")


def judge_claim(claim: str, evidence_texts: Sequence[str]) -> Verdict:
    """Label one claim against evidence texts (see the module docstring for the rules)."""
    units = evidence_units(evidence_texts)
    if not units:
        return Verdict("unrelated", "no evidence")
    if _plain_sentence(claim) in {
        _plain_sentence(sentence) for text in evidence_texts for sentence in split_sentences(text)
    }:
        return Verdict("supported", "a whole sentence of the evidence")
    normalised = normalise_text(claim).strip().rstrip(".!")
    clauses = [c for c in _CLAIM_CLAUSE.split(normalised) if c and c.strip()]
    verdicts = [_judge_clause(_unit(clause), units) for clause in clauses]
    for label in ("contradicted", "unrelated"):
        for verdict in verdicts:
            if verdict.label == label:
                return verdict
    return verdicts[0] if len(verdicts) == 1 else Verdict("supported", "every clause stated")


def _plain_sentence(text: str) -> str:
    """A sentence for exact comparison: normalised, single-spaced, without its full stop."""
    return " ".join(normalise_text(text).split()).rstrip(".!")


def load_claim_pairs(path: str | Path) -> list[dict[str, object]]:
    """Read labelled pairs (pair_id, claim, evidence, label[, split]) from a JSONL file."""
    pairs = []
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            row = json.loads(line)
            for field in ("pair_id", "claim", "evidence", "label"):
                if field not in row:
                    raise ValueError(f"{path}:{number}: missing field {field!r}")
            pairs.append(row)
    return pairs


def expected_label(label: str) -> str:
    """The judge label a pair label calls for (number_changed is a kind of contradicted)."""
    return "contradicted" if label == "number_changed" else label


def judge_accuracy(pairs: Iterable[dict[str, object]]) -> dict[str, object]:
    """Overall and per-label accuracy of judge_claim on labelled pairs, and per split."""
    totals: dict[str, list[int]] = {}
    splits: dict[str, list[int]] = {}
    errors: list[dict[str, str]] = []
    for pair in pairs:
        label = str(pair["label"])
        verdict = judge_claim(str(pair["claim"]), [str(e) for e in pair["evidence"]])  # type: ignore[attr-defined]
        ok = verdict.label == expected_label(label)
        for key, table in ((label, totals), (str(pair.get("split", "all")), splits)):
            table.setdefault(key, [0, 0])
            table[key][0] += int(ok)
            table[key][1] += 1
        if not ok:
            errors.append(
                {
                    "pair_id": str(pair["pair_id"]),
                    "label": label,
                    "got": verdict.label,
                    "reason": verdict.reason,
                }
            )
    correct = sum(c for c, _ in totals.values())
    count = sum(n for _, n in totals.values())
    return {
        "n": count,
        "overall": correct / count if count else 0.0,
        "per_label": {k: c / n for k, (c, n) in sorted(totals.items())},
        "per_split": {k: c / n for k, (c, n) in sorted(splits.items())},
        "errors": errors,
    }
