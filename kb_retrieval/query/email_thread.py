"""Guest text of an e-mail or thread: latest message first, quotes/signatures/greetings off."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from kb_retrieval.query.guest_language import read_as_english
from kb_retrieval.text.analyzer import normalize_text

CONTEXT_WORDS_PER_MESSAGE = 60
CONTEXT_MAX_WORDS = 150
ROLES = ("guest", "operator")

_QUOTE_HEADERS: tuple[re.Pattern[str], ...] = (
    re.compile(r"^[ \t]*On\b[^\n]{0,300}?\n?[^\n]{0,200}?\bwrote:[ \t]*$", re.M),
    re.compile(r"^[ \t]*-{2,}\s*(?:Original|Forwarded) Message\s*-{2,}.*$", re.M | re.I),
    re.compile(r"^[ \t]*_{10,}[ \t]*$", re.M),
    re.compile(r"^[ \t]*From:[^\n]*\n(?:[^\n]*\n){0,3}?[ \t]*(?:Sent|Date|To|Subject):", re.M),
)
_SIGNATURE_MARKERS: tuple[re.Pattern[str], ...] = (
    re.compile(r"^--[ \t]*$", re.M),
    re.compile(r"^[ \t]*Sent from my [^\n]*$", re.M | re.I),
    re.compile(
        r"^[ \t]*(?:Sent|Get) (?:from|via) (?:Outlook|Mail|Yahoo Mail|Gmail)\b[^\n]*$", re.M
    ),
)
_CLOSING = (
    r"(?i:(?:(?:best|kind|warm|warmest|many|with)?\s*(?:regards|wishes|thanks)"
    r"|best|cheers|sincerely|yours(?: truly| sincerely| faithfully)?"
    r"|(?:thank you|thanks)(?: so much| again| in advance| for your (?:help|time))?"
    r"|thx|ta|all the best|take care|ciao|talk soon))"
)


def _names(word: str) -> str:
    """One to three names matching `word`, "and" / "&" allowed between them ("Tom and Anna")."""
    return rf"{word}(?:[ \t]+(?:(?:and|&)[ \t]+)?{word}){{0,2}}"


# A sign-off name after the closing on the same line ("Best, Alan", "Kind regards, Peter Hall",
# "Cheers, Tom and Anna").
_SIGN_OFF_WORD = r"[A-Z][\w'-]*"
_SIGN_OFF_NAME = rf"(?:[ \t]+{_names(_SIGN_OFF_WORD)}[ \t]*[.!]?)?"
_VALEDICTION = re.compile(rf"^[ \t]*{_CLOSING}[ \t]*[,.!]*{_SIGN_OFF_NAME}[ \t]*$")
# A name alone on the last line, with no closing before it ("Sarah", "Annika & Jens",
# "Dr. R. Lindqvist"): a signature when a blank line or a finished sentence precedes it.
# Letters only: a code on a line of its own ("EBC-15", "AT-55102") is not a name.
_INITIAL_OR_NAME = r"(?:[A-Z]\.|[A-Z][^\W\d_]*(?:['-][^\W\d_]+)*)"
_NAME_LINE = re.compile(
    rf"^[ \t]*(?:(?:Dr|Mr|Mrs|Ms|Prof)\.?[ \t]+)?{_names(_INITIAL_OR_NAME)}[ \t]*$"
)
# The same closing after the last sentence of a one-line message ("... in August? Ta, Jo"),
# or a trailing kiss ("x", "xx").
_TRAILING_CLOSING = re.compile(
    rf"(?<=[.!?])[ \t]+(?:{_CLOSING}[ \t]*[,.!]*{_SIGN_OFF_NAME}|(?i:x{{1,3}}))[ \t]*$"
)
_GREETING = re.compile(
    r"^[ \t]*(?:hi|hello|hey|hiya|howdy|dear|greetings|good (?:morning|afternoon|evening|day))"
    r"\b(?:[ \t]+\w[\w.'&-]*){0,4}?[ \t]*(?:[,:!.]+|[ \t]+[-\u2013\u2014]+[ \t]|$)[ \t]*",
    re.I,
)
_GREETING_ALONE = re.compile(
    r"^[ \t]*(?:hi|hello|hey|hiya|howdy|greetings|good (?:morning|afternoon|evening|day))"
    r"(?:[ \t]+(?:there|all|everyone|team|guys|folks|again))?[ \t]*[,:!.?]*[ \t]*$",
    re.I,
)
_SUBJECT_PREFIX = re.compile(r"^(?:\s*(?:re|fw|fwd|aw|sv)\s*(?:\[\d+\])?\s*:\s*)+", re.I)
_MAX_SIGNATURE_LINES = 5
_MAX_SIGNATURE_LINE_CHARS = 60


@dataclass(frozen=True)
class GuestMessage:
    """latest: the latest guest message, cleaned; context: subject + earlier guest messages."""

    latest: str
    context: str
    full: str
    subject: str = ""


def _cut_at_first(text: str, patterns: tuple[re.Pattern[str], ...]) -> str:
    cut = len(text)
    for pattern in patterns:
        match = pattern.search(text)
        if match is not None:
            cut = min(cut, match.start())
    return text[:cut]


def _strip_valediction(lines: list[str]) -> list[str]:
    """Drop a closing ("Best regards,") and the few short name/phone lines after it."""
    for index in range(len(lines) - 1, -1, -1):
        tail = [line for line in lines[index + 1 :] if line.strip()]
        if len(tail) > _MAX_SIGNATURE_LINES:
            break
        if any(len(line.strip()) > _MAX_SIGNATURE_LINE_CHARS for line in tail):
            break
        if _VALEDICTION.match(lines[index]) and any(line.strip() for line in lines[:index]):
            return lines[:index]
    return _strip_trailing_closing(_strip_name_line(lines))


def _strip_name_line(lines: list[str]) -> list[str]:
    """Drop a last line that is only a name, after a blank line or a finished sentence."""
    filled = [index for index, line in enumerate(lines) if line.strip()]
    if len(filled) < 2 or not _NAME_LINE.match(lines[filled[-1]]):
        return lines
    last, before = filled[-1], filled[-2]
    if before < last - 1 or lines[before].rstrip().endswith((".", "?", "!", ")")):
        return lines[:last]
    return lines


def _strip_trailing_closing(lines: list[str]) -> list[str]:
    """Drop a closing that ends the last non-empty line after its last sentence."""
    for index in range(len(lines) - 1, -1, -1):
        if lines[index].strip():
            cut = _TRAILING_CLOSING.sub("", lines[index])
            return [*lines[:index], cut] if cut.strip() else lines
    return lines


def _names_only(line: str) -> bool:
    """True for "Hi Sarah" / "Hello Alpine Treks": greeting followed only by capitalised words."""
    words = line.split()[1:]
    return len(words) <= 3 and all(word[:1].isupper() for word in words)


def _strip_greeting(lines: list[str]) -> list[str]:
    """Drop a leading greeting line ("Hi team,") or greeting prefix ("Hello, do you ...")."""
    for index, line in enumerate(lines):
        if not line.strip():
            continue
        if _GREETING_ALONE.match(line):
            return lines[index + 1 :]
        match = _GREETING.match(line)
        if match is None:
            return lines[index:]
        rest = line[match.end() :]
        if rest.strip():
            return [rest, *lines[index + 1 :]]
        if match.group(0).rstrip().endswith((",", ":", "!", ".")) or _names_only(line):
            return lines[index + 1 :]
        return lines[index:]
    return []


def _tidy(text: str) -> str:
    text = re.sub(r"[ \t]+\n", "\n", text)
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def strip_quotes(text: str) -> str:
    """Remove quoted replies: "> " lines and everything from "On ... wrote:" / Original Message."""
    text = _cut_at_first(text, _QUOTE_HEADERS)
    return "\n".join(line for line in text.split("\n") if not line.lstrip().startswith(">"))


def clean_message(text: str) -> str:
    """One message without quoted replies, signature, closing and greeting; the booking words of
    another language mixed into it read in English (`guest_language`)."""
    text = normalize_text(text.replace("\r\n", "\n").replace("\r", "\n"))
    unquoted = read_as_english(_tidy(strip_quotes(text)))
    body = _cut_at_first(unquoted, _SIGNATURE_MARKERS)
    lines = _strip_greeting(_strip_valediction(body.split("\n")))
    cleaned = _tidy("\n".join(lines))
    return cleaned or unquoted


def _shorten(text: str, max_words: int) -> str:
    words = text.split()
    return " ".join(words[:max_words])


def _messages(email: Mapping[str, object]) -> list[tuple[str, str]]:
    raw = email.get("messages", [])
    if not isinstance(raw, list):
        raise ValueError("email 'messages' must be a list")
    messages: list[tuple[str, str]] = []
    for position, message in enumerate(raw):
        if not isinstance(message, Mapping):
            raise ValueError(f"email message {position} must be an object")
        role, text = message.get("role"), message.get("text")
        if role not in ROLES:
            raise ValueError(f"email message {position} has unknown role {role!r}")
        if not isinstance(text, str):
            raise ValueError(f"email message {position} has no text")
        messages.append((str(role), text))
    return messages


def extract_guest_text(email: str | Mapping[str, object]) -> GuestMessage:
    """Split an e-mail (string, or thread oldest first) into latest guest text and context."""
    if isinstance(email, str):
        latest = clean_message(email)
        return GuestMessage(latest=latest, context="", full=latest)
    subject_raw = email.get("subject") or ""
    if not isinstance(subject_raw, str):
        raise ValueError("email 'subject' must be a string")
    subject = read_as_english(_SUBJECT_PREFIX.sub("", normalize_text(subject_raw)).strip())
    guest_texts = [clean_message(text) for role, text in _messages(email) if role == "guest"]
    latest = guest_texts[-1] if guest_texts else ""
    earlier = [
        _shorten(text, CONTEXT_WORDS_PER_MESSAGE) for text in reversed(guest_texts[:-1]) if text
    ]
    context = _shorten("\n".join(part for part in (subject, *earlier) if part), CONTEXT_MAX_WORDS)
    full = "\n\n".join(part for part in (latest, context) if part)
    return GuestMessage(latest=latest, context=context, full=full, subject=subject)
