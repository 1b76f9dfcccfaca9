"""Sign-offs and bare signature names are cut from the guest's text (fresh examples)."""

from __future__ import annotations

import pytest

from kb_retrieval.query.email_thread import extract_guest_text
from kb_retrieval.query.plan import build_query_plan

QUESTION = "Do the kayak trips run when it rains?"


@pytest.mark.parametrize(
    "ending",
    [
        "\n\nPriya",
        "\n\nOlu & Grace",
        "\n\nDr. K. Brennan",
        "\n\nMs Varga",
        "\n\nJean-Luc O'Neill",
        "\nRuth",  # right after a finished sentence
        "\n\nYours faithfully,\nH. Okafor",
        "\n\nThanks for your help,\nBen and Lou",
        "\n\nThank you for your time\nMarta",
        "\n\nCheers, Tom and Anna",
    ],
)
def test_signature_is_cut(ending: str) -> None:
    assert extract_guest_text(QUESTION + ending).latest == QUESTION


@pytest.mark.parametrize(
    "text",
    [
        "Which of these has the easier paddling:\nBroken Group",  # the line completes a question
        "Two questions about the Lofoten week\nDeposit",  # no finished sentence before it
        "Priya",  # a message that is only a name is left alone
        "Is this departure still open?\nEBC-15",  # a trip code, not a name
    ],
)
def test_name_like_line_that_is_content_is_kept(text: str) -> None:
    assert extract_guest_text(text).latest == text


def test_signature_name_leaves_the_direct_query() -> None:
    plan = build_query_plan(QUESTION + "\n\nKasimir")
    assert "kasimir" not in plan.variants[0].text


def test_thread_follow_up_signature_is_cut() -> None:
    thread = {
        "subject": "Rain",
        "messages": [
            {"role": "guest", "text": QUESTION + "\n\nPriya"},
            {"role": "operator", "text": "Yes, unless there is lightning."},
            {"role": "guest", "text": "And is there a dry room at the base?\n\nPriya"},
        ],
    }
    guest = extract_guest_text(thread)
    assert guest.latest == "And is there a dry room at the base?"
    assert "Priya" not in guest.full
