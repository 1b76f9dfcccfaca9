"""Closed classes of policy modality (permitted / forbidden, required / advised, included /
charged, universal / limited, operator / guest decides or pays, refunded / forfeited, a higher /
lower comparison), as regular expressions over normalised text. They are small closed classes of
English policy language, not words of a pair."""

from __future__ import annotations

import re

from kb_eval.judge.quantities import normalise_text

CLASSES = {
    "permit": r"\b(?:can|may|allow(?:s|ed)?|permitted|welcome|possible|available|able to"
    r"|free to)\b",
    "forbid": r"\b(?:cannot|can not|may not|must not|not (?:allowed|permitted|possible|available)"
    r"|forbid\w*|prohibit\w*|ban\w*|never|no longer|only)\b",
    "require": r"\b(?:must|required?|compulsory|mandatory|obligatory|need to|needs to|have to"
    r"|has to|essential)\b",
    "advise": r"\b(?:recommend\w*|advis\w*|suggest\w*|optional|voluntary|up to you|encourag\w*"
    r"|not (?:required|compulsory|mandatory|necessary))\b",
    "included": r"\b(?:included|including|includes|free|free of charge|no (?:extra )?(?:charge|cost"
    r"|fee|supplement)|at no (?:extra )?cost|complimentary|covered)\b",
    "charged": r"\b(?:extra|supplement|surcharge|fee|fees|charged?|at cost|additional cost"
    r"|pay (?:for|extra)|costs?)\b|(?:[$€£]|\b(?:usd|eur|gbp|chf|nok|sek|dkk)\b) ?\d"
    r"|\d ?(?:us )?(?:usd|eur|gbp|chf|nok|sek|dkk|dollars?|euros?|pounds|kroner|€)(?![a-z])",
    "universal": r"\b(?:all|every|everyone|everything|always|any|anywhere|anytime|whenever"
    r"|unlimited|as many|as often|whatever|whole|entire)\b",
    "limited": r"\b(?:only|just|one|once|most|some|except|unless|apart from|other than|limited"
    r"|up to|maximum|at most|single)\b",
    "operator": r"\b(?:we|us|our)\s+(?:\w+\s+)?(?:decide|choose|pay|cover|arrange|provide|supply"
    r"|book)\b|\b(?:by us|at our (?:discretion|cost|expense)|our choice)\b",
    "guest": r"\b(?:you|guests?|travell?ers?|participants?)\s+(?:\w+\s+)?(?:decide|choose|pay"
    r"|cover|arrange|bring|book)\b|\b(?:your (?:choice|cost|expense)|choice of|own)\b",
    "higher": r"\b(?:higher|greater|larger|bigger|more expensive|dearer|costlier"
    r"|full (?:price|rate|fare))\b",
    "lower": r"\b(?:lower|smaller|cheaper|less expensive|reduced|discount(?:ed)?)\b",
    "refund": r"(?<!non-)\b(?:refund(?:ed|s|able)?|money back|reimburs\w*|repaid"
    r"|get (?:\w+ ){0,3}back)\b",
    "forfeit": r"\b(?:non-refundable|no refund|not (?:be )?refund(?:ed|able)|forfeit\w*|lose|loss of"
    r"|cancellation (?:fee|charge)s?)\b|\bcharged (?:at |in )?(?:full\b|100 ?%)"
    r"|\b(?:we|operator|company) (?:will |may |then )?(?:keep|retain)s?\b"
    r"|\b(?:is|are|be|been) (?:kept|retained)\b",
}
_COMPILED = {name: re.compile(pattern) for name, pattern in CLASSES.items()}
OPPOSED = (
    ("permit", "forbid"),
    ("require", "advise"),
    ("included", "charged"),
    ("universal", "limited"),
    ("operator", "guest"),
    ("refund", "forfeit"),
    ("higher", "lower"),
)


_LIMIT = re.compile(r"\b(?:(?:never|not|no) (?:more|longer|later) than|at (?:the )?most)\b")


_NO_CHARGE = re.compile(
    r"\b(?:free of charge|(?:at |with )?no (?:extra |additional )?(?:charge|cost|fee|supplement)s?"
    r"|without (?:any )?(?:extra |additional )?(?:charge|cost|fee)s?)\b"
)


# A negation in the few words before a policy word puts it in the other class of its pair
# ("do not allow" is forbidden, "will not get any refund" forfeited, "not included" charged).
NEGATED_CLASS = {
    "permit": "forbid",
    "require": "advise",
    "included": "charged",
    "charged": "included",
    "refund": "forfeit",
    "forfeit": "refund",
    "universal": "limited",
}
_NEGATOR = re.compile(r"(?:\b(?:not|never|no|without|nor)\b|n't\b)(?:\s+[\w'-]+){0,3}\s*$")
_SCOPE_END = re.compile(r"[,;:.!?]|\b(?:but|and|or|so|because|unless|if|when|while)\b")
# "any" under a negation is a negative polarity item ("won't get any refund", "don't allow it
# anywhere else"): it says "none", not "every", so it is in neither class; "not every", "not
# always" are limited (NEGATED_CLASS).
_NEGATIVE_POLARITY = re.compile(r"any")


def _negated(text: str, start: int) -> bool:
    """Whether a negation governs the word at `start`: one within three words before it, in the
    same clause."""
    before = _SCOPE_END.split(text[max(0, start - 40) : start])[-1]
    return bool(_NEGATOR.search(before))


def _scoped(name: str, text: str) -> tuple[bool, bool]:
    """(some match of the class is plain, some match is negated)."""
    plain = negated = False
    for match in _COMPILED[name].finditer(text):
        if (
            name == "universal"
            and _NEGATIVE_POLARITY.match(match.group())
            and _negated(text, match.start())
        ):
            continue
        if name in NEGATED_CLASS and _negated(text, match.start()):
            negated = True
        else:
            plain = True
    return plain, negated


# A Title Case heading before a colon ("Refund Window: ...") names a topic; it states no policy.
_TITLE_HEADING = re.compile(r"^\s*(?:[A-Z][\w'-]*\s+){1,3}[A-Z][\w'-]*:\s+(?=\S)")


_QUESTION = re.compile(r"[^.?!]*\?")
_ASKER = {"you": "we", "your": "our", "we": "you", "our": "your", "i": "you", "my": "your"}
_PRONOUN = re.compile(r"\b(?:you|your|we|our|i|my)\b")


def _from_operator(text: str) -> str:
    """A FAQ question is asked by the guest ("what do you provide?"): its pronouns are turned to
    the operator's point of view ("what do we provide?"), as in the answer."""
    return _QUESTION.sub(lambda q: _PRONOUN.sub(lambda m: _ASKER[m.group()], q.group()), text)


def classes(text: str) -> dict[str, bool]:
    """Which classes the text's normalised wording falls in ("no more than" is a limit, not a
    prohibition; "free of charge" is included, not charged; a negated policy word counts for the
    other class of its pair, NEGATED_CLASS; a Title Case heading is left out; a question is read
    from the operator's side)."""
    plain = normalise_text(_TITLE_HEADING.sub("", text)).lower()
    lowered = _LIMIT.sub("maximum", _from_operator(plain))
    texts = {name: lowered for name in _COMPILED}
    texts["charged"] = _NO_CHARGE.sub(" included ", lowered)
    found = dict.fromkeys(_COMPILED, False)
    for name in _COMPILED:
        plain, negated = _scoped(name, texts[name])
        found[name] = found[name] or plain
        if negated:
            found[NEGATED_CLASS[name]] = True
    return found
