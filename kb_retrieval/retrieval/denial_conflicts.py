"""A policy that refuses money back against another source that grants it, without a shared
number (spec 8): "changes because of avalanche danger do not entitle you to a refund or
compensation" against "each guest receives a credit of NOK 1,500 per lost day"; "the deposit is
non-refundable" against "if you cancel within 14 days of paying it, the deposit is refunded in
full". Reported as kind `benefit_denial`, values (what is granted, what is refused).

Rules, chosen to miss a weak conflict rather than invent one:

* The refusal is a sentence of a policy-tier chunk (structured_policy, terms_policy,
  waiver_release): "non-refundable", "no refund/credit/compensation", "(does) not entitle you
  to a refund", stated without a number (a clause number aside). A refusal with a number is a
  line of a schedule ("within 7 days no refund", "CAD 150 is a non-refundable fee"): its other
  lines grant money back under other numbers, and the numeric rules of `conflicts.py` compare
  those. An exception it states ("except where we cancel") is not part of what it refuses; a
  sentence opening on "such", "this", "these" refers to the sentence before, read with it.
* The grant is a sentence of another document's chunk, policy-tier or marketing: "refunded in
  full", "a full refund", "refund you in full", "receives a credit", "credit of", "money back".
  Not a grant the sentence negates, nor money back the operator owes when it cancels ("if we
  cancel the trip"): the guest's refusal does not cover that case.
* Both speak of the same thing: the refused item ("the deposit" of "the deposit is
  non-refundable") is named in the grant, or the two sentences share at least three content
  words besides the money words, numbers and units of time.
* The verdict asks for them only for an e-mail about money back (`asks_money_back`) and only
  between chunks above the low-relevance line.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import product

from kb_retrieval.models import HIGH_PRECEDENCE, Category
from kb_retrieval.retrieval.conflicts import BENEFIT_DENIAL, Conflict, ConflictInput
from kb_retrieval.text.analyzer import analyze, prepare

GRANTING_CATEGORIES = HIGH_PRECEDENCE | {Category.MARKETING}
MIN_SHARED_TERMS = 3
MONEY_BACK_INTENTS = frozenset({"refund", "cancel", "cancellation", "deposit"})
_MONEY = r"(?:refunds?|credits?(?! card)|compensation|reimbursements?|money back)"
_REFUSAL_RE = re.compile(
    rf"\b(?:non-? ?refundable|not refundable|no {_MONEY}"
    rf"|(?:does|do|will|shall) not entitle (?:you|guests?|the guest|participants?) to "
    rf"(?:an? |any )?{_MONEY})"
)
_REFUSED_ITEM_RE = re.compile(
    r"\b(?:the|your|a|any|all)(?: [a-z]+)? (?P<item>[a-z]+) (?:is|are) (?:non-? ?|not )refundable"
)
_GRANT_RE = re.compile(
    r"\b(?:(?:is|are|be) refunded|refunded in full|full refund|refund (?:you )?in full"
    r"|with an? (?:full |partial )?refund"
    r"|receives? an? (?:full )?(?:refund|credit)|credit of|money back)\b"
)
_NEGATED_RE = re.compile(r"\b(?:no|not|never|without)\b[^.;]{0,24}$")
# A trailing ", which ..." clause says more about the refused item; its numbers ("which we do
# within three days") are not a line of a schedule.
_RELATIVE_RE = re.compile(r",\s*which\b.*$")
_EXCEPTION_RE = re.compile(r"\b(?:except|unless|other than|apart from|save where)\b.*$")
_ANAPHOR_RE = re.compile(r"^(?:such|this|these|those|that|it|they)\b")
_OPERATOR_CANCELS_RE = re.compile(
    r"\b(?:we|the company|the operator) (?:may |might |will |can |have to |must |need to )?"
    r"(?:cancel|cancels)\b|\bcancell?ed by us\b"
)
_CLAUSE_NUMBER_RE = re.compile(r"^\s*\d+(?:\.\d+)*\.?\s+")
# Sentences; a numbered clause ("6.3 The deposit ...") starts one even after a table row.
_SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+|\n+|\s+(?=\d+\.\d+\s)")
_MONEY_TERMS = frozenset(
    analyze(
        "refund refunds refunded refundable non-refundable credit credits compensation "
        "reimbursement money back full entitle entitled receive receives not no any"
    )
)
# Units of time say when, not what: "14 days before" and "lost days" are not one subject.
_TIME_TERMS = frozenset(analyze("day days week weeks month months hour hours year years night"))


@dataclass(frozen=True)
class _Refusal:
    phrase: str
    terms: frozenset[str]
    item: str


def asks_money_back(intents: Sequence[str], sensitivity: Sequence[str]) -> bool:
    """The e-mail asks what comes back: a refund, cancellation or deposit intent, or the
    refund sensitivity."""
    return bool(MONEY_BACK_INTENTS.intersection(intents)) or "refund" in sensitivity


@lru_cache(maxsize=16384)
def _terms(text: str) -> frozenset[str]:
    """Content terms of a sentence, without money words, numbers and units of time (kept per
    process: a grant sentence is compared with every refusal of every policy chunk)."""
    return frozenset(t for t in analyze(text) if not t.isdigit()) - _MONEY_TERMS - _TIME_TERMS


@lru_cache(maxsize=4096)
def _statements(text: str) -> tuple[tuple[_Refusal, ...], tuple[tuple[str, str], ...]]:
    """(refusals, grants as (phrase, sentence)) of money back in a chunk's text."""
    sentences = [s for s in _SENTENCE_SPLIT.split(prepare(text)) if s]
    refusals: list[_Refusal] = []
    grants: list[tuple[str, str]] = []
    for i, sentence in enumerate(sentences):
        refused = _EXCEPTION_RE.sub("", _CLAUSE_NUMBER_RE.sub("", sentence))
        refusal = _REFUSAL_RE.search(refused)
        if refusal is not None and not re.search(r"\d", _RELATIVE_RE.sub("", refused)):
            context = (
                f"{sentences[i - 1]} {refused}" if _ANAPHOR_RE.match(refused) and i else refused
            )
            item = _REFUSED_ITEM_RE.search(refused)
            refusals.append(
                _Refusal(refusal.group(0), _terms(context), item.group("item") if item else "")
            )
            continue
        grant = _GRANT_RE.search(sentence)
        if (
            grant is not None
            and not _NEGATED_RE.search(sentence[: grant.start()])
            and not _OPERATOR_CANCELS_RE.search(sentence)
        ):
            grants.append((grant.group(0), sentence))
    return tuple(refusals), tuple(grants)


def _same_subject(refusal: _Refusal, grant: str) -> bool:
    if refusal.item and re.search(rf"\b{re.escape(refusal.item)}\b", grant):
        return True
    return len(refusal.terms & _terms(grant)) >= MIN_SHARED_TERMS


def denial_conflicts(chunks: Sequence[ConflictInput]) -> list[Conflict]:
    """Refusals of money back in policy-tier chunks against grants of it in another document's
    policy-tier or marketing chunk; one conflict per pair of chunks, in rank order."""
    ordered = sorted(chunks, key=lambda c: (c.rank, c.chunk_id))
    refusing = [c for c in ordered if c.category in HIGH_PRECEDENCE]
    granting = [c for c in ordered if c.category in GRANTING_CATEGORIES]
    found: dict[tuple[str, str], Conflict] = {}
    for policy, other in product(refusing, granting):
        ids = (policy.chunk_id, other.chunk_id)
        if other.doc_id == policy.doc_id or ids in found:
            continue
        pairs = product(_statements(policy.text)[0], _statements(other.text)[1])
        match = next(((r, g) for r, g in pairs if _same_subject(r, g[1])), None)
        if match is None:
            continue
        refusal, (granted, sentence) = match
        detail = (
            f"{other.chunk_id} ({other.category.value}) grants {granted}: {sentence!r}; "
            f"{policy.chunk_id} ({policy.category.value}) refuses it: {refusal.phrase}"
        )
        found[ids] = Conflict(BENEFIT_DENIAL, (granted, refusal.phrase), ids, detail)
    return list(found.values())
