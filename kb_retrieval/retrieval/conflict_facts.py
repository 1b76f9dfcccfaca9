"""Quantity facts of a chunk for the conflict rules: (kind, comparison unit, topic) -> values.

A duration counted from another deadline, naming a service's hours or granted to pay after a
reminder is not a policy window (`states_window`); a quantity in a sentence opening on "it",
"this", "they" or "these" takes the one topic the sentence before names (`_anaphoric_facts`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from itertools import pairwise

from kb_retrieval.text.quantities import TOPICS, Quantity, extract_quantities, quantity_topic

FactKey = tuple[str, str, str]


def _family(quantity: Quantity) -> str:
    """The comparison unit: values in different families are never compared."""
    if quantity.kind == "duration":
        return "business" if quantity.unit == "business days" else "calendar"
    if quantity.kind in {"currency", "age"}:
        return quantity.unit
    return ""


@lru_cache(maxsize=4096)
def _facts(text: str) -> dict[FactKey, tuple[Quantity, ...]]:
    """Quantities of a chunk grouped by (kind, family, topic); quantities without topic dropped.

    Cached by text: a chunk's quantities never change, and extraction was most of the ranking
    time per retrieval (bench/retrieval.py profile). Callers must not mutate the result.
    """
    grouped: dict[FactKey, list[Quantity]] = {}
    for quantity in extract_quantities(text):
        if not states_window(quantity):
            continue
        key = fact_key(quantity)
        if key is not None:
            grouped.setdefault(key, []).append(quantity)
    for key, quantity in _anaphoric_facts(text):
        grouped.setdefault(key, []).append(quantity)
    return {key: tuple(values) for key, values in grouped.items()}


_ANAPHOR_RE = re.compile(r"^(?:it|this|they|these)\b", re.IGNORECASE)
_SENTENCES_RE = re.compile(r"[^.!?\n]+")


def _anaphoric_facts(text: str) -> list[tuple[FactKey, Quantity]]:
    """Quantities without a topic in a sentence that opens on "it", "this", "they" or "these",
    given the one topic the sentence before names ("Each cabin pays a EUR 300 security deposit.
    It is returned within 7 days": the 7 days are the deposit's)."""
    sentences = [m.group(0).strip() for m in _SENTENCES_RE.finditer(text)]
    found: list[tuple[FactKey, Quantity]] = []
    for before, sentence in pairwise(sentences):
        if not _ANAPHOR_RE.match(sentence):
            continue
        for quantity in extract_quantities(sentence):
            if fact_key(quantity) is not None or not states_window(quantity):
                continue
            named = _topics_named(re.findall(r"[a-z]+", before.casefold()), quantity.kind)
            if len(named) == 1:
                found.append(((quantity.kind, _family(quantity), named[0]), quantity))
    return found


def _topics_named(tokens: Sequence[str], kind: str) -> list[str]:
    """The quantity topics of `kind` one of whose keywords occurs in `tokens`."""

    def hit(keyword: tuple[str, ...]) -> bool:
        size = len(keyword)
        return any(
            all(
                t.startswith(p[:-1]) if p.endswith("*") else t == p
                for p, t in zip(keyword, tokens[i : i + size], strict=True)
            )
            for i in range(len(tokens) - size + 1)
        )

    return [t.name for t in TOPICS if kind in t.kinds and any(map(hit, t.keywords))]


# "#" is the value in a quantity's context.
_FROM_DEADLINE_RE = re.compile(
    r"# (?:before|after|prior to|ahead of|past|from)(?: [^\s#]+){0,4}?"
    r" (?:due dates?|deadlines?|(?:falls?|is|are|becomes?) due)\b"
)
# A period granted to pay after a reminder or a request ("allowing 5 days for payment").
_GRACE_RE = re.compile(
    r"\b(?:allow|allows|allowing|give|gives|giving|grant|grants|granting)(?: [^\s#]+){0,2} #"
    r" (?:for (?:payment|paying)|to pay)\b"
)
_SERVICE_HOURS_RE = re.compile(
    r"# (?:a day |per day )?(?:emergency|telephone|phone|line|lines|hotline|helpline|service"
    r"|support|number|desk|reception|assistance|access|help)\b"
)


def states_window(quantity: Quantity) -> bool:
    """False for a duration counted from another deadline, naming a service's hours or granted
    to pay after a reminder ("allowing 5 days for payment")."""
    if quantity.kind != "duration":
        return True
    context = quantity.context
    return not (
        _FROM_DEADLINE_RE.search(context)
        or _SERVICE_HOURS_RE.search(context)
        or _GRACE_RE.search(context)
    )


def fact_key(quantity: Quantity) -> FactKey | None:
    """(kind, comparison unit, topic) of a quantity; None when it has no topic."""
    topic = quantity_topic(quantity)
    return None if topic is None else (quantity.kind, _family(quantity), topic)


def _same_value(a: Quantity, b: Quantity) -> bool:
    """Equal up to rounding; a month is only approximately 30 days, a pound about 0.45 kg."""
    difference = abs(a.value - b.value)
    if difference <= 1e-6 * max(1.0, abs(a.value), abs(b.value)):
        return True
    largest = max(abs(a.value), abs(b.value))
    if a.kind == "duration" and "months" in {a.unit, b.unit}:
        return difference <= 0.1 * largest
    if a.kind == "weight":
        return difference <= 0.03 * largest
    return False


def _disjoint(left: Sequence[Quantity], right: Sequence[Quantity]) -> bool:
    return not any(_same_value(a, b) for a in left for b in right)


def facts_of(text: str) -> dict[FactKey, tuple[Quantity, ...]]:
    """A text's quantities by (kind, family, topic) (public name of the cached `_facts`)."""
    return _facts(text)


def disjoint(left: Sequence[Quantity], right: Sequence[Quantity]) -> bool:
    """No value of `left` equals one of `right` (up to rounding and units)."""
    return _disjoint(left, right)


def value_labels(quantities: Sequence[Quantity]) -> tuple[str, ...]:
    """Distinct values, first wording wins, ordered by value."""
    kept: list[Quantity] = []
    for quantity in quantities:
        if not any(_same_value(quantity, other) for other in kept):
            kept.append(quantity)
    return tuple(q.label for q in sorted(kept, key=lambda q: (q.value, q.label)))
