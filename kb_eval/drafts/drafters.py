"""Reply drafting from an evidence pack (spec 7), extractive by default.

The extractive drafter writes nothing of its own except fixed templates (salutation, thanks,
clarifying questions, closing): every other sentence is copied from the evidence pack, chosen by
term overlap with the guest's message, kept in the pack's order, at most MAX_SENTENCES of them.
Every copied sentence carries a citation of the chunk it comes from (citations are internal and
never appear in the guest-facing text). The pack's outcome decides what is written:

- UNKNOWN: no draft (status "no_draft", empty text);
- ASK_CLARIFYING_QUESTION: a clarifying question only (the trip and departure date when the
  reason is AMBIGUOUS_CONTEXT, more detail otherwise), no policy statement;
- NEEDS_REVIEW: a draft with status "needs_review" (an operator must check it before sending);
- OK_TO_DRAFT: a draft with status "draft".
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

from kb_eval.judge.claim_judge import WEAK_TERMS, terms_of
from kb_eval.judge.claims import is_policy_like, split_sentences
from kb_retrieval.models import Category

MAX_SENTENCES = 5
SNIPPET_CHARS = 240
GREETING = "Hello,"
THANKS = "Thank you for your message."
CLOSING = "Best regards,"
ASK_TRIP_DATE = (
    "Could you tell us which trip and which departure date you are asking about, so that we can "
    "check the details that apply to your booking?"
)
ASK_MORE_DETAIL = (
    "Could you tell us a little more about your question, for example which trip, which dates "
    "and what you would like to know, so that we can give you an accurate answer?"
)
STATUS_BY_OUTCOME = {
    "OK_TO_DRAFT": "draft",
    "NEEDS_REVIEW": "needs_review",
    "ASK_CLARIFYING_QUESTION": "clarifying_question",
    "UNKNOWN": "no_draft",
}
NOT_GUEST_FACING = frozenset({"operations_internal"})
_HEADING_PREFIX = re.compile(r"^[^:.!?]{1,60}:\s+(?=[A-Z0-9\"'(])")


@dataclass(frozen=True)
class Citation:
    """Internal citation object of spec 3.5."""

    doc_title: str
    doc_version_id: str
    category: str
    source_locator: str
    chunk_id: str
    snippet: str
    confidence_score: float

    @classmethod
    def from_evidence(cls, item: Mapping[str, Any], snippet: str | None = None) -> Citation:
        text = snippet if snippet is not None else str(item.get("snippet") or "")
        return cls(
            doc_title=str(item.get("doc_title") or ""),
            doc_version_id=str(item.get("doc_version_id") or ""),
            category=str(item.get("category") or ""),
            source_locator=str(item.get("source_locator") or ""),
            chunk_id=str(item["chunk_id"]),
            snippet=clip(text, SNIPPET_CHARS),
            confidence_score=float(item.get("confidence_score") or 0.0),
        )


@dataclass(frozen=True)
class DraftSentence:
    text: str
    policy_like: bool
    citations: tuple[str, ...] = ()


@dataclass(frozen=True)
class Draft:
    """A reply draft: guest-facing text, its body sentences with citations, and a status."""

    case_id: str | None
    text: str
    sentences: list[DraftSentence] = field(default_factory=list)
    citations: list[Citation] = field(default_factory=list)
    status: str = "draft"
    reason_codes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (tuples become lists)."""
        data: dict[str, Any] = json.loads(json.dumps(asdict(self)))
        return data

    def to_record(self) -> dict[str, Any]:
        """The line of a drafts file for `kb eval-drafts` (citations attributed per sentence)."""
        by_id = {citation.chunk_id: citation for citation in self.citations}
        citations = [
            {**asdict(by_id[chunk_id]), "claim": sentence.text}
            for sentence in self.sentences
            for chunk_id in sentence.citations
            if chunk_id in by_id
        ]
        return {"case_id": self.case_id, "text": self.text, "citations": citations}


class Drafter(Protocol):
    def draft(self, pack: Mapping[str, Any], guest_text: str, case_id: str | None = None) -> Draft:
        """Write a reply draft for a guest message from its evidence pack."""
        ...


def clip(text: str, limit: int) -> str:
    """text cut to at most limit characters (an ellipsis marks a cut)."""
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "\u2026"


def render(body: Sequence[str]) -> str:
    """Guest-facing text: fixed salutation, thanks, the body sentences, fixed closing."""
    sentences = [s if s.rstrip()[-1:] in {".", "!", "?"} else s.rstrip() + "." for s in body]
    return f"{GREETING}\n\n{' '.join([THANKS, *sentences])}\n\n{CLOSING}"


def clarifying_question(reason_codes: Sequence[str]) -> str:
    """The fixed clarifying question for the reason codes of an ASK_CLARIFYING_QUESTION pack."""
    return ASK_TRIP_DATE if "AMBIGUOUS_CONTEXT" in reason_codes else ASK_MORE_DETAIL


def verdict_draft(pack: Mapping[str, Any], case_id: str | None) -> Draft | None:
    """The draft for outcomes that allow no evidence-based text (UNKNOWN, clarifying question)."""
    outcome = str(pack.get("outcome") or "UNKNOWN")
    reasons = tuple(str(code) for code in pack.get("reason_codes") or ())
    if outcome == "ASK_CLARIFYING_QUESTION":
        question = clarifying_question(reasons)
        sentence = DraftSentence(question, policy_like=False)
        return Draft(case_id, render([question]), [sentence], [], "clarifying_question", reasons)
    if outcome not in STATUS_BY_OUTCOME or outcome == "UNKNOWN":
        return Draft(case_id, "", [], [], "no_draft", reasons)
    return None


@dataclass(frozen=True)
class _Candidate:
    text: str
    order: tuple[int, int]
    score: float
    policy_like: bool
    item: Mapping[str, Any]


def _guest_sentences(text: str) -> list[str]:
    """Sentences of an evidence text fit for a guest email (no headings or fragments).

    A sentence that starts in lower case is a fragment (a list item the text extraction glued to
    the next sentence): copied into a draft, it would merge with the sentence before it into one
    claim that neither source states."""
    result = []
    for raw in split_sentences(text):
        heading = _HEADING_PREFIX.match(raw)
        sentence = raw[heading.end() :] if heading else raw
        words = sentence.split()
        ends = sentence.rstrip()[-1:] in {".", "!", "?"}
        short_fragment = not ends and len(words) <= 8
        if len(words) < 4 or short_fragment or sentence.rstrip().endswith((":", "?")):
            continue
        if sentence.lstrip()[:1].islower():
            continue
        result.append(sentence)
    return result


def _precedence(item: Mapping[str, Any]) -> tuple[int, float]:
    """Sort key of an evidence item: category tier (structured_policy first), then rank."""
    try:
        tier = Category(str(item.get("category"))).tier
    except ValueError:
        tier = len(Category) + 1
    rank = item.get("rank")
    return tier, float(rank) if isinstance(rank, int | float) else float("inf")


def outranked_chunks(pack: Mapping[str, Any]) -> frozenset[str]:
    """Chunks on the losing side of a detected conflict: every chunk of a conflict except the
    one of highest precedence (their policy-like sentences are not drafted)."""
    evidence = {str(item.get("chunk_id")): item for item in pack.get("evidence") or ()}
    losers: set[str] = set()
    for conflict in pack.get("conflicts") or ():
        ids = [str(cid) for cid in conflict.get("chunk_ids") or () if str(cid) in evidence]
        ranked = sorted(ids, key=lambda cid: (_precedence(evidence[cid]), cid))
        losers.update(ranked[1:])
    return frozenset(losers)


def _candidates(pack: Mapping[str, Any], guest_text: str) -> list[_Candidate]:
    items = [item for item in pack.get("evidence") or () if item.get("chunk_id")]
    evidence = sorted(items, key=_precedence)
    outranked = outranked_chunks(pack)
    higher_tier = any(str(item.get("category")) != "marketing" for item in evidence)
    wanted = terms_of(guest_text) - WEAK_TERMS
    seen: set[str] = set()
    found = []
    for position, item in enumerate(evidence):
        category = str(item.get("category"))
        if category in NOT_GUEST_FACING:
            continue
        body = str(item.get("text") or item.get("snippet") or "")
        for index, sentence in enumerate(_guest_sentences(body)):
            key = " ".join(sentence.lower().split())
            policy_like = is_policy_like(sentence)
            if key in seen or (policy_like and str(item["chunk_id"]) in outranked):
                continue
            if category == "marketing" and policy_like and higher_tier:
                continue
            seen.add(key)
            score = float(len(terms_of(sentence) & wanted))
            found.append(_Candidate(sentence, (position, index), score, policy_like, item))
    return found


def select_sentences(pack: Mapping[str, Any], guest_text: str) -> list[_Candidate]:
    """The MAX_SENTENCES evidence sentences sharing most terms with the guest text (the first two
    sentences when none shares a term), returned in precedence order."""
    candidates = _candidates(pack, guest_text)
    relevant = [c for c in candidates if c.score > 0] or candidates[:2]
    chosen = sorted(relevant, key=lambda c: (-c.score, c.order))[:MAX_SENTENCES]
    return sorted(chosen, key=lambda c: c.order)


def draft_reply(pack: Mapping[str, Any], guest_text: str, case_id: str | None = None) -> Draft:
    """Extractive reply draft that follows the pack's outcome (see the module docstring)."""
    early = verdict_draft(pack, case_id)
    if early is not None:
        return early
    reasons = tuple(str(code) for code in pack.get("reason_codes") or ())
    chosen = select_sentences(pack, guest_text)
    if not chosen:
        return Draft(case_id, "", [], [], "no_draft", reasons)
    citations: dict[str, Citation] = {}
    sentences = []
    for candidate in chosen:
        chunk_id = str(candidate.item["chunk_id"])
        citations.setdefault(chunk_id, Citation.from_evidence(candidate.item, candidate.text))
        sentences.append(DraftSentence(candidate.text, candidate.policy_like, (chunk_id,)))
    status = STATUS_BY_OUTCOME[str(pack.get("outcome"))]
    text = render([s.text for s in sentences])
    return Draft(case_id, text, sentences, list(citations.values()), status, reasons)


class ExtractiveDrafter:
    """Deterministic drafter that copies evidence sentences (the default Drafter)."""

    def draft(self, pack: Mapping[str, Any], guest_text: str, case_id: str | None = None) -> Draft:
        return draft_reply(pack, guest_text, case_id)
