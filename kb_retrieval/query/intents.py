"""Query intents, exception requests and sensitivity flags read from a guest's e-mail (spec 4)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from kb_retrieval.query.vocabulary import (
    DEPOSIT_RETURN_PATTERN,
    EXCEPTION_PATTERNS,
    INSURED_RISK_PATTERN,
    INTENT_PATTERNS,
    INTENTS,
    POLICY_INTENTS,
    SENSITIVITY_NAMES,
    SENSITIVITY_PATTERNS,
    WEAK_EXCEPTION_PATTERNS,
)
from kb_retrieval.text.analyzer import prepare


def _alternation(patterns: Iterable[str]) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{pattern})" for pattern in patterns))


_INTENT_RES = {name: re.compile(pattern) for name, pattern in INTENT_PATTERNS.items()}
_SENSITIVITY_RES = {name: re.compile(pattern) for name, pattern in SENSITIVITY_PATTERNS.items()}
_EXCEPTION_RE = _alternation(EXCEPTION_PATTERNS)
_WEAK_EXCEPTION_RE = _alternation(WEAK_EXCEPTION_PATTERNS)
_DEPOSIT_RETURN_RE = re.compile(DEPOSIT_RETURN_PATTERN)
_INSURED_RISK_RE = re.compile(INSURED_RISK_PATTERN)


def detect_intents(prepared: str) -> tuple[str, ...]:
    """The query intents whose vocabulary `prepared` (analyzer-prepared text) uses."""
    return tuple(name for name in INTENTS if _INTENT_RES[name].search(prepared))


def mentions_intent(text: str, intent: str) -> bool:
    """Whether `text` (any text, e.g. a chunk's) uses the vocabulary of query intent `intent`."""
    return bool(_INTENT_RES[intent].search(prepare(text)))


def detect_exception_request(prepared: str, intents: Iterable[str]) -> bool:
    """The guest asks to bend a rule: strong phrasings, or weak ones next to a policy intent."""
    if _EXCEPTION_RE.search(prepared):
        return True
    return bool(POLICY_INTENTS.intersection(intents)) and bool(_WEAK_EXCEPTION_RE.search(prepared))


def derive_sensitivity(prepared: str, intents: Iterable[str], exception: bool) -> tuple[str, ...]:
    """Sensitivity flags from intents and keywords (used when the caller passes none).

    A deposit counts as a refund matter only when its return or loss is spoken of: the amount
    or due date of a deposit is a payment question (still policy-like), not a refund."""
    found = set(intents)
    flags: set[str] = set()
    if found & {"refund", "cancel", "cancellation"} or (
        "deposit" in found and _DEPOSIT_RETURN_RE.search(prepared)
    ):
        flags.add("refund")
    if "medical" in found:
        flags.add("medical")
    if _safety_matter(prepared, found):
        flags.add("safety")
    if "liability" in found or "waiver" in found or _SENSITIVITY_RES["legal"].search(prepared):
        flags.add("legal")
    if exception:
        flags.add("exceptions")
    return tuple(sorted(flags))


def _safety_matter(prepared: str, intents: set[str]) -> bool:
    """Safety words, besides those naming what travel insurance covers (an insurance e-mail's
    "does it include rescue" asks about the policy's cover)."""
    if "insurance" in intents:
        prepared = _INSURED_RISK_RE.sub(" ", prepared)
    elif "safety" in intents:
        return True
    return bool(
        _INTENT_RES["safety"].search(prepared) or _SENSITIVITY_RES["safety"].search(prepared)
    )


def validate_sensitivity(sensitivity: Sequence[str]) -> tuple[str, ...]:
    if isinstance(sensitivity, str):
        raise ValueError("sensitivity must be a sequence of names, not a string")
    for name in sensitivity:
        if name not in SENSITIVITY_NAMES:
            raise ValueError(f"unknown sensitivity {name!r}; expected one of {SENSITIVITY_NAMES}")
    return tuple(sorted(set(sensitivity)))
