"""Claim splitting and policy-likeness of draft sentences."""

from __future__ import annotations

import pytest

from kb_eval.judge.claims import is_policy_like, policy_topics, split_claims, split_sentences


def test_sentences_are_exact_substrings() -> None:
    text = "Check-in opens at 6 a.m. local time.  Bring approx. 2.5 kg of food!\nSee you."
    sentences = split_sentences(text)
    assert sentences == [
        "Check-in opens at 6 a.m. local time.",
        "Bring approx. 2.5 kg of food!",
        "See you.",
    ]
    assert all(sentence in text for sentence in sentences)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "The fee is $12.50. A 2.5% surcharge applies.",
            ["The fee is $12.50.", "A 2.5% surcharge applies."],
        ),
        (
            "Bring gear, e.g. boots and poles. Then rest.",
            ["Bring gear, e.g. boots and poles.", "Then rest."],
        ),
        (
            "Meet Dr. Smith at the office. He checks you.",
            ["Meet Dr. Smith at the office.", "He checks you."],
        ),
        (
            "See clause No. 5 for details. Thanks a lot.",
            ["See clause No. 5 for details.", "Thanks a lot."],
        ),
        (
            "The bus leaves at 7 a.m. Please be on time.",
            ["The bus leaves at 7 a.m.", "Please be on time."],
        ),
        ("We open at 9 a.m. Monday to Friday.", ["We open at 9 a.m. Monday to Friday."]),
        ("Pickup at 6 p.m. sharp. Dinner follows.", ["Pickup at 6 p.m. sharp.", "Dinner follows."]),
        ("Is it refundable? No. It is not.", ["Is it refundable?", "No.", "It is not."]),
        ("Pay 30% now. 70% is due later.", ["Pay 30% now.", "70% is due later."]),
        ("Boots, poles etc. Bring them all.", ["Boots, poles etc.", "Bring them all."]),
    ],
)
def test_sentence_boundaries(text: str, expected: list[str]) -> None:
    assert split_sentences(text) == expected


def test_bullets_and_wrapped_lines() -> None:
    text = (
        "Included:\n"
        "- All meals on the trail\n"
        "* Park entrance fees\n"
        "1. A 20% deposit is due\n"
        "   at booking.\n"
        "\u2022 Helmets are mandatory."
    )
    assert split_sentences(text) == [
        "Included:",
        "All meals on the trail",
        "Park entrance fees",
        "A 20% deposit is due\n   at booking.",
        "Helmets are mandatory.",
    ]
    assert "A 20% deposit is due at booking." in split_claims(text)


def test_letter_frame_is_not_a_claim() -> None:
    draft = (
        "Hi Anna,\n\n"
        "Thanks for your email! Cancellations within 7 days of departure are non-refundable. "
        "I hope this helps.\n\n"
        "Best regards,\nMaria Lopez\nAlpine Treks"
    )
    assert split_claims(draft) == ["Cancellations within 7 days of departure are non-refundable."]


@pytest.mark.parametrize(
    ("draft", "expected"),
    [
        ("Hi Anna, the deposit is 20%.", ["the deposit is 20%."]),
        (
            "Dear Mr. Smith,\nWe open at 9 a.m. Monday to Friday. Kind regards, Maria",
            ["We open at 9 a.m. Monday to Friday."],
        ),
        ("Hello!\nCheck-in is at 06:00.\nCheers,\nTom", ["Check-in is at 06:00."]),
        ("Good morning Sam,\nLet us know if you have questions.\nThank you", []),
        ("Hello there team\nThe bus leaves at 7.", ["The bus leaves at 7."]),
        ("Best of all, the price includes meals.", ["Best of all, the price includes meals."]),
    ],
)
def test_greetings_and_closings_are_dropped(draft: str, expected: list[str]) -> None:
    assert split_claims(draft) == expected


def test_text_after_a_valediction_that_is_not_a_signature_is_kept() -> None:
    draft = "Thanks,\nPlease note the remaining amount must reach us 60 days ahead of the trip."
    assert split_claims(draft) == [
        "Please note the remaining amount must reach us 60 days ahead of the trip."
    ]


@pytest.mark.parametrize(
    "claim",
    [
        "Cancellations within 7 days of departure are non-refundable.",
        "A 20% deposit confirms your booking.",
        "The remaining amount must reach us 60 days ahead of the trip.",
        "The minimum age is 16.",
        "Guests over 70 need a letter from their doctor.",
        "Participants must be reasonably fit.",
        "Helmets are mandatory on the via ferrata.",
        "The guide may cancel the hike if the weather is unsafe.",
        "Every participant must sign the waiver.",
        "Alpine Treks is not liable for lost items.",
        "International flights are not included.",
        "We guarantee the departure once four guests have booked.",
        "Exceptions are decided by the operations manager.",
        "The single supplement is USD 350.",
        "Each guest may bring one bag of at most 15 kg.",
    ],
)
def test_policy_like_claims(claim: str) -> None:
    assert is_policy_like(claim)
    assert policy_topics(claim)


@pytest.mark.parametrize(
    "claim",
    [
        "Check-in opens at 06:00 local time.",
        "The lodge has a lovely view of the lake.",
        "Our guides love Patagonia.",
        "The office is in Puerto Natales.",
        "Day 3 goes to the Grey Glacier viewpoint.",
    ],
)
def test_not_policy_like_claims(claim: str) -> None:
    assert not is_policy_like(claim)
