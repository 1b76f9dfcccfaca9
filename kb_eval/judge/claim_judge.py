"""Deterministic support judge: does a set of evidence texts state a claim?

Labels: "supported" (the evidence states every part of the claim, with the same numbers),
"contradicted" (the best-aligned evidence says the opposite, or gives another value for one of
the claim's quantities) and "unrelated" (the evidence does not address the claim or leaves a part
of it unstated). A claim that is a whole sentence of its evidence (after normalisation) is
supported before any rule runs: another sentence's antonym or negation cannot unsay it, and an
extractive drafter's sentences were misjudged that way. Otherwise, per clause of the claim
(", and ...", "; ...", ", but ..."):

1. Quantities (durations, money, percentages, times of day, ages and counts, weights, lengths,
   speeds, dates) are extracted and normalised: "7 days" = "seven days" = "one week",
   "$250" = "USD 250", "06:00" = "6am", "15 kg" = "33 lb" (2% tolerance for unit conversion);
   a value inside an evidence range ("30-59 days") matches.
2. The remaining words become content terms: negation cues become "not", domain synonyms are
   merged (traveller/participant/guest, must/required/mandatory), stopwords dropped, words
   lightly stemmed.
3. The evidence is cut into sentences and clauses; an exception clause ("except where ...",
   "with the exception of ...") carries the terms of its main clause with the opposite polarity.
   The best unit is the one matching most quantities, then most terms.
4. Decision: too little term overlap -> unrelated; opposite polarity (odd vs even number of
   negations) or an antonym -> contradicted; a claim quantity missing from the evidence while
   the aligned evidence has a quantity of the same kind -> contradicted, without one -> unrelated;
   otherwise supported when enough of the clause's terms are in the best unit.
A claim is supported when all its clauses are, contradicted when any clause is.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from kb_eval.judge.claims import ANTONYMS, WEAK_TERMS, split_sentences
from kb_eval.judge.clauses import Unit, clause_unit, evidence_units, stem_word, terms_of
from kb_eval.judge.quantities import Quantity, extract_quantities, normalise_text
from kb_eval.judge.scoring import LABELS, expected_label, operator_split, report

__all__ = [
    "LABELS",
    "MIN_COVERAGE_SUPPORTED",
    "MIN_SHARED_FOR_TOPIC",
    "Quantity",
    "Verdict",
    "evidence_units",
    "expected_label",
    "extract_quantities",
    "judge_accuracy",
    "judge_claim",
    "load_claim_pairs",
    "normalise_text",
    "operator_split",
    "terms_of",
]

MIN_SHARED_FOR_TOPIC = 0.34
MIN_COVERAGE_SUPPORTED = 0.75


@dataclass(frozen=True)
class Verdict:
    label: str
    reason: str


_ANTONYM_STEMS = tuple((stem_word(left), stem_word(right)) for left, right in ANTONYMS)
_CLAIM_CLAUSE = re.compile(
    r";\s*|,\s*(?:but|while|whereas|so|and|though|although)\s+|\s+but\s+"
    r"|\s+and\s+(?=(?:it|they|you|we|this|that|there|can|may|must|will|is|are|has|have|takes?|"
    r"costs?|includes?|needs?|requires?)\b|(?:\w+\s+){1,2}(?:is|are|can|may|must|will)\b)"
)


def _antonym(terms: frozenset[str], others: frozenset[str]) -> tuple[str, str] | None:
    for left, right in _ANTONYM_STEMS:
        for mine, theirs in ((left, right), (right, left)):
            if mine in terms and theirs in others and mine not in others and theirs not in terms:
                return mine, theirs
    return None


def _opposes(clause: Unit, unit: Unit, units: list[Unit], pair: tuple[str, str]) -> bool:
    """An antonym pair opposes when both sides have the same polarity and the unit's sentence
    shares at least two other content terms with the clause."""
    if clause.negations % 2 != unit.negations % 2:
        return False
    sentence = frozenset().union(
        *(u.all_terms for u in units if (u.source, u.sentence) == (unit.source, unit.sentence))
    )
    return len((clause.terms & sentence) - set(pair) - WEAK_TERMS) >= 2


def _aligned(quantity: Quantity, other: Quantity) -> bool:
    """Same kind and about the same thing (a shared topic word near both numbers)."""
    return other.kind == quantity.kind and bool((quantity.context & other.context) - WEAK_TERMS)


def _best_aligned(quantity: Quantity, candidates: list[Quantity]) -> list[Quantity]:
    """The candidates sharing the most topic words with the quantity (none when none shares)."""
    overlaps = [len((quantity.context & q.context) - WEAK_TERMS) for q in candidates]
    top = max(overlaps, default=0)
    return [q for q, n in zip(candidates, overlaps, strict=True) if top and n == top]


def _in_schedule_row(quantity: Quantity, clause: Unit, related: list[Unit]) -> bool:
    """A unit states a range of the quantity's kind that holds it ("59 to 30 days") and every
    other quantity of the clause, of which there is at least one (a row of a schedule: "40 days
    before, 50%"; a lone value inside some range is not aligned with it)."""
    return len(clause.quantities) > 1 and any(
        any(q.low is not None and q.high is not None and q.low < q.high for q in unit.quantities)
        and any(quantity.matches(q) for q in unit.quantities)
        and all(any(mine.matches(q) for q in unit.quantities) for mine in clause.quantities)
        for unit in related
    )


def _check_quantities(clause: Unit, related: list[Unit], coverage: float) -> Verdict | None:
    """Every claim quantity must be in the evidence with the same value (topic-aligned).

    A value that differs from the best-aligned one but is stated for something else in the
    evidence is a reused number: contradicted only when the clause's words are stated. A value
    inside a range of a unit that states the clause's other quantities too is stated (a row of
    a schedule)."""
    for quantity in clause.quantities:
        if _in_schedule_row(quantity, clause, related):
            continue
        candidates = [q for unit in related for q in unit.quantities if q.kind == quantity.kind]
        aligned = _best_aligned(quantity, candidates)
        if any(quantity.matches(other) for other in aligned or candidates):
            continue
        reused = any(abs(quantity.value - other.value) < 1e-9 for other in candidates)
        if aligned and reused and coverage < MIN_COVERAGE_SUPPORTED:
            return Verdict(
                "unrelated", f"{quantity.kind} {quantity.value:g} stated for another thing"
            )
        if aligned:
            return Verdict("contradicted", f"{quantity.kind} {quantity.value:g} differs")
        return Verdict("unrelated", f"{quantity.kind} {quantity.value:g} not stated")
    return None


def _weight(terms: frozenset[str]) -> float:
    return sum(0.5 if term in WEAK_TERMS else 1.0 for term in terms)


def _coverage(terms: frozenset[str], units: list[Unit]) -> float:
    """Weighted share of terms found in units (heading-only matches count half)."""
    own = frozenset().union(*(unit.terms for unit in units))
    heading = frozenset().union(*(unit.heading for unit in units)) - own
    found = _weight(terms & own) + 0.5 * _weight(terms & heading)
    return found / _weight(terms) if terms else 1.0


def _judge_clause(clause: Unit, units: list[Unit]) -> Verdict:
    def score(unit: Unit) -> tuple[int, int, int, int]:
        matched = sum(any(q.matches(e) for e in unit.quantities) for q in clause.quantities)
        aligned = sum(any(_aligned(q, e) for e in unit.quantities) for q in clause.quantities)
        return matched, aligned, len(clause.terms & unit.all_terms), -len(unit.terms)

    best = max(units, key=score)
    terms = clause.terms
    shared = terms & best.all_terms
    related = [best] + [u for u in units if u is not best and terms & u.terms]
    for unit in related:
        pair = _antonym(terms, unit.terms)
        if pair and unit is not best and pair[0] in best.all_terms:
            continue  # the best unit states the claim's own word; the other is about another thing
        if pair and _opposes(clause, unit, units, pair):
            return Verdict("contradicted", f"antonyms {pair[0]}/{pair[1]}")
    coverage = _coverage(terms, [best])
    numbers_aligned = any(_aligned(q, e) for q in clause.quantities for e in best.quantities)
    if terms and (not shared or (coverage < MIN_SHARED_FOR_TOPIC and not numbers_aligned)):
        everywhere = frozenset().union(*(unit.all_terms for unit in units))
        return Verdict("unrelated", f"low overlap: {sorted(terms - everywhere)} not in evidence")
    everywhere = frozenset().union(*(unit.all_terms for unit in units))
    negated_antonym = _antonym(clause.scoped, best.terms) or _antonym(best.scoped, terms)
    if (
        clause.negations % 2 != best.negations % 2
        and not negated_antonym
        and (
            shared & (clause.scoped | best.scoped)
            or clause.scoped - everywhere
            or (not clause.scoped and not best.scoped and terms <= best.all_terms)
        )
    ):
        return Verdict("contradicted", f"negation mismatch on {sorted(shared)}")
    verdict = _check_quantities(clause, related, coverage)
    if verdict is not None:
        return verdict
    anchors = (terms & best.terms) - WEAK_TERMS
    same_text = [best] + [
        u for u in related if u.source == best.source and u is not best and anchors & u.terms
    ]
    for term in clause.scoped - best.all_terms:
        holders = [u for u in same_text if term in u.terms]
        if holders and all(u.negations % 2 != clause.negations % 2 for u in holders):
            return Verdict("contradicted", f"negation mismatch on {term}")
    if _coverage(terms, same_text) < MIN_COVERAGE_SUPPORTED:
        return Verdict("unrelated", f"not stated: {sorted(terms - best.all_terms)}")
    return Verdict("supported", f"stated ({len(shared)}/{len(terms)} terms)")


def claim_clauses(claim: str) -> list[str]:
    """The claim's clauses (normalised text), as the rule judge checks them one by one."""
    normalised = normalise_text(claim).strip().rstrip(".!")
    return [c for c in _CLAIM_CLAUSE.split(normalised) if c and c.strip()]


def judge_claim(claim: str, evidence_texts: Sequence[str]) -> Verdict:
    """Label one claim against evidence texts (see the module docstring for the rules)."""
    if _plain_sentence(claim) in {
        _plain_sentence(sentence) for text in evidence_texts for sentence in split_sentences(text)
    }:
        return Verdict("supported", "a whole sentence of the evidence")
    units = evidence_units(evidence_texts)
    if not units:
        return Verdict("unrelated", "no evidence")
    verdicts = [_judge_clause(clause_unit(clause), units) for clause in claim_clauses(claim)]
    for label in ("contradicted", "unrelated"):
        for verdict in verdicts:
            if verdict.label == label:
                return verdict
    return verdicts[0] if len(verdicts) == 1 else Verdict("supported", "every clause stated")


def _plain_sentence(text: str) -> str:
    """A sentence for exact comparison: normalised, single-spaced, without its full stop."""
    return " ".join(normalise_text(text).split()).rstrip(".!")


def load_claim_pairs(path: str | Path) -> list[dict[str, object]]:
    """Read labelled pairs (pair_id, claim, evidence, label[, split]) from a JSONL file."""
    pairs = []
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            row = json.loads(line)
            for field in ("pair_id", "claim", "evidence", "label"):
                if field not in row:
                    raise ValueError(f"{path}:{number}: missing field {field!r}")
            pairs.append(row)
    return pairs


def judge_accuracy(pairs: Iterable[dict[str, object]]) -> dict[str, object]:
    """Overall and per-label accuracy of judge_claim on labelled pairs, per split, the confusion
    (pair label -> judge label counts) and how many unsupported pairs were judged supported."""
    pairs = list(pairs)
    verdicts = [judge_claim(str(p["claim"]), [str(e) for e in p["evidence"]]) for p in pairs]  # type: ignore[attr-defined]
    return report(pairs, [v.label for v in verdicts], [v.reason for v in verdicts])
