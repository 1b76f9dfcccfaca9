"""Deterministic keyword rules that hint how policy-like a chunk is (spec 3.6).

Rules, applied per sentence (a sentence or line of the text):

- High: some sentence names a rule topic of spec 3.6 (refund, cancellation, deposit,
  payment, age/fitness/medical requirements, safety rules, waiver/liability, inclusions/
  exclusions, guarantees, exceptions; the ``_STRONG`` patterns) together with an obligation
  or commitment word (``_OBLIGATION``: must, required, non-refundable, will be, ...) or a
  quantity (``_QUANTITY``: "7 days", "25%", "$200", "12 years").
- Medium: some policy vocabulary appears (a ``_STRONG`` or ``_WEAK`` pattern) without such a
  sentence.
- Low: none of it.

The category only nudges: structured_policy, terms_policy and waiver_release chunks are at least
Medium. Nothing else changes the result, so the hint is a pure function of (text, category).
"""

from __future__ import annotations

import re

from kb_retrieval.models import PolicyLikeness

_FLAGS = re.IGNORECASE

_STRONG = re.compile(
    r"\b(?:"
    r"refund\w*|non-?refundable|cancel\w*|deposits?|payments?|balance (?:is )?due|surcharges?"
    r"|fees?|penalt(?:y|ies)|forfeit\w*|minimum age|age (?:limit|requirement)\w*"
    r"|years? (?:of age|old)|aged? (?:\d+|under|over)|minors?|fitness|medical\w*|physician\w*"
    r"|doctor\w*|clearance|pregnan\w*|pre-?existing|insurance|safety|helmets?|life ?jackets?"
    r"|harness\w*|waiver\w*|liabilit(?:y|ies)|liable|indemnif\w*|negligen\w*|release of claims"
    r"|assum\w* (?:the |all )?risks?|governing law|jurisdiction|inclusions?|exclusions?"
    r"|included|excluded|not included|guarantee\w*|exceptions?"
    r")\b",
    _FLAGS,
)

_WEAK = re.compile(
    r"\b(?:"
    r"polic(?:y|ies)|terms|conditions|rules?|requirements?|includes?|except|unless|weather"
    r"|age|children|prices?|booking\w*|rebook\w*|transfer\w*|credits?|vouchers?|eligib\w*"
    r"|discretion|health|allerg\w*|medication\w*|risks?|emergenc\w*|responsib\w*"
    r")\b",
    _FLAGS,
)

_OBLIGATION = re.compile(
    r"\b(?:"
    r"must|shall|required?|requires|requirement|mandatory|obligat\w*|cannot|can ?not"
    r"|may not|will not|won't|will be|not (?:permitted|allowed|eligible|accepted|refundable)"
    r"|prohibited|forbidden|only (?:if|when|after|before)|no later than"
    r"|at (?:the )?(?:least|latest)|prior to|responsible for|agrees?|acknowledges?|entitle[sd]?"
    r"|non-?refundable|no refunds?|(?:are|is) subject to|reserve[sd]? the right"
    r"|(?:is|are) (?:not )?(?:included|covered)"
    r")\b",
    _FLAGS,
)

_NUMBER_WORDS = (
    r"one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fourteen|fifteen|twenty"
    r"|thirty|forty|forty-five|sixty|ninety"
)
_QUANTITY = re.compile(
    r"(?:\d+(?:[.,]\d+)?\s*(?:%|percent|per cent|(?:calendar |business |working )?"
    r"(?:days?|hours?|hrs?|weeks?|months?|years?|nights?)\b)"
    r"|[$€£¥]\s?\d"
    r"|\b\d+(?:[.,]\d+)?\s?(?:usd|eur|gbp|aud|cad|nzd|chf)\b"
    rf"|\b(?:{_NUMBER_WORDS})\s+(?:(?:calendar|business|working)\s+)?"
    r"(?:days?|hours?|weeks?|months?|years?|nights?)\b)",
    _FLAGS,
)

_SENTENCE_SPLIT = re.compile(r"(?<=[.!?;])\s+|\n+")

_AT_LEAST_MEDIUM = frozenset({"structured_policy", "terms_policy", "waiver_release"})


def _sentence_is_rule(sentence: str) -> bool:
    """A rule topic stated with an obligation word or a quantity."""
    if not _STRONG.search(sentence):
        return False
    return bool(_OBLIGATION.search(sentence) or _QUANTITY.search(sentence))


def policy_likeness_hint(text: str, category: str | None = None) -> PolicyLikeness:
    """Low/Medium/High hint of how much the text states rules or commitments."""
    if any(_sentence_is_rule(s) for s in _SENTENCE_SPLIT.split(text) if s):
        result = PolicyLikeness.HIGH
    elif _STRONG.search(text) or _WEAK.search(text):
        result = PolicyLikeness.MEDIUM
    else:
        result = PolicyLikeness.LOW
    if result is PolicyLikeness.LOW and category is not None and str(category) in _AT_LEAST_MEDIUM:
        return PolicyLikeness.MEDIUM
    return result
