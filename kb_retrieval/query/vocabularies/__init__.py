"""Booking vocabulary of the languages guests mix into English e-mails: data, not logic, one
module per language.

`kb_retrieval.query.guest_language` detects a language by its `markers` (function words that no
English e-mail uses) and then reads its `phrases` and `words` as English. Each entry is
"english: foreign foreign ...": the English text on the left, every foreign word (folded: case and
accents do not matter) that reads as it on the right. An empty left side drops the words
(function words with no English content). A phrase entry joins its words with "+".

The lists are a general booking and travel vocabulary, written concept by concept (payments,
cancellation, people and ages, luggage, food, dates), not from any e-mail. A word that is also an
English word ("die", "gift", "kind", "rest", "also", "per", "camera") is never a marker, so an
English e-mail is never read as another language, and is left out of the entries unless it means
the same in both (a few, like Norwegian "barn", are kept: they are read only once the language is
detected).
"""

from __future__ import annotations

from kb_retrieval.query.vocabularies import de, es, fr, it, nl, nordic

MIN_MARKERS = 2  # distinct marker words that make a language present in one message

MONTHS_EN: tuple[str, ...] = (
    "january", "february", "march", "april", "may", "june",
    "july", "august", "september", "october", "november", "december",
)  # fmt: skip

LANGUAGES: dict[str, dict[str, str]] = {
    "de": de.VOCABULARY,
    "nl": nl.VOCABULARY,
    "nordic": nordic.VOCABULARY,
    "fr": fr.VOCABULARY,
    "es": es.VOCABULARY,
    "it": it.VOCABULARY,
}
