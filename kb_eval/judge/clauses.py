"""Claim and evidence text as clauses: content terms, negations and quantities."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from kb_eval.judge.claims import PHRASES, STOPWORDS, SYNONYMS, split_sentences
from kb_eval.judge.quantities import Quantity, extract_quantities, normalise_text


def stem_word(word: str) -> str:
    if word in SYNONYMS:
        return SYNONYMS[word]
    for suffix, replacement in (
        ("ies", "y"),
        ("ied", "y"),
        ("ing", ""),
        ("ed", ""),
        ("ly", ""),
        ("s", ""),
    ):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3 and not word.endswith("ss"):
            word = word[: -len(suffix)] + replacement
            break
    if word in SYNONYMS:
        return SYNONYMS[word]
    if len(word) > 3 and word.endswith("e"):
        word = word[:-1]
    return SYNONYMS.get(word, word[:6])


def _rewrite(text: str) -> str:
    for pattern, replacement in PHRASES:
        text = pattern.sub(replacement, text)
    return text


def _terms(text: str) -> list[str]:
    terms = []
    for token in re.findall(r"[a-z][a-z']*", text):
        token = token.removesuffix("'s").strip("'")
        if not token or token in STOPWORDS or token.startswith("per_"):
            continue
        stem = stem_word(token)
        if stem and stem not in STOPWORDS:
            terms.append(stem)
    return terms


def terms_of(text: str) -> frozenset[str]:
    """Content terms of free text (normalised, stemmed, synonyms merged, numbers left out)."""
    _, blanked = extract_quantities(normalise_text(text))
    return frozenset(_terms(_rewrite(f" {blanked} ")))


@dataclass(frozen=True)
class Unit:
    """A clause: its content terms, the terms in a negation's scope, negation count, numbers,
    the terms of its text's heading and the index of that text."""

    terms: frozenset[str]
    scoped: frozenset[str]
    negations: int
    quantities: tuple[Quantity, ...]
    heading: frozenset[str] = frozenset()
    source: int = 0
    sentence: int = 0

    @property
    def all_terms(self) -> frozenset[str]:
        return self.terms | self.heading


_NEGATION = re.compile(r"\bnot\b")
_EXCEPTION = re.compile(
    r"\b(?:except(?: where| when| if| for)?|unless|with the exception of|"
    r"other than|apart from)\b"
)
_SEGMENT = re.compile(r"[,:;()]")


def _context(blanked: str, offset: int, clause_terms: frozenset[str]) -> frozenset[str]:
    """Topic words of a quantity: its comma/colon segment (plus the next one when the number
    closes its segment); the whole clause when the segment has no words."""
    before = _SEGMENT.split(blanked[:offset])
    after = _SEGMENT.split(blanked[offset:])
    words = _terms(_rewrite(before[-1] + " " + after[0]))
    if not _terms(_rewrite(after[0])) and len(after) > 1:
        words += _terms(_rewrite(after[1]))
    if not _terms(_rewrite(before[-1])) and len(before) > 1:
        words += _terms(_rewrite(before[-2]))
    return frozenset(words) or clause_terms


def clause_unit(text: str, inherited: Unit | None = None) -> Unit:
    """Build a unit from normalised clause text; an exception clause inherits its main clause
    (its terms, and the opposite polarity)."""
    located, blanked = extract_quantities(text)
    rewritten = _rewrite(f" {blanked} ")
    terms = frozenset(_terms(rewritten))
    scoped = frozenset(
        following[0] for tail in rewritten.split(" not ")[1:] if (following := _terms(tail))
    )
    quantities = tuple(
        Quantity(q.kind, q.value, q.low, q.high, _context(blanked, offset, terms))
        for q, offset in located
    )
    negations = len(_NEGATION.findall(rewritten))
    if inherited is not None:
        return Unit(
            terms | inherited.terms,
            terms | inherited.terms,
            negations + (inherited.negations % 2 == 0),
            quantities,
        )
    return Unit(terms, scoped, negations, quantities)


def _heading_terms(sentences: list[str]) -> frozenset[str]:
    """Terms of a text's heading ("Snowshoe Weekend: ..."), which apply to all its sentences."""
    if not sentences:
        return frozenset()
    head, colon, _ = sentences[0].partition(":")
    if colon and len(head.split()) <= 6:
        return frozenset(_terms(_rewrite(f" {normalise_text(head)} ")))
    return frozenset()


def evidence_units(evidence_texts: Sequence[str]) -> list[Unit]:
    """Sentences and clauses of the evidence, each with terms, negations and quantities."""
    units: list[Unit] = []
    for source, text in enumerate(evidence_texts):
        sentences = split_sentences(text)
        heading = _heading_terms(sentences)
        question = frozenset[str]()
        for index, sentence in enumerate(sentences):
            normalised = normalise_text(sentence)
            answer = _ANSWER.match(normalised)
            if normalised.rstrip().endswith("?") and index + 1 < len(sentences):
                question = frozenset(_terms(_rewrite(f" {normalised} ")))
                following = _ANSWER.match(normalise_text(sentences[index + 1]))
                if following:
                    found = clause_unit(normalised.rstrip("? "))
                    negations = found.negations + (following.group(1) != "yes")
                    units.append(
                        Unit(
                            found.terms,
                            found.scoped | (found.terms if negations % 2 else frozenset()),
                            negations,
                            found.quantities,
                            heading - found.terms,
                            source,
                            len(units),
                        )
                    )
                continue
            if answer:
                normalised = normalised[answer.end() :]
                if not normalised.strip():
                    continue
            context = heading | question
            question = frozenset()
            position = len(units)
            for clause in re.split(r";\s*|\s+but\s+", normalised):
                parts = _EXCEPTION.split(clause, maxsplit=1)
                found = [clause_unit(parts[0])]
                if len(parts) == 2:
                    found.append(clause_unit(parts[1], found[0]))
                units.extend(
                    Unit(
                        u.terms,
                        u.scoped,
                        u.negations,
                        u.quantities,
                        context - u.terms,
                        source,
                        position,
                    )
                    for u in found
                )
    return units


# A short answer after a FAQ question: "Yes," / "No." / "None at all." / "Not at all." (a
# sentence that only starts with "No" or "None", "No pets are allowed", is not an answer).
_ANSWER = re.compile(r"^\s*(yes|no|none|not)(?: at all)?(?:[.!,]\s*|\s*$)")
