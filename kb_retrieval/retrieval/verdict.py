"""Flags, reason codes and the outcome, by the rules of spec 9."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from kb_retrieval.models import HIGH_PRECEDENCE, Category, Outcome, ReasonCode
from kb_retrieval.query.intents import mentions_intent
from kb_retrieval.query.plan import QueryPlan
from kb_retrieval.query.trips import same_trip
from kb_retrieval.retrieval.audience import not_for_guests
from kb_retrieval.retrieval.candidates import Candidate
from kb_retrieval.retrieval.config import RetrievalConfig
from kb_retrieval.retrieval.conflict_scope import bears_on, claim_conflicts, question_topics
from kb_retrieval.retrieval.conflicts import Conflict, ConflictInput, detect_conflicts
from kb_retrieval.retrieval.denial_conflicts import asks_money_back, denial_conflicts
from kb_retrieval.retrieval.departure_agreement import (
    departures_agree,
    departures_differ_within,
    states_kind_asked,
)
from kb_retrieval.retrieval.near_answer import NearAnswer, reaches
from kb_retrieval.retrieval.precedence import precedence_met
from kb_retrieval.retrieval.selection import is_low_relevance
from kb_retrieval.retrieval.typed_answer import TYPED_ANSWER

REASON_ORDER = list(ReasonCode)
CONFLICT_WINDOW = 6
# Left-out chunks with a typed answer read for conflicts (conflict_chunks), best ranked first.
TYPED_OUTSIDE_MAX = 3
# Intents whose answer is a departure's own logistics (where and when to meet, check-in).
LOGISTICS_INTENTS = frozenset({"check_in", "pickup"})
# Medical and safety questions may be answered authoritatively by the safety/medical policy.
CLAIM_CLASS_AUTHORITIES = {
    "medical": HIGH_PRECEDENCE | {Category.SAFETY_MEDICAL},
    "safety": HIGH_PRECEDENCE | {Category.SAFETY_MEDICAL},
    "fitness": HIGH_PRECEDENCE | {Category.SAFETY_MEDICAL},
    "dietary": HIGH_PRECEDENCE | {Category.SAFETY_MEDICAL},
}
# Intents whose answer is a commitment only text stating it can ground (spec 3.6).
COMMITMENT_INTENTS = frozenset({"discount"})
# Claim classes with a dedicated source: when it is above the low-relevance line, it is what a
# specific answer rests on (a fresh general terms section, or a fresh FAQ entry on another matter,
# does not make a stale medical policy or packing list current).
CLAIM_CLASS_SPECIALISTS = {"medical": Category.SAFETY_MEDICAL, "packing": Category.PACKING_LIST}


# Exception requests are reported by their own reason code (EXCEPTION_REQUEST), not as a conflict,
# so `conflicting_evidence` only means that the evidence itself disagrees.


@dataclass(frozen=True)
class Verdict:
    outcome: Outcome
    reason_codes: tuple[ReasonCode, ...]
    flags: dict[str, bool]
    conflicts: tuple[Conflict, ...]
    sensitive: bool


def required_categories(plan: QueryPlan) -> frozenset[Category]:
    """Categories that may ground this policy-like question (structured/terms/waiver by default;
    the safety/medical policy too for the claim classes it speaks for and any safety question)."""
    allowed: set[Category] = set(HIGH_PRECEDENCE)
    for intent in plan.intents:
        allowed |= CLAIM_CLASS_AUTHORITIES.get(intent, set())
    if "safety" in plan.sensitivity:
        allowed |= CLAIM_CLASS_AUTHORITIES["safety"]
    return frozenset(allowed)


def states_commitment(plan: QueryPlan, chunk: Candidate) -> bool:
    """For a question about a commitment (a discount, a free place), the chunk speaks of one.

    A price reduction is granted only by text that states it; a terms section on another matter
    ("changes to these conditions") is authoritative but does not ground "kids sail free".
    """
    asked = [intent for intent in plan.intents if intent in COMMITMENT_INTENTS]
    return not asked or any(mentions_intent(chunk.text, intent) for intent in asked)


def grounding_chunks(
    plan: QueryPlan, usable: Sequence[Candidate], plausible: Sequence[Candidate] = ()
) -> list[Candidate]:
    """The chunks a claim of this question rests on; "stale only" is judged on them.

    A claim class with a dedicated source (medical: the safety/medical policy; packing: the
    packing list) rests on that source whenever it is among the usable chunks, else among the
    `plausible` ones (above the low-relevance line). Otherwise, policy-like: the authoritative
    usable chunks; any other question: every usable chunk.
    """
    classes = set(plan.intents) | set(plan.sensitivity)
    for claim_class, category in CLAIM_CLASS_SPECIALISTS.items():
        if claim_class not in classes:
            continue
        specialist = [c for c in usable if c.version.category is category] or [
            c for c in plausible if c.version.category is category
        ]
        if specialist:
            return specialist
    if not plan.policy_like:
        return list(usable)
    authoritative = required_categories(plan)
    return [c for c in usable if c.version.category in authoritative] or list(usable)


def is_ambiguous(
    plan: QueryPlan,
    pack: Sequence[Candidate],
    usable: Sequence[Candidate],
    config: RetrievalConfig,
    has_trip_context: bool,
    *,
    weak: bool = False,
    outside: Sequence[Candidate] = (),
) -> bool:
    """The answer depends on a departure the email does not pin down (no date, and no trip
    context naming a departure: a product name alone does not).

    Either several trips' itineraries answer about equally well; or the best usable evidence is
    one departure's itinerary while another departure of the same trip is in the pack (what one
    departure's itinerary says, a hotel, a time, heated cabins in winter, need not hold for the
    guest's departure); or the email asks for departure logistics (meeting point, start time) of
    no named trip while the pack holds the itineraries of several trips. `weak`: no chunk is
    usable and `usable` holds the plausible chunks (above the low-relevance line) instead; the
    itineraries of several trips must then be among them, not merely in the pack. Not when the
    other departures' itineraries (in the pack or `outside` it) state the best itinerary's
    answer unchanged (`departures_agree`): the evidence does not differ between them.
    """
    pinned = has_trip_context and not plan.context_undated
    if plan.dates or pinned or not usable:
        return False
    itineraries = [c for c in usable if c.version.category is Category.TRIP_ITINERARY]
    if any(departures_differ_within(plan, c.text) for c in itineraries):
        return True
    if itineraries:
        top = max(c.rank_score for c in itineraries)
        close_docs = {
            c.version.doc_id for c in itineraries if c.rank_score >= top - config.ambiguity_margin
        }
        departures = {c.version.doc_id for c in _same_trip_departures(pack, usable[0])}
        if departures:
            departures.add(usable[0].version.doc_id)
        open_docs = (close_docs if len(close_docs) >= 2 else set()) | departures
        if (
            open_docs
            and (
                bool(LOGISTICS_INTENTS.intersection(plan.intents))
                or states_kind_asked(
                    plan, [c for c in [*pack, *usable] if c.version.doc_id in open_docs]
                )
            )
            and not departures_agree(plan, itineraries, open_docs, [*pack, *outside])
        ):
            return True
    return _unnamed_trip_logistics(plan, usable if weak else pack, plausible(pack, config))


def _same_trip_departures(pack: Sequence[Candidate], best: Candidate) -> list[Candidate]:
    """When the best usable chunk is an itinerary: the pack's itinerary chunks of other
    departures of its trip."""
    if best.version.category is not Category.TRIP_ITINERARY:
        return []
    return [
        c
        for c in pack
        if c.version.category is Category.TRIP_ITINERARY
        and c.version.doc_id != best.version.doc_id
        and same_trip(best.version.title, c.version.title)
    ]


def _unnamed_trip_logistics(
    plan: QueryPlan, chunks: Sequence[Candidate], plausible_chunks: Sequence[Candidate]
) -> bool:
    """Meeting point or start time asked of no named trip, with several trips' itineraries among
    `chunks` and an itinerary among the `plausible_chunks` (above the low-relevance line): the
    answer is an itinerary's, so which trip decides it. Itineraries all under the line do not
    make the question depend on a departure (a transfer the guest books, answered elsewhere)."""
    if plan.trip_names or not LOGISTICS_INTENTS.intersection(plan.intents):
        return False
    if not any(c.version.category is Category.TRIP_ITINERARY for c in plausible_chunks):
        return False
    docs = {c.version.doc_id for c in chunks if c.version.category is Category.TRIP_ITINERARY}
    return len(docs) >= 2


def decide(
    plan: QueryPlan,
    pack: Sequence[Candidate],
    config: RetrievalConfig,
    *,
    has_trip_context: bool = False,
    outside: Sequence[Candidate] = (),
) -> Verdict:
    """The outcome of spec 9; `outside` = candidates not in the pack (read for conflicts)."""
    sensitive = bool(plan.sensitivity) or plan.exception_request
    if not plan.quality_ok:
        flags = {
            "stale_only_evidence": False,
            "conflicting_evidence": False,
            "low_confidence": True,
        }
        return Verdict(
            Outcome.ASK_CLARIFYING_QUESTION, (ReasonCode.QUERY_TOO_VAGUE,), flags, (), sensitive
        )
    # A chunk the pack marks low relevance (spec 7.5) is context, never the grounding of a draft.
    # Nor is text that says it is not for guests ("do not quote it", "does not apply to guests").
    usable = [
        c
        for c in pack
        if c.confidence >= config.unknown_threshold
        and not is_low_relevance(c, config)
        and not not_for_guests(c.text)
    ]
    # The confidence a draft would rest on: a chunk under the low-relevance line never grounds
    # one, so its confidence does not lift the low-confidence flag either.
    top = max((c.confidence for c in usable), default=0.0)
    # A policy-like claim can only be grounded by its authoritative categories, so "stale only"
    # is judged on those usable chunks (a fresh brochure does not make a stale policy current).
    # Without a usable chunk, the plausible ones are what a person reviewing would read.
    weak = plausible(pack, config)
    grounding = grounding_chunks(plan, usable or weak, weak)
    conflicts = relevant_conflicts(plan, pack, outside, config)
    flags = {
        "stale_only_evidence": bool(grounding) and all(c.stale for c in grounding),
        "conflicting_evidence": bool(conflicts),
        "low_confidence": top < config.low_confidence_threshold,
    }
    reasons: set[ReasonCode] = set()
    if not usable:
        # An exception request needs a person's discretion whatever the evidence (spec 8):
        # "I don't know" would answer a question the guest did not ask. Likewise a sensitive or
        # policy-like question the knowledge base likely answers (case model >= 0.65) although
        # no chunk is confident enough to draft from: a person answers it.
        disputed = likely_answered(plan, pack, outside, config)
        reasons.add(ReasonCode.LOW_CONFIDENCE if disputed else ReasonCode.NO_EVIDENCE)
        if plan.exception_request:
            reasons.add(ReasonCode.EXCEPTION_REQUEST)
        if sensitive:
            reasons.add(ReasonCode.SENSITIVE_TOPIC)
        review = plan.exception_request or disputed
        if review:
            # Spec 9: a person is told why, as when a chunk is usable (the flags say the same).
            reasons |= warning_reasons(flags)
        outcome = Outcome.NEEDS_REVIEW if review else Outcome.UNKNOWN
        if not review and is_ambiguous(
            plan,
            pack,
            weak,
            config,
            has_trip_context,
            weak=True,
            outside=outside,
        ):
            # The answer depends on a departure the e-mail does not give: which one decides what
            # the evidence says, so ask rather than abstain.
            reasons = {ReasonCode.AMBIGUOUS_CONTEXT}
            outcome = Outcome.ASK_CLARIFYING_QUESTION
        return Verdict(outcome, _ordered(reasons), flags, conflicts, sensitive)
    if flags["low_confidence"]:
        reasons.add(ReasonCode.LOW_CONFIDENCE)
    reasons |= warning_reasons(flags)
    if plan.exception_request:
        reasons.add(ReasonCode.EXCEPTION_REQUEST)
    if needs_authority(plan):
        if all(c.version.category is Category.MARKETING for c in usable):
            reasons.add(ReasonCode.MARKETING_ONLY_EVIDENCE)
        required = required_categories(plan)
        authoritative = [
            c
            for c in plausible(pack, config)
            if c.version.category in required and states_commitment(plan, c)
        ]
        usable_ids = {c.chunk_id for c in usable}
        if not precedence_met(plan, authoritative, usable_ids, conflicted=bool(conflicts)):
            reasons.add(ReasonCode.MISSING_REQUIRED_PRECEDENCE)
    if is_ambiguous(plan, pack, usable, config, has_trip_context, outside=outside):
        reasons.add(ReasonCode.AMBIGUOUS_CONTEXT)
    if sensitive and reasons:
        reasons.add(ReasonCode.SENSITIVE_TOPIC)
    review_always = {
        ReasonCode.EXCEPTION_REQUEST,
        ReasonCode.MISSING_REQUIRED_PRECEDENCE,
        ReasonCode.MARKETING_ONLY_EVIDENCE,
    }
    review_if_sensitive = {ReasonCode.STALE_ONLY_EVIDENCE, ReasonCode.CONFLICT_DETECTED}
    if (
        reasons & review_always
        or (sensitive and reasons & review_if_sensitive)
        or (low_confidence_reviews(plan) and ReasonCode.LOW_CONFIDENCE in reasons)
    ):
        outcome = Outcome.NEEDS_REVIEW
    elif ReasonCode.AMBIGUOUS_CONTEXT in reasons:
        outcome = Outcome.ASK_CLARIFYING_QUESTION
    else:
        outcome = Outcome.OK_TO_DRAFT
    return Verdict(outcome, _ordered(reasons), flags, conflicts, sensitive)


def needs_authority(plan: QueryPlan) -> bool:
    """A draft must rest on an authoritative source: policy-like questions, and any safety
    question, since safety rules are policy-like claims (spec 3.6) even when the caller's flag or
    safety words ("swim off the boat", "climb without a rope"), not a policy intent, made the
    e-mail sensitive. Retrieval keeps the plan's `policy_like` (tiers and expansion) as it is:
    setting it for safety e-mails cost `data/golden` recall through the tiered ranking."""
    return plan.policy_like or "safety" in plan.sensitivity


def warning_reasons(flags: dict[str, bool]) -> set[ReasonCode]:
    """STALE_ONLY_EVIDENCE and CONFLICT_DETECTED, as the pack's flags of the same names say."""
    codes = {
        "stale_only_evidence": ReasonCode.STALE_ONLY_EVIDENCE,
        "conflicting_evidence": ReasonCode.CONFLICT_DETECTED,
    }
    return {code for flag, code in codes.items() if flags[flag]}


def review_near_answer(
    verdict: Verdict, near: NearAnswer | None, config: RetrievalConfig
) -> Verdict:
    """An `UNKNOWN` verdict whose near answer reaches `near_answer_threshold` (an answer in other
    words, near_answer.py) goes to a person, as the case model's review does: `NEEDS_REVIEW`
    with `LOW_CONFIDENCE` for `NO_EVIDENCE`, plus the warnings its flags carry. `UNKNOWN` means
    no usable chunk, no exception request, nothing likely answered and no departure to ask
    about, so nothing else decides it. Any other verdict is returned as it is."""
    if (
        verdict.outcome is not Outcome.UNKNOWN
        or not config.near_answer_review
        or not reaches(near, config.near_answer_threshold)
    ):
        return verdict
    reasons = set(verdict.reason_codes) - {ReasonCode.NO_EVIDENCE}
    reasons |= {ReasonCode.LOW_CONFIDENCE} | warning_reasons(verdict.flags)
    return replace(verdict, outcome=Outcome.NEEDS_REVIEW, reason_codes=_ordered(reasons))


def low_confidence_reviews(plan: QueryPlan) -> bool:
    """A usable but low-confidence answer (0.65 <= top < 0.72) goes to a person when the e-mail
    is sensitive or an exception request; for any other question, policy-like ones included, it
    is a warning on a draft, as a conflict on a non-sensitive topic is (spec 6: "for
    non-sensitive topics, allow draft generation with explicit internal warning"; spec 7 lists
    no review for low confidence alone). A policy-like question still needs its authoritative
    source (MISSING_REQUIRED_PRECEDENCE reviews it otherwise)."""
    return bool(plan.sensitivity) or plan.exception_request


def plausible(pack: Sequence[Candidate], config: RetrievalConfig) -> list[Candidate]:
    """Pack chunks above the low-relevance line, in pack order (candidates to ask about)."""
    return [c for c in pack if not is_low_relevance(c, config)]


def likely_answered(
    plan: QueryPlan,
    pack: Sequence[Candidate],
    outside: Sequence[Candidate],
    config: RetrievalConfig,
) -> bool:
    """A sensitive or policy-like question that the case-level answerability model (fitted per
    fold under leave-one-operator-out) finds likely answered: probability >= `unknown_threshold`."""
    if not config.answerability_review:
        return False
    if not (plan.sensitivity or plan.exception_request or plan.policy_like):
        return False
    q = config.answerability.case_probability([c.features for c in [*pack, *outside]])
    return q is not None and q >= config.unknown_threshold


def relevant_conflicts(
    plan: QueryPlan,
    pack: Sequence[Candidate],
    outside: Sequence[Candidate],
    config: RetrievalConfig,
) -> tuple[Conflict, ...]:
    """Conflicts that bear on this e-mail (`conflict_scope.py`): numeric disagreements on a
    topic the e-mail asks about between chunks above the low-relevance line, the other kinds,
    values the e-mail states that the relevant policy-tier chunks contradict, and, for an e-mail
    about money back, a policy's refusal of it against another source's grant
    (`denial_conflicts.py`; a pair already reported is not reported twice)."""
    chunks = conflict_chunks(pack, outside, config)
    text = plan.guest_text or plan.normalized_text
    topics = question_topics(text, plan.intents)
    relevant = [c for c in chunks if not is_low_relevance(c, config)]
    ids = frozenset(c.chunk_id for c in relevant)
    found = [
        c
        for c in detect_conflicts(_inputs(chunks), exception_request=False)
        if bears_on(c, topics, ids)
    ]
    if asks_money_back(plan.intents, plan.sensitivity):
        reported = {c.chunk_ids for c in found}
        found.extend(c for c in denial_conflicts(_inputs(relevant)) if c.chunk_ids not in reported)
    return (*found, *claim_conflicts(text, _inputs(relevant)))


def conflict_chunks(
    pack: Sequence[Candidate], outside: Sequence[Candidate], config: RetrievalConfig
) -> list[Candidate]:
    """The pack's first chunks, then every later pack chunk that is usable or above the
    low-relevance line (the pack shows it), then every chunk left out of the pack that is
    usable or states a typed answer (a value of the kind asked, about what is asked:
    typed_answer.py).

    A pack filled by precedence tiers pushes lower-tier chunks (a brochure's promise) past its
    window or out of it; what the guest was told elsewhere still contradicts the policy. A
    website line that states another refund window than the policy may share too few words
    with the e-mail to pass the floors, yet it states exactly what the guest asks. At most
    `TYPED_OUTSIDE_MAX` such chunks are read, the best ranked: a large tenant has many
    value-stating chunks among its 40 candidates, and each costs the detector time.
    """
    typed = [
        c.chunk_id
        for c in outside
        if c.confidence < config.unknown_threshold and c.features.get(TYPED_ANSWER)
    ]
    read = frozenset(typed[:TYPED_OUTSIDE_MAX])
    return [
        *pack[:CONFLICT_WINDOW],
        *(
            c
            for c in pack[CONFLICT_WINDOW:]
            if c.confidence >= config.unknown_threshold or not is_low_relevance(c, config)
        ),
        *(c for c in outside if c.confidence >= config.unknown_threshold or c.chunk_id in read),
    ]


def conflict_inputs(
    pack: Sequence[Candidate], outside: Sequence[Candidate], config: RetrievalConfig
) -> list[ConflictInput]:
    """`conflict_chunks` as the conflict detector's inputs (rank = position)."""
    return _inputs(conflict_chunks(pack, outside, config))


def _inputs(chunks: Sequence[Candidate]) -> list[ConflictInput]:
    return [
        ConflictInput(
            chunk_id=c.chunk_id,
            doc_id=c.version.doc_id,
            doc_version_id=c.version.doc_version_id,
            category=c.version.category,
            text=c.text,
            supersedes_doc_version_id=c.version.supersedes_doc_version_id,
            rank=i,
        )
        for i, c in enumerate(chunks)
    ]


def admit_conflicting(
    pack: Sequence[Candidate], outside: Sequence[Candidate], verdict: Verdict, pack_max: int
) -> list[Candidate]:
    """The pack with every outside chunk a reported conflict cites (so the conflict is citable);
    they take the places of the pack's last chunks when it is full."""
    cited = {chunk_id for conflict in verdict.conflicts for chunk_id in conflict.chunk_ids}
    joining = [c for c in outside if c.chunk_id in cited]
    if not joining:
        return list(pack)
    keep = min(len(pack), max(CONFLICT_WINDOW, pack_max - len(joining)))
    return [*pack[:keep], *joining[: max(0, pack_max - keep)]]


def _ordered(reasons: set[ReasonCode]) -> tuple[ReasonCode, ...]:
    return tuple(sorted(reasons, key=REASON_ORDER.index))
