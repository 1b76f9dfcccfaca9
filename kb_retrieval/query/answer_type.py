"""What kind of quantity a question asks for (money, percent, duration, time of day, age, weight).

General question forms only ("how much", "how long", "what time", "how old"): an answerability
feature compares them with the quantity kinds a chunk states (`kb_retrieval.text.quantities`).
"""

from __future__ import annotations

import re
from functools import lru_cache

from kb_retrieval.text.quantities import extract_quantities

# Each kind of `Quantity.kind` with the question forms that ask for it.
ASKED_KIND_PATTERNS: dict[str, tuple[str, ...]] = {
    "currency": (
        r"\bhow much\b",
        r"\bwhat (?:does|do|will|would) (?:it|that|this|they|the \w+) cost\b",
        r"\b(?:price|prices|cost|costs|fee|fees|charged|surcharge|supplement)\b",
        # a charge, not charging something (a car, a phone): as the price intent reads it
        r"\bcharges?\b(?! (?:it|them|my|our|the|a|your|his|her)\b)",
    ),
    "percent": (r"\bhow much\b", r"\bpercent(?:age)?\b", r"\bwhat (?:share|portion|part)\b"),
    "duration": (
        r"\bhow long\b",
        r"\bhow many (?:days|nights|hours|weeks|months|minutes)\b",
        r"\bhow (?:far|long) (?:in advance|ahead|before)\b",
        r"\bhow soon\b",
        r"\bhow late\b",
        r"\bdeadline\b",
        r"\bnotice\b",
    ),
    "time_of_day": (
        r"\bwhat time\b",
        r"\bat what hour\b",
        r"\bhow early\b",
        r"\bwhen (?:do|does|will|should|must) (?:we|i|you|it|the \w+) (?:start|leave|depart|meet|arrive|begin|finish|end|check in)\b",
    ),
    "age": (
        r"\bhow old\b",
        r"\bages?\b",
        r"\bminimum age\b",
        r"\b\d{1,2}[- ]?(?:year|yr)s?[- ]old\b",
    ),
    "weight": (r"\bhow heavy\b", r"\bweigh(?:t|s)?\b", r"\bkg\b|\bkilos?\b|\blbs?\b"),
}
_ASKED = {kind: re.compile("|".join(patterns)) for kind, patterns in ASKED_KIND_PATTERNS.items()}


@lru_cache(maxsize=4096)
def asked_kinds(text: str) -> frozenset[str]:
    """Quantity kinds the question asks for (case-folded matching; cached per text: the
    scorer, the pool features and the verdict each ask it of one e-mail)."""
    folded = text.casefold()
    return frozenset(kind for kind, pattern in _ASKED.items() if pattern.search(folded))


@lru_cache(maxsize=16384)
def stated_kinds(text: str) -> frozenset[str]:
    """Quantity kinds a chunk states (cached: a chunk's text never changes)."""
    return frozenset(q.kind for q in extract_quantities(text))


def answer_type_match(asked: frozenset[str], stated: frozenset[str]) -> float | None:
    """1.0 when the chunk states a kind the question asks for, 0.0 when it states none of them,
    None when the question asks for no quantity. Money asked may be answered by a percentage."""
    if not asked:
        return None
    wanted = asked | {"percent"} if "currency" in asked else asked
    return 1.0 if wanted & stated else 0.0
