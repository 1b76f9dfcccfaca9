"""Whether a claim is about the evidence's subject at all (features of the learned judge).

A contradiction needs the same subject and an opposed statement; a claim about another thing
("name changes are free" against a fee for date changes, "cancelled because of bad weather"
against a guest's own cancellation) is unrelated even when its policy words oppose the
evidence's. Two signals: the claim's subject words (before its first verb) and the words of its
conditions ("if ...", "because of ...", "when ...") that the evidence neither uses nor
paraphrases (a word of the evidence at cosine >= PARAPHRASE by MiniLM on single words).

The condition markers and the hedges left out are closed classes of English, not words of a pair.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from kb_eval.judge.alignment import content_words
from kb_eval.judge.clauses import terms_of
from kb_eval.judge.encoder import TextEncoder
from kb_eval.judge.quantities import normalise_text
from kb_eval.judge.subject import subject_text

DRIFT_FEATURES: tuple[str, ...] = ("subject_unmatched", "condition_unmatched")
PARAPHRASE = 0.7
# The case a claim speaks of ("if ...", "because of ...", or a case it says does not matter:
# "whatever the ...", "regardless of ..."): the words after its marker, to the end of the
# clause. A proviso on a permission ("as long as", "unless") is not a case: it restricts what
# the main clause allows, and the main clause can still deny the evidence.
_CONDITION = re.compile(
    r"\b(?:if|when|whenever|once|because(?: of)?|due to|in case(?: of)?|whatever(?: the)?"
    r"|regardless of|no matter|irrespective of)\b([^,;:.]*)"
)
_MARKERS = frozenset({"because", "whenever", "whatever", "regardless", "matter", "irrespective"})
# A relative clause in the subject ("guests who prefer ...") restricts it; the head noun phrase
# before it names what the claim is about.
_RELATIVE = re.compile(r"\b(?:who|whom|whose|which|that)\b")
# Hedges and degree words say how often or how much, not what the claim is about.
_HEDGES = frozenset(
    {
        *("usually", "normally", "typically", "generally", "often", "sometimes", "always"),
        *("never", "even", "still", "already", "least", "best", "really", "quite", "fully"),
        "simply",
    }
)


def unmatched_words(
    words: Sequence[str], evidence_words: Sequence[str], encoder: TextEncoder
) -> list[str]:
    """The words with no evidence word of the same stem and none at cosine >= PARAPHRASE."""
    stems = {word[:5] for word in evidence_words}
    evidence_terms = terms_of(" ".join(evidence_words))
    rest = [
        w
        for w in words
        if w[:5] not in stems
        and not terms_of(w) & evidence_terms
        and w not in _HEDGES
        and w.isalpha()
    ]
    if not rest or not evidence_words:
        return rest
    best = np.round((encoder.encode(rest) @ encoder.encode(list(evidence_words)).T).max(axis=1), 4)
    return [word for word, score in zip(rest, best, strict=True) if score < PARAPHRASE]


def condition_words(claim: str) -> list[str]:
    """Content words of the claim's conditions ("if you book late", "because of the weather")."""
    text = normalise_text(claim).lower()
    words = {w for match in _CONDITION.findall(text) for w in content_words(match)}
    return sorted(words - _MARKERS)


def drift_features(claim: str, evidence: Sequence[str], encoder: TextEncoder) -> list[float]:
    """The DRIFT_FEATURES: subject words and condition words of the claim the evidence neither
    uses nor paraphrases (each counted up to two, scaled to 0-1)."""
    evidence_words = content_words(" ".join(evidence))
    head = _RELATIVE.split(subject_text(claim))[0]
    subject = unmatched_words(content_words(head), evidence_words, encoder)
    condition = unmatched_words(condition_words(claim), evidence_words, encoder)
    return [min(len(subject), 2) / 2, min(len(condition), 2) / 2]
