"""Guest e-mails that mix another language into English (fresh examples, no golden e-mail)."""

from __future__ import annotations

import pytest

from kb_retrieval.query.email_thread import extract_guest_text
from kb_retrieval.query.guest_language import (
    detect_languages,
    fold,
    languages,
    parse_entries,
    read_as_english,
)
from kb_retrieval.query.plan import _CONNECTORS, build_query_plan
from kb_retrieval.text.analyzer import STOPWORDS

ENGLISH = [
    "Is a camera allowed on the boat, and what is the price per person?",
    "We hike Torres del Paine and Los Glaciares next year; do you know Les Houches?",
    "Our barn conversion is near Chamonix. Can we die-hard fans bring a gift for the guide?",
    "Danke for the quick answer! Could we pay the rest by card?",
    "Ciao, is breakfast included on the Cucina della Nonna course?",
]


@pytest.mark.parametrize("text", ENGLISH)
def test_english_text_is_returned_unchanged(text: str) -> None:
    assert detect_languages(text) == ()
    assert read_as_english(text) == text


def test_french_booking_words_read_in_english() -> None:
    email = (
        "Bonjour,\n\nNous sommes trois et nous voudrions réserver le stage de voile. "
        "Combien est l'acompte et quand faut-il payer le solde ?\n\nCordialement,\nMarie Dubois"
    )
    latest = extract_guest_text(email).latest
    assert detect_languages(email) == ("fr",)
    assert "deposit" in latest and "balance" in latest and "pay" in latest
    assert "how much" in latest.casefold()
    assert "Bonjour" not in latest and "Marie" not in latest and "regards" not in latest


def test_spanish_insurance_question() -> None:
    text = "Hola! Somos dos amigos. ¿Cuánto cuesta el seguro de cancelación? Gracias"
    english = read_as_english(text)
    assert "insurance" in english and "cancellation" in english and "how much" in english


def test_italian_luggage_question() -> None:
    text = "Buongiorno, siamo in quattro: quanto bagaglio possiamo portare sul minibus? Grazie"
    english = read_as_english(text)
    assert "luggage" in english and "bring" in english


def test_dutch_phrase_is_read_before_its_words() -> None:
    text = "Hallo, wij willen graag weten wanneer de aanbetaling moet. Met vriendelijke groet, Jan"
    english = read_as_english(text)
    assert "deposit" in english and "when" in english
    assert "kind regards" in english and "groet" not in english


def test_german_sign_off_and_greeting_are_cut() -> None:
    email = (
        "Guten Tag,\n\nwir möchten die Anzahlung überweisen. Wann ist der Restbetrag fällig?"
        "\n\nViele Grüße\nAnna Berg"
    )
    latest = extract_guest_text(email).latest
    assert latest.startswith("we would like")
    assert "deposit" in latest and "balance" in latest and "due" in latest
    assert "Anna" not in latest and "Guten" not in latest


def test_ordinal_day_before_a_translated_month_is_a_date() -> None:
    email = "Hei! Vi kommer den 14. juli. Hvor mye koster leie av ski? Takk, Ola og Kari"
    plan = build_query_plan(email)
    assert "jul 14" in plan.dates
    assert "how much" in plan.normalized_text and "rent" in plan.normalized_text


def test_thread_subject_is_read_too() -> None:
    thread = {
        "subject": "AW: Frage zur Anzahlung und Restzahlung",
        "messages": [
            {"role": "guest", "text": "Hello, a question about paying for the walking week."},
            {"role": "operator", "text": "Of course, what would you like to know?"},
            {"role": "guest", "text": "Thanks! When?"},
        ],
    }
    guest = extract_guest_text(thread)
    assert guest.subject == "question to deposit and balance"
    assert "deposit" in build_query_plan(thread).normalized_text


def test_one_marker_is_not_a_language() -> None:
    assert detect_languages("Thanks, and danke! When is the balance due?") == ()


def test_mixed_german_email_gets_the_payment_intents() -> None:
    email = "Hallo! Wir sind zwei Personen. Wie viel ist die Anzahlung und wann zahlen wir?"
    plan = build_query_plan(email)
    assert "deposit" in plan.intents
    assert plan.policy_like


def test_english_sign_off_with_two_names_is_cut() -> None:
    latest = extract_guest_text("Is lunch included on day two?\n\nCheers, Tom and Anna").latest
    assert latest == "Is lunch included on day two?"


def test_fold_drops_case_and_accents() -> None:
    assert fold("Grüße") == "grusse"
    assert fold("FØR") == "for"
    assert fold("Cancelación") == "cancelacion"


def test_parse_entries_reads_phrases_and_continuations() -> None:
    entries = parse_entries("kind regards: viele+grusse\n    | liebe+grusse\ndeposit: anzahlung")
    assert entries == {
        ("viele", "grusse"): "kind regards",
        ("liebe", "grusse"): "kind regards",
        ("anzahlung",): "deposit",
    }
    with pytest.raises(ValueError, match="without ':'"):
        parse_entries("deposit anzahlung")


def test_markers_are_never_english_words_or_name_connectors() -> None:
    english = {fold(word) for word in STOPWORDS} | set(_CONNECTORS)
    for language in languages():
        assert not language.markers & english, language.code
        assert len(language.markers) >= 15, language.code
        for key in language.entries:
            assert all(part and part == fold(part) for part in key), (language.code, key)
