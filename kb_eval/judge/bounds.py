"""Which side of a stated value a text means: "within 30 days", "fewer than 30 days" and
"30 days or less" bound a duration from above; "more than 30 days", "at least 30 days" and
"30 days or more" from below. A claim that keeps the evidence's number but turns its bound
around ("within 30 days" against "30 days or more before departure") says something else.

The cues are a small closed class of English comparison words, not words of any pair. A deadline
"up to / no later than N days before" is a lower bound on the time left before the event.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from kb_eval.judge.claims import split_sentences
from kb_eval.judge.modality import OPPOSED, classes
from kb_eval.judge.quantities import Quantity, extract_quantities, normalise_text

UPPER, LOWER = "upper", "lower"
BOUND_FEATURES: tuple[str, ...] = (
    "bound_opposed",
    "bound_added",
    "quantity_unstated",
    "bound_clause_opposed",
)
_KINDS = frozenset({"duration_h", "duration_month", "business_day", "night", "count"})
_CUES: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(rf"(?:{pattern})\s*$"), side)
    for pattern, side in (
        (r"(?:no|not|never) (?:more|longer) than", UPPER),
        (r"(?:no|not|never) (?:less|fewer|later|shorter) than", LOWER),
        (
            r"more than|over|at least|minimum(?: \w+)?(?: is| of)?|beyond|longer than|from|after",
            LOWER,
        ),
        (
            r"within|less than|fewer than|under|at most|maximum(?: \w+)?(?: is| of)?|inside"
            r"|in the (?:last|final)|later than|shorter than",
            UPPER,
        ),
        (r"up to|until|till|by", ""),
    )
)
_LOWER_AFTER = re.compile(r"^\s*(?:(?:or|and) (?:more|longer|over|above|older)|\+)")
_UPPER_AFTER = re.compile(r"^\s*(?:or (?:less|fewer|under|shorter|sooner))\b")
_BEFORE_EVENT = re.compile(r"^\s*(?:before|prior|ahead|in advance)\b")
# A bound is turned round by a verb's negation a few words before its cue ("must not fly within
# 18 hours"), not by "no" before a noun ("no alcohol is served to guests under 18").
_NEGATION = re.compile(r"(?:\b(?:not|never)\b|n't\b)(?:\s+[\w'-]+){0,3}\s*$")
_FLIP = {UPPER: LOWER, LOWER: UPPER, "": ""}


def _side(before: str, after: str) -> str:
    """The bound of a value from the words around it; a bound negated by a verb's negation just
    before it is the other one ("must not fly within 18 hours" bounds the wait from below)."""
    before = re.split(r"[,;:.]", before)[-1]
    if _LOWER_AFTER.search(after):
        return LOWER
    if _UPPER_AFTER.search(after):
        return UPPER
    for cue, side in _CUES:
        match = cue.search(before)
        if match:
            if not side:
                side = LOWER if _BEFORE_EVENT.search(after) else UPPER
            return _FLIP[side] if _NEGATION.search(before[: match.start()]) else side
    return ""


def bounded(text: str) -> list[tuple[Quantity, str]]:
    """Quantities of the text (kinds that can be bounded) with their bound, "" when none."""
    plain = normalise_text(text)
    found, blanked = extract_quantities(plain)
    result = []
    for quantity, offset in found:
        if quantity.kind not in _KINDS or quantity.low is not None:
            continue
        side = _side(blanked[max(0, offset - 40) : offset], blanked[offset : offset + 40])
        result.append((quantity, side))
    return result


def _within(quantity: Quantity, other: Quantity, side: str) -> bool:
    """A point value on the stated side of a bound ("50 days" within "within 60 days")."""
    if quantity.kind != other.kind or quantity.low is not None:
        return False
    return quantity.value <= other.value if side == UPPER else quantity.value >= other.value


def _all_quantities(text: str) -> list[Quantity]:
    return [q for q, _ in extract_quantities(normalise_text(text))[0]]


def bound_features(claim: str, evidence: Sequence[str]) -> list[float]:
    """Whether a bounded claim value is stated in the evidence only with the opposite bound;
    whether a claim bound meets the same value stated without any bound; whether a claim
    quantity is not stated at all (equal, in a range, or a point value inside a stated bound; a
    value the claim bounds itself, "must not fly within 24 hours", is a bound of its own and is
    stated only by an equal value, not inside another bound)."""
    theirs = [item for text in evidence for item in bounded(text)]
    stated = [q for text in evidence for q in _all_quantities(text)]
    own_bound = {q for q, side in bounded(claim) if side}
    unstated = any(
        not any(q.matches(other) for other in stated)
        and (q in own_bound or not any(_within(q, other, side) for other, side in theirs if side))
        for q in _all_quantities(claim)
    )
    opposed = added = False
    for quantity, side in bounded(claim):
        if not side:
            continue
        same = [other_side for other, other_side in theirs if quantity.matches(other)]
        sides = {s for s in same if s}
        if sides and side not in sides:
            opposed = True
        elif same and not sides:
            added = True
    return [float(opposed), float(added), float(unstated), _bound_clause_opposed(claim, evidence)]


def _says_otherwise(claim: str, clause: str) -> bool:
    """The claim in one class of an opposed pair and the clause in the other only (negation
    parity is not used: a bound often absorbs the negation, "must not fly within 18 hours")."""
    mine, theirs = classes(claim), classes(clause)
    return any(
        (mine[a] and not mine[b] and theirs[b] and not theirs[a])
        or (mine[b] and not mine[a] and theirs[a] and not theirs[b])
        for a, b in OPPOSED
    )


def _bound_clause_opposed(claim: str, evidence: Sequence[str]) -> float:
    """A claim clause and the evidence clause that states its bounded value with the same bound
    (the same condition: "within 30 days" and "fewer than 30 days") say different things about
    it: another outcome for that condition, even when the claim's words align better with a
    neighbouring clause."""
    from kb_eval.judge.alignment import evidence_clauses
    from kb_eval.judge.claim_judge import claim_clauses

    sentences = [s for text in evidence for s in split_sentences(text)]
    theirs = [(clause, bounded(clause)) for clause in evidence_clauses(sentences)]
    for part in claim_clauses(claim):
        mine = [(q, side) for q, side in bounded(part) if side]
        for clause, found in theirs:
            same = any(
                side == other_side and q.matches(other)
                for q, side in mine
                for other, other_side in found
            )
            if same and _says_otherwise(part, clause):
                return 1.0
    return 0.0
