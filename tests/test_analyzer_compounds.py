"""Hyphenated compounds written either way ("wi-fi" / "wifi") meet in the BM25 terms."""

from __future__ import annotations

import pytest

from kb_retrieval.query.plan import build_query_plan
from kb_retrieval.retrieval.scoring import passage_coverage, term_positions
from kb_retrieval.text.analyzer import analyze, joined_compound, term_frequencies


@pytest.mark.parametrize(
    ("hyphenated", "joined"),
    [
        ("Wi-Fi", "WiFi"),
        ("e-mail", "email"),
        ("T-shirt", "tshirt"),
        ("pick-up", "pickup"),
        ("drop-off", "dropoff"),
        ("check-in", "checkin"),
        ("x-ray", "xray"),
    ],
)
def test_a_compound_with_a_short_or_stopword_part_matches_its_joined_spelling(
    hyphenated: str, joined: str
) -> None:
    written_joined = set(analyze(f"The cabin has {joined} for guests."))
    written_hyphenated = set(analyze(f"The cabin has {hyphenated} for guests."))
    assert set(analyze(joined)) <= written_hyphenated
    assert set(analyze(joined)) <= written_joined


def test_the_parts_stay_terms_so_the_spaced_spelling_still_matches() -> None:
    terms = analyze("Free pick-up from the hotel")
    assert terms == ["free", "pick", "pickup", "hotel"]
    assert set(analyze("can you pick us up")) & set(terms) == {"pick"}


def test_compounds_of_longer_words_numbers_and_codes_are_left_alone() -> None:
    assert analyze("sea-kayak tours") == ["sea", "kayak", "tour"]
    assert analyze("a 10-year-old") == ["10", "year", "old"]
    assert analyze("covid-19 tests") == ["covid", "19", "test"]
    assert joined_compound("well-behaved") is None
    assert joined_compound("wi-fi") == "wifi"


def test_positions_and_frequencies_count_the_joined_form_once_after_its_parts() -> None:
    text = "Use the Wi-Fi router. The Wi-Fi code is on the chart table."
    frequencies = term_frequencies(text)
    assert frequencies["wifi"] == 2 and frequencies["wi"] == 2
    positions = term_positions(text)
    assert positions["wifi"] == (positions["fi"][0] + 1, positions["fi"][1] + 1)


def test_a_guest_question_covers_a_chunk_that_spells_the_compound_otherwise() -> None:
    chunk = "Every boat carries a mobile Wi-Fi router with a weekly data allowance."
    idf = {"wifi": 3.0, "boat": 1.0, "wi": 2.0, "fi": 2.0}
    joined_query = analyze("wifi boat")
    assert passage_coverage(chunk, joined_query, idf, 40) == pytest.approx(1.0)


def test_the_exact_variant_carries_the_hyphenated_compound_the_direct_one_splits() -> None:
    """The direct variant writes "check in" (seed example 2); the exact-term variant keeps
    "check-in", so the joined term reaches the lexical leg through it."""
    plan = build_query_plan("Could you e-mail me the pick-up time for the first morning?")
    direct, exact = plan.variants[0].text, plan.variants[-1].text
    assert "e mail" in direct and "pick up" in direct
    assert {"email", "pickup"} <= set(analyze(exact))


def test_only_a_compound_standing_alone_is_joined() -> None:
    assert "wifi" in analyze("(Wi-Fi)") and "wifi" in analyze("free wi-fi.")
    assert "abcd" not in analyze("booking code ab-cd-12")
    assert "xray" in analyze("two x-rays, one e-bike") and "ebik" in analyze("one e-bike")
