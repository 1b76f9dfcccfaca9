"""Items a claim adds to its evidence and conditions it drops (features of the learned judge).

A claim that adds an item to a stated list ("breakfast, dinner and a spa visit" against a list
without the spa) is covered well on average, and so is a fact joined to a stated one by "and".
Each conjunct of the claim (the pieces between commas, semicolons, "and", "or", "plus", "but")
is checked on its own: its content terms in the evidence, else one of its words close to an
evidence word by embedding (cosine >= PARAPHRASE). The other direction: a condition of the
aligned evidence sentence, a bounded number ("more than 30 days before the course"), that no
claim quantity states.

The separators and the comparison cues are closed classes of English, not words of any pair.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from kb_eval.judge.alignment import content_words
from kb_eval.judge.bounds import bounded
from kb_eval.judge.clauses import terms_of
from kb_eval.judge.encoder import TextEncoder
from kb_eval.judge.quantities import extract_quantities, normalise_text

ITEM_FEATURES: tuple[str, ...] = (
    "conjunct_uncovered",
    "conjunct_novel",
    "condition_dropped",
    "condition_lifted",
    "rate_basis_differs",
    "condition_lifted_elsewhere",
)
PARAPHRASE = 0.7
# Words that say a condition does not matter ("however late", "regardless of", "even if").
_LIFTED = re.compile(
    r"\b(?:even (?:if|when)|however (?:close|late|early|soon|long|short|far|much|many|few|little|near)"
    r"|regardless|no matter|irrespective|whatever the|in (?:all|any) cases?|at any (?:time|point))\b"
)
_LIFT_OBJECT = re.compile(r"[,;:.]")
# The basis of a rate ("per person", "per booking"); words for one person are one basis.
_PER = re.compile(r"\bper[ _]([a-z]+)")
_PERSON = frozenset({"person", "guest", "traveller", "traveler", "participant", "head", "adult"})
_SEPARATOR = re.compile(r"[,:](?!\d)|;|\b(?:and|or|plus|but|as well as|along with)\b")


def conjuncts(claim: str) -> list[str]:
    """The claim's pieces between separators that hold at least one content term."""
    pieces = _SEPARATOR.split(normalise_text(claim))
    return [piece.strip() for piece in pieces if terms_of(piece)]


def _novel(piece: str, evidence_words: list[str], encoder: TextEncoder) -> bool:
    """No content word of the piece is an evidence word or close to one by embedding."""
    words = content_words(piece)
    if not words or not evidence_words:
        return bool(words)
    stems = {word[:5] for word in evidence_words}
    if any(word[:5] in stems for word in words):
        return False
    best = (encoder.encode(words) @ encoder.encode(evidence_words).T).max(axis=1)
    return bool((np.round(best, 4) < PARAPHRASE).all())


def condition_dropped(claim: str, sentence: str) -> bool:
    """The sentence bounds a number ("within", "more than", "at least" ...) that no claim
    quantity states, while every claim quantity is one the sentence states: a condition left
    out, not a number changed."""
    mine = [q for q, _ in extract_quantities(normalise_text(claim))[0]]
    theirs = [q for q, _ in extract_quantities(normalise_text(sentence))[0]]
    if not all(any(q.matches(o) or o.matches(q) for o in theirs) for q in mine):
        return False
    return any(
        side and not any(q.matches(other) or other.matches(q) for q in mine)
        for other, side in bounded(sentence)
    )


def condition_lifted(claim: str, evidence: Sequence[str]) -> bool:
    """The claim says a condition does not matter ("however close to the date") and no evidence
    text says so."""
    if not _LIFTED.search(normalise_text(claim).lower()):
        return False
    return not any(_LIFTED.search(normalise_text(text).lower()) for text in evidence)


def lifted_elsewhere(claim: str, evidence: Sequence[str]) -> bool:
    """The condition the claim lifts names only things no evidence text mentions ("whatever the
    weather" against a rule on group size): the claim adds a promise about another thing, it
    does not deny a condition the evidence sets. A lift without an object ("in all cases")
    denies every condition, so it is never elsewhere."""
    if not condition_lifted(claim, evidence):
        return False
    text = normalise_text(claim).lower()
    lifted = terms_of(_LIFT_OBJECT.split(text[_LIFTED.search(text).end() :])[0])  # type: ignore[union-attr]
    return bool(lifted) and not lifted & terms_of(" ".join(evidence))


def _rate_bases(text: str) -> set[str]:
    bases = _PER.findall(normalise_text(text).lower())
    return {"person" if base in _PERSON else base.rstrip("s") for base in bases}


def rate_basis_differs(claim: str, evidence: Sequence[str], aligned_sentence: str) -> bool:
    """The claim states a rate "per" something no evidence text names ("per booking"), while the
    aligned sentence states its rate per something else ("per person")."""
    mine = _rate_bases(claim)
    named = set().union(*(_rate_bases(text) for text in evidence))
    return bool(mine - named) and bool(_rate_bases(aligned_sentence) - mine)


def item_features(
    claim: str,
    evidence: Sequence[str],
    aligned_sentence: str,
    encoder: TextEncoder,
    aligned_clause: str | None = None,
) -> list[float]:
    """The ITEM_FEATURES: the largest share of a conjunct's terms the evidence leaves out, a
    conjunct with no word in the evidence or close to one, a condition dropped, a condition
    lifted and a rate on another basis. A condition is dropped from the aligned clause when one
    is given (the bound of another clause of the sentence is another fact's)."""
    joined = " ".join(evidence)
    evidence_terms, evidence_words = terms_of(joined), content_words(joined)
    pieces = conjuncts(claim)
    uncovered = max(
        (1 - len(terms_of(p) & evidence_terms) / len(terms_of(p)) for p in pieces), default=0.0
    )
    elsewhere = lifted_elsewhere(claim, evidence)
    novel = any(
        not terms_of(p) & evidence_terms and _novel(p, evidence_words, encoder) for p in pieces
    )
    return [
        uncovered,
        float(novel),
        float(condition_dropped(claim, aligned_clause or aligned_sentence)),
        float(condition_lifted(claim, evidence) and not elsewhere),
        float(rate_basis_differs(claim, evidence, aligned_sentence)),
        float(elsewhere),
    ]
