"""What a quantity is about: the topics of policy quantities and the rule that picks one.

A topic (cancellation window, deposit, minimum age, ...) names the quantity kinds it applies to,
its keywords, words that rule it out and words one of which it needs. `topic_of` reads the
words around a quantity (its `Quantity.context`, "#" in its place) and returns the topic
whose keyword is nearest.
"""

from __future__ import annotations

from dataclasses import dataclass

from kb_retrieval.text.quantity_patterns import word_tokens

_MAX_DISTANCE = 6


@dataclass(frozen=True)
class _Topic:
    name: str
    kinds: frozenset[str]
    keywords: tuple[tuple[str, ...], ...]
    vetoes: tuple[str, ...] = ()
    requires: tuple[str, ...] = ()


def _topic(name: str, kinds: str, keywords: str, vetoes: str = "", requires: str = "") -> _Topic:
    """A topic: which quantity kinds it applies to, its keywords ("_" joins the words of one
    keyword, "*" ends a prefix), words that rule it out and words one of which it needs."""
    words = tuple(tuple(k.split("_")) for k in keywords.split())
    return _Topic(
        name, frozenset(kinds.split()), words, tuple(vetoes.split()), tuple(requires.split())
    )


_MONEYISH = "duration percent currency"
TOPICS: tuple[_Topic, ...] = (
    _topic(
        "refund_processing",
        "duration",
        "process* issued reimburs* credited take takes appear* card bank account*",
        requires="refund* reimburs* credit* money",
    ),
    _topic(
        "cancellation_fee",
        "currency percent",
        "cancellation_fee* cancellation_charge* admin*_fee* administration_fee*",
    ),
    _topic("amendment", _MONEYISH, "amend* change_fee* name_change* date_change* rebook*"),
    _topic("deposit", _MONEYISH, "deposit*"),
    _topic(
        "payment_due",
        _MONEYISH,
        "balance final_payment* full_payment* paid_in_full payment* instal*",
    ),
    _topic("complaint", "duration", "complain* claim*"),
    _topic(
        "cancellation", "duration percent", "cancel* refund* forfeit* penalt* retain* withdraw*"
    ),
    _topic("guardian", "age", "accompan* guardian* parent* adult* supervis* consent"),
    _topic(
        "minimum_age",
        "age",
        "minimum_age age aged ages child* minor* kid* participant* guest* traveller* traveler*",
        "discount* price* rate* free pay* cost* fare* concession* reduc* ticket* medical* "
        "certificat* doctor* physician* insur* clearance senior* supplement* sign signs signed "
        "signing signature* driv* licen* alcohol drink* rent*",
    ),
    _topic("check_in", "time_of_day duration", "check_in checkin arriv* registration report meet*"),
    _topic("check_out", "time_of_day", "check_out checkout"),
    _topic("pickup", "time_of_day", "pick_up pickup* collect* transfer* shuttle*"),
    _topic("departure_time", "time_of_day", "depart* leave* leaves set_off"),
    _topic("return_time", "time_of_day", "return* finish*"),
    _topic("luggage_weight", "weight", "luggage baggage bag bags suitcase* duffel* backpack*"),
    _topic("discount", "percent currency", "discount* off save saving* early_bird promo*"),
)
TRIP_SPECIFIC_TOPICS = frozenset(
    {"check_in", "check_out", "pickup", "departure_time", "return_time", "luggage_weight"}
    | {"discount"}
)
TOPICS_BY_NAME = {topic.name: topic for topic in TOPICS}
_BOOKING_ANCHORS = frozenset({"booking", "booked", "purchase", "reservation", "confirmation"})


def _word_matches(pattern: str, token: str) -> bool:
    return token.startswith(pattern[:-1]) if pattern.endswith("*") else token == pattern


class _TokenIndex:
    """Where each word pattern ("refund", "cancel*") occurs in a token list, computed once."""

    def __init__(self, tokens: list[str]) -> None:
        self.tokens = tokens
        self._exact: dict[str, list[int]] = {}
        for index, token in enumerate(tokens):
            self._exact.setdefault(token, []).append(index)
        self._prefix: dict[str, list[int]] = {}

    def starts(self, pattern: str) -> list[int]:
        if not pattern.endswith("*"):
            return self._exact.get(pattern, [])
        found = self._prefix.get(pattern)
        if found is None:
            stem = pattern[:-1]
            found = [i for i, token in enumerate(self.tokens) if token.startswith(stem)]
            self._prefix[pattern] = found
        return found


def _keyword_hits(index: _TokenIndex, keyword: tuple[str, ...]) -> list[tuple[int, int]]:
    """(first, last) token index of each occurrence of `keyword`."""
    tokens, size = index.tokens, len(keyword)
    last_start = len(tokens) - size
    starts = index.starts(keyword[0])
    return [
        (i, i + size - 1)
        for i in starts
        if i <= last_start
        and all(
            _word_matches(p, t) for p, t in zip(keyword[1:], tokens[i + 1 : i + size], strict=True)
        )
    ]


def topic_of(context: str, kind: str | None = None) -> str | None:
    """What a quantity is about: the topic whose keyword is nearest to "#" in `context`.

    Only topics that accept `kind` (and whose required words occur) are considered; a keyword
    farther than six words away does not count; ties go to the longer keyword, then to the
    earlier topic of TOPICS; a veto word of the chosen topic gives None. A duration
    about cancellation anchored on the booking date ("within 24 hours of booking") is the
    separate topic cancellation_after_booking.
    """
    tokens = context.split() if "#" in context.split() else word_tokens(context)
    anchor = tokens.index("#") if "#" in tokens else None
    index = _TokenIndex(tokens)
    candidates: list[tuple[int, int, int]] = []
    for priority, topic in enumerate(TOPICS):
        if kind is not None and kind not in topic.kinds:
            continue
        if topic.requires and not mentions(tokens, topic.requires):
            continue
        for keyword in topic.keywords:
            for first, last in _keyword_hits(index, keyword):
                distance = 0 if anchor is None else max(anchor - last, first - anchor)
                if distance <= _MAX_DISTANCE:
                    candidates.append((distance, -len(keyword), priority))
    if not candidates:
        return None
    topic = TOPICS[min(candidates)[2]]
    if mentions(tokens, topic.vetoes):
        return None
    after = set(tokens[anchor + 1 : anchor + 4]) if anchor is not None else set()
    if topic.name == "cancellation" and kind == "duration" and _BOOKING_ANCHORS & after:
        return "cancellation_after_booking"
    return topic.name


def mentions(tokens: list[str], patterns: tuple[str, ...]) -> bool:
    """Whether any token matches any word pattern ("refund" exact, "cancel*" a prefix)."""
    return any(_word_matches(p, t) for p in patterns for t in tokens)
