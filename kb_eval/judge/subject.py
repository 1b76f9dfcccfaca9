"""The claim's subject (the words before its first verb) and whether the aligned evidence clause
is about it: an opposed policy class on the same subject ("parking is free" against "parking
costs EUR 5 a day") is a contradiction; on another subject, more likely an unrelated claim.

The verbs are a small closed class of English auxiliaries and policy verbs, not words of a pair.
"""

from __future__ import annotations

import re

from kb_eval.judge.clauses import terms_of
from kb_eval.judge.quantities import normalise_text

SUBJECT_FEATURES: tuple[str, ...] = ("subject_in_clause", "opposed_on_subject")
_VERB = re.compile(
    r"\b(?:is|are|was|were|be|been|can|cannot|may|might|must|will|would|shall|should|do|does"
    r"|did|has|have|had|need|needs|costs?|pays?|includes?|runs?|takes?|gets?|comes?|goes?"
    r"|starts?|ends?|opens?|closes?|leaves?|offers?|provides?|requires?)\b"
)
_CONDITION = re.compile(r"^(?:if|when|once|unless|as long as|provided)\b[^,]*,\s*")


def subject_text(claim: str) -> str:
    """The claim's main clause before its first verb (a leading condition "if ..., " skipped);
    empty when no verb follows."""
    text = _CONDITION.sub("", normalise_text(claim).strip())
    verb = _VERB.search(text)
    return text[: verb.start()] if verb else ""


def subject_terms(claim: str) -> frozenset[str]:
    """Content terms of the claim's subject (subject_text); the whole main clause's terms when
    none stand there ("you can ...")."""
    head = terms_of(subject_text(claim))
    text = _CONDITION.sub("", normalise_text(claim).strip())
    return head or terms_of(re.split(r"[,;:.]", text)[0])


def subject_features(claim: str, aligned_clause: str, clause_opposed: float) -> list[float]:
    """The SUBJECT_FEATURES: the share of subject terms the aligned clause states, and that share
    where the claim and the clause are in opposed classes."""
    subject = subject_terms(claim)
    stated = len(subject & terms_of(aligned_clause)) / len(subject) if subject else 0.0
    return [stated, stated * clause_opposed]
