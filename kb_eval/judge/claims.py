"""Claim splitting and policy-likeness of draft sentences (spec 3.6).

`split_sentences` cuts text into sentences without losing any character of them (each sentence is
an exact slice of the input, bullets removed); `split_claims` does the same for a draft and drops
salutations, pleasantries, closings and signatures, which are templates and not claims.
`is_policy_like` flags the claims that need a citation.
"""

from __future__ import annotations

import re

_ABBREVIATION_TEXT = (
    "e.g i.e eg ie approx appr incl excl vs cf ca mr mrs ms dr prof st mt ave rd dept"
)
_ABBREVIATIONS = frozenset(_ABBREVIATION_TEXT.split())
_NUMBER_ABBREVIATION_TEXT = (
    "no nr nos p pp fig vol ref tel ext jan feb mar apr jun jul aug sep oct nov dec"
)
_NUMBER_ABBREVIATIONS = frozenset(_NUMBER_ABBREVIATION_TEXT.split())
_SENTENCE_END_ABBREVIATIONS = frozenset({"etc", "a.m", "p.m", "am", "pm"})
_TIME_FOLLOWERS = re.compile(
    r"(?i:(?:mon|tues|wednes|thurs|fri|satur|sun)day|(?:jan|febr)uary|march|april|may|june|july|"
    r"august|(?:septem|octo|novem|decem)ber)|[A-Z]{2,4}T\b|UTC|GMT",
)
_BULLET = re.compile(r"^\s*(?:[-*\u2022\u2023\u25e6\u2043\u2013\u00b7]|\d{1,2}[.)]|\(?[a-z]\))\s+")
_BOUNDARY = re.compile(r"[.!?]+[\"'\u201d\u2019)\]]*(?=\s)")
_SENTENCE_SPLIT_CHARS = frozenset(".!?")

_GREETING_LINE = re.compile(
    r"^(?:hi|hello|hey|dear|greetings|good (?:morning|afternoon|evening))\b"
    r"(?:[^\n]{0,40}[,!:]|(?:\s+[\w.'-]+){0,3}[.]?)$",
    re.IGNORECASE,
)
_GREETING_PREFIX = re.compile(
    r"^(?:hi|hello|hey|dear|good (?:morning|afternoon|evening))\b[^,.!?\n]{0,40},\s*",
    re.IGNORECASE,
)
_VALEDICTION = re.compile(
    r"^(?:(?:(?:best|kind|warm|warmest|many|with)\s+)?(?:regards|wishes|thanks)"
    r"|best|cheers|sincerely|yours(?: truly| sincerely| faithfully)?|all the best|"
    r"thanks|thank you|talk soon|see you soon|happy travels|safe travels)[,!.]?"
    r"(?:\s+[\w.'-]+(?:\s+[\w.'-]+){0,3})?$",
    re.IGNORECASE,
)
_PLEASANTRY = re.compile(
    r"^(?:thanks|thank you|many thanks)\b(?: so much| very much)?(?: for\b.*)?[.!,]?$"
    r"|^(?:i |we )?hope (?:this|that|you|it)\b.*$"
    r"|^(?:please )?(?:let (?:us|me) know|feel free|(?:don't|do not) hesitate)\b.*$"
    r"|^(?:we|i) look forward\b.*$"
    r"|^(?:have a (?:great|nice|good|wonderful) (?:day|trip|week|weekend))\b.*$",
    re.IGNORECASE,
)

POLICY_PATTERNS: dict[str, re.Pattern[str]] = {
    "refund_cancellation_payment": re.compile(
        r"\b(?:refund\w*|non-?refundable|cancel\w*|deposits?|payments?|pay|paid|payable|paying|"
        r"balance|instal?lments?|surcharges?|fees?|charged?|charges|credit notes?|vouchers?|"
        r"forfeit\w*|penalt\w*|prices?|costs?|due)\b",
        re.IGNORECASE,
    ),
    "age_fitness_medical": re.compile(
        r"\b(?:ages?|aged|years? old|minors?|under-?\d+s?|children|child|kids?|infants?|"
        r"fitness|fit|physically|medical\w*|medications?|doctors?|physicians?|clearance|health|"
        r"pregnan\w*|allerg\w*|disabilit\w*|wheelchairs?|vaccin\w*|altitude sickness)\b",
        re.IGNORECASE,
    ),
    "safety_weather": re.compile(
        r"\b(?:safety|safe|unsafe|danger\w*|risks?|helmets?|harness\w*|life ?jackets?|weather|"
        r"storms?|winds?|avalanche\w*|evacuat\w*|emergenc\w*|first aid|swim\w*|alcohol|"
        r"intoxicated|drunk)\b",
        re.IGNORECASE,
    ),
    "waiver_legal_liability": re.compile(
        r"\b(?:waivers?|waive[sd]?|releases?|liab\w*|legal\w*|laws?|indemn\w*|sign\w*|consent|"
        r"claims?|responsib\w*|insurance|insured|terms|contracts?|guardians?)\b",
        re.IGNORECASE,
    ),
    "inclusions_guarantees_exceptions": re.compile(
        r"\b(?:includ\w*|exclud\w*|covered|covers|provided|free of charge|complimentary|"
        r"extra (?:cost|charge)|supplements?|guarantee\w*|exceptions?|exempt\w*|discretion|"
        r"case[- ]by[- ]case|polic(?:y|ies))\b",
        re.IGNORECASE,
    ),
    "rules_and_limits": re.compile(
        r"\b(?:must|mandatory|required?|requires|compulsory|prohibited|forbidden|allowed|"
        r"permitted|not permitted|may not|cannot|can't|minimum|maximum|at least|at most|up to|"
        r"no (?:later|more) than|"
        r"limits?|deadlines?)\b",
        re.IGNORECASE,
    ),
}
_MONEY = re.compile(
    r"(?:[$\u20ac\u00a3]\s?\d|\b(?:usd|eur|gbp|chf|cad|aud|nzd)\s?\d|\d\s?(?:usd|eur|gbp|chf|"
    r"dollars|euros)\b)",
    re.IGNORECASE,
)


def _is_boundary(text: str, start: int, end: int) -> bool:
    """Whether the punctuation run text[start:end] followed by whitespace ends a sentence."""
    rest = text[end:].lstrip()
    if not rest:
        return True
    nxt = rest[0]
    if nxt.islower():
        return False
    if "!" in text[start:end] or "?" in text[start:end]:
        return True
    word = re.search(r"([A-Za-z][A-Za-z.]*)$", text[:start])
    token = word.group(1).lower().rstrip(".") if word else ""
    if token in _SENTENCE_END_ABBREVIATIONS:
        return token in {"etc"} or not _TIME_FOLLOWERS.match(rest)
    if token in _ABBREVIATIONS or (token in _NUMBER_ABBREVIATIONS and nxt.isdigit()):
        return False
    if len(token) == 1 and word is not None and word.group(1).isupper():
        return False
    return not ("." in token and len(token) <= 5)


def _line_blocks(text: str) -> list[tuple[int, int]]:
    """Cut text into blocks of lines: blank lines, bullets and finished lines end a block."""
    blocks: list[tuple[int, int]] = []
    lines: list[tuple[int, int]] = []
    pos = 0
    for raw in text.splitlines(keepends=True):
        lines.append((pos, pos + len(raw.rstrip("\r\n"))))
        pos += len(raw)
    cur: tuple[int, int] | None = None
    for start, end in lines:
        line = text[start:end]
        if not line.strip():
            if cur:
                blocks.append(cur)
            cur = None
            continue
        bullet = _BULLET.match(line)
        if bullet:
            if cur:
                blocks.append(cur)
            cur = (start + bullet.end(), end)
            continue
        prev = text[cur[0] : cur[1]].rstrip() if cur else ""
        continues = bool(prev) and prev[-1] not in ".!?:" and line.lstrip()[:1].islower()
        if cur and continues:
            cur = (cur[0], end)
        else:
            if cur:
                blocks.append(cur)
            cur = (start, end)
    if cur:
        blocks.append(cur)
    return blocks


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """Character spans of the sentences of text, stripped of surrounding whitespace and bullets."""
    spans: list[tuple[int, int]] = []
    for block_start, block_end in _line_blocks(text):
        start = block_start
        for match in _BOUNDARY.finditer(text, block_start, block_end):
            if _is_boundary(text[:block_end], match.start(), match.end()):
                spans.append((start, match.end()))
                start = match.end()
        spans.append((start, block_end))
    result: list[tuple[int, int]] = []
    for start, end in spans:
        piece = text[start:end]
        lead = len(piece) - len(piece.lstrip())
        trail = len(piece) - len(piece.rstrip())
        if end - trail > start + lead:
            result.append((start + lead, end - trail))
    return result


def split_sentences(text: str) -> list[str]:
    """Sentences of text; each one is an exact substring of text."""
    return [text[start:end] for start, end in sentence_spans(text)]


def _is_signature(lines: list[str]) -> bool:
    return all(len(line.split()) <= 6 and not line.rstrip().endswith(".") for line in lines)


def _strip_letter_frame(text: str) -> str:
    """Remove salutation lines and the valediction plus the signature below it."""
    lines = [line for line in text.splitlines()]
    kept: list[str] = []
    for index, line in enumerate(lines):
        stripped = line.strip()
        if not kept and _GREETING_LINE.match(stripped):
            continue
        if _VALEDICTION.match(stripped):
            rest = [item for item in lines[index + 1 :] if item.strip()]
            if _is_signature(rest):
                break
            continue
        kept.append(line)
    return "\n".join(kept)


def split_claims(text: str) -> list[str]:
    """Claims of a draft: its sentences minus greetings, pleasantries, closings and signature."""
    claims: list[str] = []
    sentences = split_sentences(_strip_letter_frame(text))
    for index, sentence in enumerate(sentences):
        if _VALEDICTION.match(sentence.strip()) and _is_signature(sentences[index + 1 :]):
            break
        candidate = sentence
        if not claims:
            candidate = _GREETING_PREFIX.sub("", candidate, count=1)
        candidate = " ".join(candidate.split())
        if not candidate or _PLEASANTRY.match(candidate) or _VALEDICTION.match(candidate):
            continue
        if _GREETING_LINE.match(candidate):
            continue
        if not any(char.isalnum() for char in candidate):
            continue
        claims.append(candidate)
    return claims


def policy_topics(claim: str) -> list[str]:
    """Names of the spec 3.6 topics a claim touches (empty: not policy-like)."""
    topics = [name for name, pattern in POLICY_PATTERNS.items() if pattern.search(claim)]
    if _MONEY.search(claim) and "refund_cancellation_payment" not in topics:
        topics.append("refund_cancellation_payment")
    return topics


def is_policy_like(claim: str) -> bool:
    """True when the claim states or implies a rule or commitment and therefore needs a citation.

    Keyword based and deliberately broad (a false positive only asks for one more citation):
    refunds, cancellation, deposits, payments, prices and any money amount; age, fitness and
    medical requirements; safety rules and weather; waivers, legal and liability language;
    inclusions/exclusions, guarantees, exceptions and policy references; and rule language
    (must, required, allowed, minimum, maximum, limits, deadlines).
    """
    return bool(policy_topics(claim))


# Vocabulary of claim comparison (used by kb_eval.judge.claim_judge): phrase rewrites applied to lower-cased
# text, then per-word synonyms, stopwords and antonyms on stemmed words.
PHRASES: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern), replacement)
    for pattern, replacement in (
        (
            r"\bfree of charge\b|\bat no (?:extra |additional )?(?:cost|charge)\b|\bno charge\b"
            r"|\bcomplimentary\b",
            " free ",
        ),
        (r"\bno(?:t)? later than\b", " by "),
        (r"\bnever (?:\w+ )?(?:more|greater) than\b", " maximum "),
        (r"\b(?:on|by) (?:their|your|his|her|my|our) own\b|\bunaccompanied\b", " alone "),
        (r"\bon the (?:same )?day\b|\bon arrival\b|\bat the (?:gate|door)\b", " onsite "),
        (r"\bahead of time\b|\bbeforehand\b", " in advance "),
        (r"\blet (?:us|me) know\b", " tell "),
        (r"\bcapped at\b", " maximum "),
        (r"\b(?:entirely |completely )?up to (?:you|the guest)\b|\bvoluntary\b", " optional "),
        (r"\bextra (?:cost|charge|fee)\b|\badditional (?:cost|charge|fee)\b", " extra "),
        (r"\bno (?:more|greater) than\b|\bat most\b|\bup to\b", " maximum "),
        (
            r"\bno (?:less|fewer) than\b|\bat least\b|\b(?:or|and) (?:older|over|above|more)\b",
            " minimum ",
        ),
        (r"\bnon-?\s?refundable\b", " not refundable "),
        (r"\bnot only\b", " "),
        (r"\bthe (?:rest|remainder)\b", " the balance "),
        (r"\b(?:the )?middle of\b", " mid "),
        (r"\btake part\b|\btaking part\b", " participate "),
        (
            r"\b(?:the )?(?:trip|tour|trek) (?:starts|begins)\b|\bstart of the (?:trip|tour|trek)\b",
            " departure ",
        ),
        (r"\bexclud\w*\b", " not included "),
        (r"\boptional\b", " not required "),
        (
            r"\b(?:prohibited|forbid|forbids|forbidden|ban|bans|banned|disallowed)\b",
            " not allowed ",
        ),
        (r"\bunable\b", " not able "),
        (r"\bcannot\b|\bcan't\b|\bcan not\b", " not "),
        (r"n't\b", " not "),
        (r"\b(?:without|never|none|nor|neither|no)\b", " not "),
        (r"\s-\s|[-/]", " "),
    )
)
_SYNONYM_GROUPS: tuple[tuple[str, str], ...] = (
    ("refund", "refund refunds refunded refundable reimburse reimbursed reimbursement"),
    ("cancel", "cancel cancels cancelled canceled cancelling canceling cancellation cancellations"),
    ("depart", "depart departs departing departure departures leave leaves leaving"),
    (
        "guest",
        "guest guests traveller travellers traveler travelers participant participants "
        "client clients customer customers passenger passengers people person",
    ),
    ("child", "child children kid kids minor minors"),
    ("doctor", "doctor doctors physician physicians gp"),
    ("luggage", "luggage baggage bag bags suitcase suitcases duffel duffels duffle duffles"),
    ("include", "include includes included including inclusive cover covers covered free"),
    ("collect", "collect collects collected collection pick pickup"),
    (
        "require",
        "must require requires required requirement requirements mandatory compulsory "
        "obligatory need needs needed necessary",
    ),
    ("allow", "allow allows allowed permit permits permitted welcome"),
    (
        "price",
        "price prices cost costs fare fares fee fees surcharge surcharges charge charges charged",
    ),
    ("pay", "pay pays paid paying payment payments payable due"),
    ("book", "book books booked booking bookings reservation reservations reserve reserved"),
    ("help", "help helps assist assists assistance"),
    ("hire", "hire hired rent rented rental rentals"),
    ("drunk", "drunk intoxicated inebriated"),
    ("hotel", "hotel hotels lodge lodges accommodation"),
    ("clear", "clear clears cleared clearance"),
    ("letter", "letter letters certificate certificates"),
    ("tell", "tell disclose disclosed inform notify declare"),
    ("request", "ask asks asked request requests requested"),
    ("weigh", "weigh weighs weight"),
    ("tall", "tall height"),
    ("fit", "fit fitness"),
    ("heart", "heart cardiovascular cardiac"),
    ("decide", "decide decides decided decision"),
    ("age", "age aged ages old"),
    ("maximum", "max maximum upper highest limit limits"),
    ("minimum", "min minimum lowest"),
    ("sign", "sign signs signed signing signature signatures"),
    ("full", "full fully entire"),
    ("start", "start starts begin begins commence commences"),
    (
        "trip",
        "trip trips tour tours trek treks excursion excursions holiday activity activities "
        "adventure",
    ),
)
SYNONYMS: dict[str, str] = {
    word: canonical for canonical, group in _SYNONYM_GROUPS for word in group.split()
}
_STOPWORD_TEXT = """a an the and or of to in on at by for from with as is are was were be been
being am it its this that these those there here their they them we our us you your yours i me my
he she his her will would shall should can could may might do does did done have has had having
get gets got receive receives received give gives given make makes made take takes taken please
also just only all any each every some which who whom whose what when where while if then than so
such very more most other another own same about around approximately approx roughly sharp within
under below less fewer before after prior over above exceed exceeds beyond until till into onto
via through throughout during upon between both either etc one's trip per whether able apply
applies applied available how why yes okay ok currently current note remaining means mean use
not"""
STOPWORDS: frozenset[str] = frozenset(_STOPWORD_TEXT.split())
WEAK_TERMS: frozenset[str] = frozenset({"guest", "travel", "require", "allow", "day", "time"})
ANTONYMS: tuple[tuple[str, str], ...] = (
    ("easy", "challeng"),
    ("easy", "difficu"),
    ("easy", "strenu"),
    ("easy", "demand"),
    ("single", "twin"),
    ("single", "share"),
    ("single", "double"),
    ("beginn", "experi"),
    ("beginn", "advanc"),
    ("alone", "accompany"),
    ("alone", "parent"),
    ("alone", "guardian"),
    ("include", "extra"),
    ("free", "extra"),
    ("privat", "share"),
    ("refund", "credit"),
    ("refund", "voucher"),
    ("bring", "provid"),
    ("advance", "onsite"),
)
