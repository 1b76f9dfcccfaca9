"""Retrieval-time conflict signals over the top of the ranked evidence (spec 8).

Rules, chosen to miss a weak conflict rather than invent one:

* Quantities are compared only when they have the same kind, the same comparison unit
  (calendar vs business days, currency code, age bound) and the same topic (`quantity_topic`).
* A quantity in a sentence opening on "it", "this", "they" or "these" takes the topic the
  sentence before names, when it names exactly one ("a EUR 300 security deposit ... It is
  returned within 7 days").
* Per document version and topic the stated values form a set (over its chunks in the window);
  a schedule ("60 days: full refund; 30-59 days: 50%") is one policy. Two chunks conflict on a
  topic only if their versions' sets share no value ("7 days", "one week" and "168 hours" are
  the same value): a terms document that states the policy's 25% deposit in one section does
  not contradict it through a table row in another that reads as "deposit ... 50%".
* Amounts on a topic are not compared between two versions that state a shared percentage on
  it: with "a deposit of 30%" in both, USD 900 for one trip and USD 2,628 in a worked example
  are one rate applied to different prices (session 11).
* Two chunks that each quote a different line of a schedule stated by a third chunk at least
  as authoritative as either of them do not conflict.
* Chunks of one document version never conflict with each other.
* A duration counted from another deadline ("a reminder about 10 days before the balance due
  date", "... before the balance falls due") is an offset, not the policy's window; a duration
  naming a service's hours ("the insurer's 24 hours emergency number") is an availability.
  Neither is compared.
* Pairs compared: structured_policy vs terms_policy (kind policy_terms_disagreement); two
  chunks of the same category (numeric_window), except trip itineraries of different documents
  (different trips differ legitimately); a policy-tier chunk (structured_policy, terms_policy,
  waiver_release) vs any other category (numeric_window: the guest is told two things, e.g. a
  brochure's "24-hour cancellation" against the policy's "7 calendar days"). Other pairs of
  different categories, such as a trip itinerary against the general FAQ, are not compared:
  the trip-specific source wins (worked example 2).
* Trip-specific topics (check-in, pickup, departure times, luggage weight, discounts) are
  compared across different documents only when both chunks are policy-tier.
* unlinked_terms_versions: terms_policy chunks of two or more live versions of one document
  (same doc_id) not all joined by supersedes links visible among the chunks. Separate terms
  documents (payment terms beside cancellation terms) are not versions of each other.
* exception_request: the guest asks for an exception and policy-tier text is present.
* benefit_denial: a policy-tier chunk says no refund/credit/compensation is given under a
  condition ("no refund or credit is given if wildlife is not seen") while a lower-tier chunk of
  another document promises such a benefit under the same condition ("if your group does not
  see an orca, you will receive 20% off"). The conditions are the same when their clauses share
  a content word and are both negated or both not; conditions stated with numbers are left to
  the numeric rules.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import product

from kb_retrieval.models import HIGH_PRECEDENCE, Category
from kb_retrieval.retrieval.conflict_facts import (
    FactKey,
    disjoint,
    facts_of,
    value_labels,
)
from kb_retrieval.text.analyzer import analyze, prepare
from kb_retrieval.text.quantities import TRIP_SPECIFIC_TOPICS, Quantity

NUMERIC_WINDOW = "numeric_window"
POLICY_TERMS_DISAGREEMENT = "policy_terms_disagreement"
UNLINKED_TERMS_VERSIONS = "unlinked_terms_versions"
EXCEPTION_REQUEST = "exception_request"
BENEFIT_DENIAL = "benefit_denial"
CLAIM_CONTRADICTED = "claim_contradicted"
CONFLICT_KINDS = (
    NUMERIC_WINDOW,
    POLICY_TERMS_DISAGREEMENT,
    CLAIM_CONTRADICTED,
    BENEFIT_DENIAL,
    UNLINKED_TERMS_VERSIONS,
    EXCEPTION_REQUEST,
)
_POLICY_PAIR = frozenset({Category.STRUCTURED_POLICY, Category.TERMS_POLICY})


@dataclass(frozen=True)
class ConflictInput:
    """One chunk of the ranked evidence (rank 1 is best)."""

    chunk_id: str
    doc_id: str
    doc_version_id: str
    category: Category
    text: str
    supersedes_doc_version_id: str | None
    rank: int


@dataclass(frozen=True)
class Conflict:
    kind: str
    values: tuple[str, ...]
    chunk_ids: tuple[str, ...]
    detail: str
    topic: str = ""  # the quantity topic of a numeric conflict ("" for the other kinds)

    def to_json(self) -> dict[str, object]:
        """The evidence-pack form (spec 7)."""
        return {"kind": self.kind, "values": list(self.values), "chunk_ids": list(self.chunk_ids)}


def _input_key(chunk: ConflictInput) -> tuple[object, ...]:
    return (
        chunk.rank,
        chunk.chunk_id,
        chunk.doc_version_id,
        chunk.doc_id,
        chunk.category.value,
        chunk.supersedes_doc_version_id or "",
        chunk.text,
    )


def _pair_kind(a: ConflictInput, b: ConflictInput, topic: str) -> str | None:
    """Which conflict kind a disagreement between a and b on `topic` is, or None if allowed."""
    if a.doc_version_id == b.doc_version_id:
        return None
    both_policy = a.category in HIGH_PRECEDENCE and b.category in HIGH_PRECEDENCE
    if topic in TRIP_SPECIFIC_TOPICS and a.doc_id != b.doc_id and not both_policy:
        return None
    if {a.category, b.category} == _POLICY_PAIR:
        return POLICY_TERMS_DISAGREEMENT
    if a.category == b.category:
        trips_differ = a.category == Category.TRIP_ITINERARY and a.doc_id != b.doc_id
        return None if trips_differ else NUMERIC_WINDOW
    if a.category in HIGH_PRECEDENCE or b.category in HIGH_PRECEDENCE:
        return NUMERIC_WINDOW
    return None


class _PairChecks:
    """The value comparisons of one `_numeric_conflicts` call, each computed once.

    The pairwise loop asks, for every pair of chunks sharing a key, what each chunk's document
    version states on the key (a scan of all inputs) and whether a third chunk reconciles the
    pair (a scan of all inputs with a value comparison each): cubic in the inputs when
    recomputed. Versions' value lists, version-pair disjointness and chunk-pair agreement are
    memoised here (agreement by distinct text: a chunk's facts are a function of its text).
    """

    def __init__(
        self, ordered: Sequence[ConflictInput], facts: Sequence[dict[FactKey, tuple[Quantity, ...]]]
    ) -> None:
        self.ordered = ordered
        self.facts = facts
        texts: dict[str, int] = {}
        self.text_ids = [texts.setdefault(chunk.text, len(texts)) for chunk in ordered]
        self.stating: dict[FactKey, list[int]] = {}
        for k, chunk_facts in enumerate(facts):
            for key in chunk_facts:
                self.stating.setdefault(key, []).append(k)
        self._values: dict[tuple[str, FactKey], list[Quantity]] = {}
        self._signatures: dict[tuple[str, FactKey], frozenset[tuple[str, str, float]]] = {}
        self._disjoint_values: dict[tuple[frozenset[object], frozenset[object]], bool] = {}
        self._agree: dict[tuple[int, int, FactKey], bool] = {}

    def version_values(self, key: FactKey, index: int) -> list[Quantity]:
        """What the document version of chunk `index` states on `key`, over all its chunks."""
        version = self.ordered[index].doc_version_id
        found = self._values.get((version, key))
        if found is None:
            found = [
                q
                for k in self.stating.get(key, ())
                if self.ordered[k].doc_version_id == version
                for q in self.facts[k][key]
            ]
            self._values[(version, key)] = found
        return found

    def _signature(self, key: FactKey, index: int) -> frozenset[tuple[str, str, float]]:
        """The (kind, unit, value) set of `version_values`: all `conflict_facts._same_value` reads."""
        version = (self.ordered[index].doc_version_id, key)
        found = self._signatures.get(version)
        if found is None:
            found = frozenset((q.kind, q.unit, q.value) for q in self.version_values(key, index))
            self._signatures[version] = found
        return found

    def versionsdisjoint(self, key: FactKey, i: int, j: int) -> bool:
        """The versions of chunks i and j share no value on `key` (compared once per pair of
        distinct value sets: a large tenant's copies of one document state the same values)."""
        pair = (self._signature(key, i), self._signature(key, j))
        found = self._disjoint_values.get(pair)
        if found is None:
            found = disjoint(self.version_values(key, i), self.version_values(key, j))
            self._disjoint_values[pair] = found
        return found

    def rates_agree(self, key: FactKey, i: int, j: int) -> bool:
        """For amounts (`key` of kind currency): the versions of chunks i and j state a shared
        percentage on the same topic, so their amounts are that rate applied to different
        prices (one trip's minimum, a worked example), not two rules."""
        if key[0] != "currency":
            return False
        rate = ("percent", "", key[2])
        left, right = self.version_values(rate, i), self.version_values(rate, j)
        return bool(left) and bool(right) and not disjoint(left, right)

    def _agrees(self, key: FactKey, k: int, i: int) -> bool:
        """Chunks k and i (both stating `key`) share a value on it."""
        pair = (self.text_ids[k], self.text_ids[i], key)
        found = self._agree.get(pair)
        if found is None:
            found = not disjoint(self.facts[k][key], self.facts[i][key])
            self._agree[pair] = found
        return found

    def reconciled(self, key: FactKey, pair: tuple[int, int]) -> bool:
        """True if a third chunk, at least as authoritative as the better of the pair, states a
        schedule containing a value of each side (both sides quote the same schedule)."""
        best_tier = min(self.ordered[i].category.tier for i in pair)
        return any(
            k not in pair
            and self.ordered[k].category.tier <= best_tier
            and all(self._agrees(key, k, i) for i in pair)
            for k in self.stating[key]
        )


def _numeric_conflicts(ordered: Sequence[ConflictInput]) -> list[Conflict]:
    facts = [facts_of(chunk.text) for chunk in ordered]
    checks = _PairChecks(ordered, facts)
    groups: dict[tuple[str, FactKey], set[int]] = {}
    for i, a in enumerate(ordered):
        for j in range(i + 1, len(ordered)):
            b = ordered[j]
            for key in sorted(facts[i].keys() & facts[j].keys()):
                kind = _pair_kind(a, b, key[2])
                if (
                    kind is not None
                    and checks.versionsdisjoint(key, i, j)
                    and not checks.rates_agree(key, i, j)
                    and not checks.reconciled(key, (i, j))
                ):
                    groups.setdefault((kind, key), set()).update((i, j))
    conflicts: list[Conflict] = []
    for (kind, key), members in groups.items():
        indexes = sorted(members)
        quantities = [q for i in indexes for q in facts[i][key]]
        parts = [
            f"{ordered[i].chunk_id} ({ordered[i].category.value}): "
            + ", ".join(value_labels(facts[i][key]))
            for i in indexes
        ]
        detail = f"{key[2]} {key[0]} differs: " + "; ".join(parts)
        chunk_ids = _unique(ordered[i].chunk_id for i in indexes)
        conflicts.append(Conflict(kind, value_labels(quantities), chunk_ids, detail, key[2]))
    return conflicts


# Monetary benefits a guest can be promised or refused (one class: a credit is a refund in kind).
_BENEFIT = (
    r"(?:(?:full|partial) )?(?:refunds?|credits?|vouchers?|compensation|reimbursements?"
    r"|discounts?|money back|\d+(?:\.\d+)? ?(?:%|per ?cent) off)"
)
_BENEFIT_RE = re.compile(rf"\b{_BENEFIT}")
_DENIAL_RES = (
    re.compile(
        rf"\bno (?P<b>{_BENEFIT}(?:,? (?:or|and|nor) {_BENEFIT})*) (?:is |are |will be |shall be "
        r"|can be )?(?:given|due|made|paid|offered|issued|available|provided|owed)\b"
    ),
    re.compile(rf"\bnot (?:be )?(?:entitled|eligible) (?:to|for) (?:an? |any )?(?P<b>{_BENEFIT})"),
    re.compile(
        r"\b(?:we|you) (?:will|shall|do|can) not (?:give|offer|pay|issue|provide|receive|get) "
        rf"(?:an? |any )?(?P<b>{_BENEFIT})"
    ),
)
_PROMISE_RE = re.compile(r"\b(?:will|shall|get|gets|receive|receives|entitled|guaranteed)\b")
_CONDITION_RE = re.compile(r"\b(?:if|in case|in the event(?: that)?)\b(?P<c>[^,.;:!?]+)")
_NEGATION_RE = re.compile(r"\b(?:not|no|never|without|fail|fails|failed)\b")
_SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+|\n+")
_IRREGULAR = {
    "seen": "see", "saw": "see", "given": "give", "gave": "give", "taken": "take", "took": "take",
    "made": "make", "lost": "lose", "gone": "go", "went": "go", "found": "find", "left": "leave",
    "held": "hold", "met": "meet", "caught": "catch", "begun": "begin", "began": "begin",
    "paid": "pay", "sent": "send", "spent": "spend", "ran": "run",
}  # fmt: skip
_NEGATION_TERMS = frozenset({"not", "no", "never", "without", "fail"})


@dataclass(frozen=True)
class _Clause:
    """A benefit and the condition it is tied to, in one sentence."""

    benefit: str
    terms: frozenset[str]
    negated: bool


def _condition(sentence: str) -> tuple[frozenset[str], bool] | None:
    """Content terms and polarity of the sentence's "if ..." clause (None: none, or numeric)."""
    match = _CONDITION_RE.search(sentence)
    if match is None or re.search(r"\d", match.group("c")):
        return None
    clause = match.group("c")
    terms = frozenset(_IRREGULAR.get(t, t) for t in analyze(clause)) - _NEGATION_TERMS
    return (terms, bool(_NEGATION_RE.search(clause))) if terms else None


@lru_cache(maxsize=4096)
def _benefit_clauses(text: str) -> tuple[tuple[_Clause, ...], tuple[_Clause, ...]]:
    """(conditional denials, conditional promises) of monetary benefits in a chunk's text."""
    denials: list[_Clause] = []
    promises: list[_Clause] = []
    for sentence in _SENTENCE_SPLIT.split(prepare(text)):
        condition = _condition(sentence)
        if condition is None:
            continue
        denial = next((m for r in _DENIAL_RES if (m := r.search(sentence))), None)
        if denial is not None:
            denials.append(_Clause("no " + denial.group("b"), *condition))
            continue
        benefit = _BENEFIT_RE.search(sentence)
        if benefit is not None and _PROMISE_RE.search(sentence):
            before = sentence[max(0, benefit.start() - 12) : benefit.start()]
            if not _NEGATION_RE.search(before):
                promises.append(_Clause(benefit.group(0), *condition))
    return tuple(denials), tuple(promises)


def _benefit_conflicts(ordered: Sequence[ConflictInput]) -> list[Conflict]:
    """A policy-tier denial and a lower-tier promise of a benefit under the same condition."""
    clauses = {chunk.chunk_id: _benefit_clauses(chunk.text) for chunk in ordered}
    policies = [c for c in ordered if c.category in HIGH_PRECEDENCE]
    others = [c for c in ordered if c.category not in HIGH_PRECEDENCE]
    found: dict[tuple[tuple[str, ...], tuple[str, ...]], Conflict] = {}
    for policy, other in product(policies, others):
        if other.doc_id == policy.doc_id:
            continue
        for denial, promise in product(clauses[policy.chunk_id][0], clauses[other.chunk_id][1]):
            if denial.negated != promise.negated or not denial.terms & promise.terms:
                continue
            detail = (
                f"{other.chunk_id} ({other.category.value}) promises {promise.benefit}; "
                f"{policy.chunk_id} ({policy.category.value}): {denial.benefit} under the "
                "same condition"
            )
            ids, values = (policy.chunk_id, other.chunk_id), (promise.benefit, denial.benefit)
            found.setdefault((ids, values), Conflict(BENEFIT_DENIAL, values, ids, detail))
    return list(found.values())


def _unique(items: Iterable[str]) -> tuple[str, ...]:
    """Items without repeats, first occurrence order."""
    return tuple(dict.fromkeys(items))


def _unlinked_terms(ordered: Sequence[ConflictInput]) -> list[Conflict]:
    """Several live versions of one terms document that no supersedes link orders."""
    found = []
    for doc_id in _unique(c.doc_id for c in ordered if c.category == Category.TERMS_POLICY):
        terms = [c for c in ordered if c.category == Category.TERMS_POLICY and c.doc_id == doc_id]
        versions = _unique(chunk.doc_version_id for chunk in terms)
        if len(versions) < 2:
            continue
        parent = {version: version for version in versions}

        def root(version: str, parent: dict[str, str] = parent) -> str:
            while parent[version] != version:
                version = parent[version]
            return version

        for chunk in terms:
            older = chunk.supersedes_doc_version_id
            if older in parent:
                parent[root(chunk.doc_version_id)] = root(older)
        if len({root(version) for version in versions}) == 1:
            continue
        detail = "terms_policy versions without a supersedes link: " + ", ".join(versions)
        ids = _unique(chunk.chunk_id for chunk in terms)
        found.append(Conflict(UNLINKED_TERMS_VERSIONS, versions, ids, detail))
    return found


def _exception(ordered: Sequence[ConflictInput], exception_request: bool) -> list[Conflict]:
    policy = [chunk for chunk in ordered if chunk.category in HIGH_PRECEDENCE]
    if not exception_request or not policy:
        return []
    detail = "exception requested: policy text exists but the decision needs human discretion"
    return [Conflict(EXCEPTION_REQUEST, (), _unique(chunk.chunk_id for chunk in policy), detail)]


def detect_conflicts(chunks: Sequence[ConflictInput], *, exception_request: bool) -> list[Conflict]:
    """Conflicts among the top chunks; the result does not depend on the order of `chunks`."""
    ordered = sorted(chunks, key=_input_key)
    position: dict[str, int] = {}
    for index, chunk in enumerate(ordered):
        position.setdefault(chunk.chunk_id, index)
    found = [
        *_numeric_conflicts(ordered),
        *_benefit_conflicts(ordered),
        *_unlinked_terms(ordered),
        *_exception(ordered, exception_request),
    ]
    return sorted(
        found,
        key=lambda c: (
            CONFLICT_KINDS.index(c.kind),
            tuple(position[i] for i in c.chunk_ids),
            c.values,
            c.detail,
        ),
    )
