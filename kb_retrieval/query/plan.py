"""Deterministic query generation (spec 4) and the query-quality gate (spec 4.5)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from kb_retrieval.query.email_thread import extract_guest_text
from kb_retrieval.query.intents import (
    derive_sensitivity,
    detect_exception_request,
    detect_intents,
    validate_sensitivity,
)
from kb_retrieval.query.vocabulary import (
    ADVERTISED_EXPANSION,
    ADVERTISED_PATTERNS,
    DESCRIPTOR_IGNORE,
    DOMAIN_PHRASES,
    EXCEPTION_EXPANSION,
    GATE_IGNORE,
    GENERIC_TRIP_NOUNS,
    MAX_DIRECT_TERMS,
    MAX_EXACT_ITEMS,
    MAX_EXPANSION_WORDS,
    MAX_QUERY_CHARS,
    POLICY_EXPANSIONS,
    POLICY_INTENTS,
    QUERY_FILLER,
    SOURCE_WORDS,
    TRIP_EXPANSIONS,
    TRIP_NOUNS,
    VARIANT_WEIGHTS,
    words,
)
from kb_retrieval.text.analyzer import (
    MONTH_ABBREVIATIONS,
    canonicalize_dates,
    canonicalize_times,
    expand_contractions,
    find_dates,
    is_stopword,
    normalize_text,
    prepare,
)

_CONNECTORS = frozenset({"de", "del", "la", "le", "du", "des", "da", "di", "van", "von"})
_WEEKDAYS = words("monday tuesday wednesday thursday friday saturday sunday")
_NOT_NAMES = frozenset({*MONTH_ABBREVIATIONS, "may"}) | _WEEKDAYS | GATE_IGNORE
_UNIT_RE = re.compile(
    r"^\d+(?:st|nd|rd|th|km|k|m|mi|kg|g|lbs?|h|hrs?|am|pm|x|yo|yrs?|ft|l|ml|cm|mm|pax|d|s)$"
)
_TOKEN_RE = re.compile(
    r"(?P<email>[\w.+-]+@[\w-]+(?:\.[\w-]+)+)|(?P<time>\b\d{2}:\d{2}\b)|(?P<hash>#\w+)"
    r"|(?P<money>[$€£]\d+(?:[.,]\d+)*|\d+(?:[.,]\d+)*[$€£%])"
    r"|(?P<word>[^\W_]+(?:'[^\W_]+)?(?:[-/][^\W_]+(?:'[^\W_]+)?)*)"
)
_QUOTED_RE = re.compile(r"\"([^\"\n]{2,80})\"|(?<!\w)'([^'\n]{2,60})'(?!\w)")
_SENTENCE_BREAK = re.compile(r"[.?!;:](?:\s|$)|\n")
_CONTRACTION_SUFFIXES = ("s", "m", "re", "ve", "ll", "d")


@dataclass(frozen=True)
class QueryVariant:
    kind: str  # "direct" | "policy_expansion" | "trip_specific" | "exact_term"
    text: str
    weight: float

    def to_dict(self) -> dict[str, str | float]:
        return {"kind": self.kind, "text": self.text, "weight": self.weight}


@dataclass(frozen=True)
class QueryPlan:
    """Everything retrieval needs to know about the guest's question, derived deterministically."""

    normalized_text: str
    variants: tuple[QueryVariant, ...]
    intents: tuple[str, ...]
    entities: tuple[str, ...]
    sensitivity: tuple[str, ...]
    policy_like: bool
    exception_request: bool
    quality_ok: bool
    content_tokens: int
    quoted_terms: tuple[str, ...]
    dates: tuple[str, ...] = ()
    trip_terms: tuple[str, ...] = ()
    trip_names: tuple[str, ...] = ()  # the tenant's trip names the email mentions
    guest_text: str = ""  # every guest message of the thread, prepared (values the guest states)
    question_text: str = ""  # the latest guest message as read (without the thread's context)
    # A trip context that names a product but no departure (no trip_date, no trip_id).
    context_undated: bool = False


@dataclass(frozen=True)
class _Token:
    kind: str  # entity | date | email | time | hash | money | word
    text: str  # case-folded canonical form
    surface: str
    start: int
    end: int
    sentence: int
    initial: bool


def _dedupe(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(item for item in items if item))


def _compile(patterns: Iterable[str]) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{pattern})" for pattern in patterns))


_ADVERTISED_RE = _compile(ADVERTISED_PATTERNS)
_DOMAIN_PHRASE_RE = _compile(rf"\b{re.escape(phrase)}\b" for phrase in DOMAIN_PHRASES)


@lru_cache(maxsize=64)
def _entity_regex(entities: tuple[str, ...]) -> re.Pattern[str] | None:
    """One case-insensitive alternation of the known entities, longest first."""
    if not entities:
        return None
    parts = [r"[\s-]+".join(map(re.escape, re.split(r"[\s-]+", name))) for name in entities]
    return re.compile(r"(?<!\w)(?:" + "|".join(parts) + r")(?!\w)", re.IGNORECASE)


def _clean_entities(known: Sequence[str]) -> tuple[str, ...]:
    names = {" ".join(normalize_text(name).casefold().split()) for name in known}
    return tuple(sorted((name for name in names if len(name) >= 2), key=lambda n: (-len(n), n)))


def _word_parts(word: str) -> list[str]:
    """Split a word token on "/" and drop contraction suffixes ("guest's" -> "guest")."""
    parts: list[str] = []
    for piece in word.split("/"):
        stem, _, suffix = piece.partition("'")
        parts.append(stem if suffix in _CONTRACTION_SUFFIXES else piece.replace("'", ""))
    return [part for part in parts if part]


def _tokenize(text: str, entities: tuple[str, ...]) -> list[_Token]:
    """Entities and dates first (protected), then e-mails, times, codes and words in the gaps."""
    spans: list[tuple[int, int, str, str]] = []
    regex = _entity_regex(entities)
    if regex is not None:
        for match in regex.finditer(text):
            canonical = " ".join(match.group(0).casefold().replace("-", " ").split())
            spans.append((match.start(), match.end(), "entity", canonical))
    for date in find_dates(text):
        if not any(date.start < end and start < date.end for start, end, _, _ in spans):
            spans.append((date.start, date.end, "date", date.canonical))
    spans.sort()
    raw: list[tuple[int, int, str, str]] = []
    cursor = 0
    for start, end, kind, canonical in [*spans, (len(text), len(text), "", "")]:
        for match in _TOKEN_RE.finditer(text, cursor, start):
            kind_found = match.lastgroup or "word"
            raw.append((match.start(), match.end(), kind_found, match.group(0).casefold()))
        if kind:
            raw.append((start, end, kind, canonical))
        cursor = end
    tokens: list[_Token] = []
    sentence, previous_end = 0, 0
    for start, end, kind, canonical in raw:
        initial = not tokens or bool(_SENTENCE_BREAK.search(text, previous_end, start))
        sentence += int(initial and bool(tokens))
        tokens.append(_Token(kind, canonical, text[start:end], start, end, sentence, initial))
        previous_end = end
    return tokens


def _is_content_word(word: str) -> bool:
    return not is_stopword(word) and word not in QUERY_FILLER


def _token_terms(token: _Token) -> list[str]:
    """Direct-query terms of one token: compounds kept whole, stopwords and filler dropped."""
    if token.kind != "word" or _is_code(token):
        return [token.text]
    parts = _word_parts(token.text)
    if len(parts) == 1 and "-" in parts[0]:
        pieces = parts[0].split("-")
        return [" ".join(pieces)] if any(map(_is_content_word, pieces)) else []
    return [part for part in parts if _is_content_word(part)]


def _is_code(token: _Token) -> bool:
    if token.kind in {"email", "hash"}:
        return True
    if token.kind != "word" or token.surface.isalpha():
        return False
    pieces = re.split(r"[-/]", token.surface)
    if any(
        re.search(r"\d", p) and re.search(r"[^\W\d_]", p) and not _UNIT_RE.match(p.casefold())
        for p in pieces
    ):
        return True
    if len(pieces) == 1:
        return pieces[0].isdigit() and len(pieces[0]) >= 5
    has_long_number = any(p.isdigit() and len(p) >= 3 for p in pieces)
    return has_long_number and any(p.isalpha() and p.isupper() and len(p) >= 2 for p in pieces)


def _is_name(token: _Token) -> bool:
    return (
        token.kind == "word"
        and token.surface[:1].isupper()
        and token.surface.replace("-", "").replace("'", "").isalpha()
        and len(token.surface) >= 2
        and _is_content_word(token.text)
        and token.text not in _NOT_NAMES
        and (not token.initial or (token.surface.isupper() and len(token.surface) <= 6))
    )


def _proper_names(tokens: list[_Token], shouting: bool) -> list[tuple[int, str]]:
    """Capitalised non-initial words (merged with neighbours) and short acronyms like "PFD"."""
    if shouting:
        return []
    names: list[tuple[int, str]] = []
    current: list[str] = []
    pending: list[str] = []
    start_index = 0
    for index, token in enumerate(tokens):
        if _is_name(token):
            if not current:
                start_index = index
            current.extend([*pending, token.text])
            pending = []
        elif current and token.text in _CONNECTORS and not pending:
            pending = [token.text]
        else:
            if current:
                names.append((start_index, " ".join(current)))
            current, pending = [], []
    if current:
        names.append((start_index, " ".join(current)))
    return names


def _trip_references(tokens: list[_Token]) -> tuple[list[str], list[str]]:
    """Descriptors before a trip noun ("this altitude trip" -> "altitude") and the nouns."""
    descriptors: list[str] = []
    nouns: list[str] = []
    for index, token in enumerate(tokens):
        if token.kind != "word" or token.text not in TRIP_NOUNS:
            continue
        found: list[str] = []
        for previous in reversed(tokens[max(0, index - 3) : index]):
            if previous.sentence != token.sentence or previous.kind not in {"word", "entity"}:
                break
            terms = _token_terms(previous)
            if not terms or previous.text in DESCRIPTOR_IGNORE or previous.text in TRIP_NOUNS:
                break
            found.insert(0, " ".join(terms))
        has_date = any(
            t.kind == "date" and t.sentence == token.sentence
            for t in tokens[max(0, index - 4) : index]
        )
        if found:
            descriptors.append(" ".join(found))
        if (found or has_date) and token.text not in GENERIC_TRIP_NOUNS:
            nouns.append(token.text)
    return _dedupe(descriptors), _dedupe(nouns)


def _direct_terms(tokens: list[_Token], text: str) -> list[str]:
    """Content terms, sentences that ask a question first, at most MAX_DIRECT_TERMS."""
    questions: set[int] = set()
    for index, token in enumerate(tokens):
        following = tokens[index + 1].start if index + 1 < len(tokens) else len(text)
        if "?" in text[token.end : following]:
            questions.add(token.sentence)
    ordered = sorted(tokens, key=lambda token: (token.sentence not in questions, token.start))
    terms: dict[str, None] = {}
    for token in ordered:
        if len(terms) >= MAX_DIRECT_TERMS:
            break
        terms.update(dict.fromkeys(_token_terms(token)))
    return list(terms)[:MAX_DIRECT_TERMS]


def _quote(item: str) -> str:
    return f'"{item}"' if (" " in item or "-" in item) else item


def _exact_items(
    tokens: list[_Token], text: str, quoted: list[tuple[int, str]], names: list[tuple[int, str]]
) -> tuple[list[str], bool]:
    """Exact lexical items in order of appearance, and whether any of them triggers the variant."""
    items: list[tuple[int, str]] = list(quoted)
    items += [(tokens[index].start, name) for index, name in names]
    for index, token in enumerate(tokens):
        if token.kind in {"entity", "date"} or _is_code(token):
            items.append((token.start, token.text))
        elif token.kind == "word" and "-" in token.text and _token_terms(token):
            item = token.text
            after = tokens[index + 1] if index + 1 < len(tokens) else None
            gap = text[token.end : after.start] if after else ""
            if after and after.kind == "word" and gap.isspace() and after.text.isalpha():
                item = f"{item} {after.text}" if _is_content_word(after.text) else item
            items.append((token.start, item))
    lowered = text.casefold()
    items += [(match.start(), match.group(0)) for match in _DOMAIN_PHRASE_RE.finditer(lowered)]
    triggered = bool(items)
    ordered = _dedupe(item for _, item in sorted(items))[:MAX_EXACT_ITEMS]
    sources = _dedupe(t.text for t in tokens if t.kind == "word" and t.text in SOURCE_WORDS)
    return [_quote(item) for item in ordered] + sources, triggered


def _fallback_exact(tokens: list[_Token], text: str) -> str:
    """Adjacent content words as quoted phrases (used when only the direct variant exists)."""
    runs: list[list[str]] = [[]]
    previous_end = -1
    for token in tokens:
        terms = _token_terms(token)
        adjacent = previous_end >= 0 and text[previous_end : token.start].isspace()
        if not terms or not adjacent:
            runs.append([])
        runs[-1].extend(terms)
        previous_end = token.end if terms else -1
    return " ".join(_quote(" ".join(run)) for run in runs if run)


def _trip_context_terms(trip_context: Mapping[str, object] | None) -> list[str]:
    if not trip_context:
        return []
    terms: list[str] = []
    product = trip_context.get("product_name")
    if product:
        terms.append(" ".join(normalize_text(str(product)).casefold().split()))
    elif trip_context.get("trip_id"):
        trip_id = canonicalize_dates(normalize_text(str(trip_context["trip_id"])).casefold())
        terms.append(" ".join(re.split(r"[\s_-]+", trip_id)).strip())
    if trip_context.get("trip_date"):
        terms.append(
            " ".join(canonicalize_dates(str(trip_context["trip_date"])).casefold().split())
        )
    return terms


def _expansion(intents: Sequence[str], exception: bool) -> str:
    phrases = [text for name, text in POLICY_EXPANSIONS.items() if name in intents]
    if exception:
        phrases.append(EXCEPTION_EXPANSION)
    if not phrases:
        phrases.append(ADVERTISED_EXPANSION)
    return " ".join(_dedupe(" ".join(phrases).split())[:MAX_EXPANSION_WORDS])


def _content_count(terms: Sequence[str]) -> int:
    return sum(1 for term in terms if term not in GATE_IGNORE)


def _analyse_text(text: str, entities: tuple[str, ...]) -> tuple[str, list[_Token]]:
    """Case-kept normalised text (cut at MAX_QUERY_CHARS, on a space) and its tokens."""
    if len(text) > MAX_QUERY_CHARS:
        cut = text.rfind(" ", 0, MAX_QUERY_CHARS)
        text = text[: cut if cut > 0 else MAX_QUERY_CHARS]
    prepared_case = canonicalize_times(expand_contractions(normalize_text(text)))
    return prepared_case, _tokenize(prepared_case, entities)


def _trip_text(core: list[str], intents: Sequence[str], direct_terms: Sequence[str]) -> str:
    """Trip names/dates + "itinerary" + the itinerary vocabulary of the intents (or key terms)."""
    core = [*core, "itinerary"]
    present = set(" ".join(core).split())
    vocab = [TRIP_EXPANSIONS[name] for name in intents if name in TRIP_EXPANSIONS]
    extra = [term for term in vocab or direct_terms[:5] if not set(term.split()) <= present]
    return " ".join(_dedupe([*core, *extra]))


def _needs_context(text: str, tokens: list[_Token], min_terms: int, follow_up_max: int) -> bool:
    """Whether a thread's latest guest message cannot stand alone (see build_query_plan)."""
    content = _content_count(_direct_terms(tokens, text))
    names_trip = any(t.kind in {"entity", "date"} for t in tokens)
    return content < min_terms or (content <= follow_up_max and not names_trip)


def _variant(kind: str, text: str) -> QueryVariant:
    return QueryVariant(kind, " ".join(text.split()), VARIANT_WEIGHTS[kind])


def build_query_plan(
    email: str | Mapping[str, object],
    *,
    sensitivity: Sequence[str] | None = None,
    trip_context: Mapping[str, object] | None = None,
    known_entities: Sequence[str] = (),
    min_content_tokens: int = 3,
    follow_up_max_terms: int = 8,
) -> QueryPlan:
    """Query variants, intents, entities, sensitivity and the quality gate for one e-mail.

    A thread's latest guest message is the question; it is read together with the subject and
    the earlier guest messages (the context) when it cannot stand alone: too few content terms
    for the gate, or a follow-up ("Thanks. How much will we get back?") of at most
    `follow_up_max_terms` content terms that names no trip and no date.
    """
    caller_sensitivity = None if sensitivity is None else validate_sensitivity(sensitivity)
    guest = extract_guest_text(email)
    entities_known = _clean_entities(known_entities)
    text, tokens = _analyse_text(guest.latest, entities_known)
    question = text
    if guest.context and _needs_context(text, tokens, min_content_tokens, follow_up_max_terms):
        text, tokens = _analyse_text(f"{guest.latest}\n{guest.context}", entities_known)
    prepared = prepare(text)
    full_prepared = prepare(guest.full)
    intents = detect_intents(prepared)
    full_intents = detect_intents(full_prepared)
    exception = detect_exception_request(full_prepared, full_intents)
    policy_like = (
        exception
        or bool(POLICY_INTENTS.intersection(intents))
        or bool(_ADVERTISED_RE.search(prepared))
    )
    if caller_sensitivity is None:
        caller_sensitivity = derive_sensitivity(full_prepared, full_intents, exception)

    letters = [char for char in text if char.isalpha()]
    shouting = len(letters) >= 8 and sum(c.isupper() for c in letters) > 0.6 * len(letters)
    names = _proper_names(tokens, shouting)
    dates = _dedupe(t.text for t in tokens if t.kind == "date")
    years = _dedupe(d.year for d in find_dates(text) if d.year)
    matched = _dedupe(t.text for t in tokens if t.kind == "entity")
    entities = _dedupe(
        item
        for _, item in sorted(
            [(t.start, t.text) for t in tokens if t.kind in {"entity", "date"}]
            + [
                (tokens[index].start, name)
                for index, name in names
                if not tokens[index].surface.isupper()
            ]
        )
    )
    descriptors, nouns = _trip_references(tokens)
    trip_terms = [d for d in descriptors if d not in dates and d not in matched]
    quoted = [
        (match.start(), " ".join((match.group(1) or match.group(2)).casefold().split()))
        for match in _QUOTED_RE.finditer(text)
    ]
    direct_terms = _direct_terms(tokens, text)
    content_tokens = _content_count(direct_terms)
    domain_like = bool(intents or matched or dates or any(_is_code(t) for t in tokens))
    quality_ok = content_tokens >= min_content_tokens or domain_like

    direct_text = " ".join(direct_terms) or " ".join(re.findall(r"[^\W_]+", prepared))
    variants = [QueryVariant("direct", direct_text, VARIANT_WEIGHTS["direct"])]
    if quality_ok:
        if policy_like:
            variants.append(_variant("policy_expansion", _expansion(intents, exception)))
        context_terms = _trip_context_terms(trip_context)
        if matched or trip_terms or dates or context_terms:
            core = [*matched, *trip_terms, *dates, *years, *nouns, *context_terms]
            variants.append(_variant("trip_specific", _trip_text(core, intents, direct_terms)))
        exact, triggered = _exact_items(tokens, text, quoted, names)
        if triggered:
            variants.append(_variant("exact_term", " ".join(exact)))
        elif len(variants) < 2:
            variants.append(_variant("exact_term", _fallback_exact(tokens, text) or direct_text))

    return QueryPlan(
        normalized_text=" ".join(prepared.split()),
        variants=tuple(variants),
        intents=intents,
        entities=tuple(entities),
        sensitivity=caller_sensitivity,
        policy_like=policy_like,
        exception_request=exception,
        quality_ok=quality_ok,
        content_tokens=content_tokens,
        quoted_terms=tuple(_dedupe(term for _, term in quoted)),
        dates=tuple(dates),
        trip_terms=tuple(trip_terms),
        trip_names=tuple(matched),
        guest_text=" ".join(full_prepared.split()),
        question_text=question,
        context_undated=bool(trip_context)
        and not (trip_context.get("trip_date") or trip_context.get("trip_id")),
    )
