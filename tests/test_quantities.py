"""Quantity extraction and topic classification."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kb_retrieval.text.quantities import (
    Quantity,
    extract_quantities,
    parse_number,
    quantity_topic,
    topic_of,
)


def _only(text: str, kind: str) -> Quantity:
    found = [q for q in extract_quantities(text) if q.kind == kind]
    assert len(found) == 1, found
    return found[0]


@pytest.mark.parametrize(
    ("text", "hours", "label"),
    [
        ("free 24-hour cancellation", 24, "24 hours"),
        ("within 48 hrs of arrival", 48, "48 hours"),
        ("within 7 calendar days of departure", 168, "7 days"),
        ("within seven days", 168, "7 days"),
        ("within two weeks", 336, "2 weeks"),
        ("within one week", 168, "1 week"),
        ("up to a fortnight before", 336, "2 weeks"),
        ("no later than thirty days prior", 720, "30 days"),
        ("twenty-one days before", 504, "21 days"),
        ("three months before", 2160, "3 months"),
        ("90 minutes before", 1.5, "90 minutes"),
        ("within 1.5 hours", 1.5, "1.5 hours"),
        ("give 48 hours' notice", 48, "48 hours"),
        ("cancelled 45 or more days before the start", 1080, "45 days"),
        ("booked three or fewer weeks ahead", 504, "3 weeks"),
    ],
)
def test_durations_are_normalised_to_hours(text: str, hours: float, label: str) -> None:
    quantity = _only(text, "duration")
    assert quantity.value == pytest.approx(hours)
    assert quantity.label == label


def test_business_days_keep_their_own_unit() -> None:
    quantity = _only("refunds within 5 business days", "duration")
    assert (quantity.value, quantity.unit, quantity.label) == (
        120.0,
        "business days",
        "5 business days",
    )
    assert _only("10 working days", "duration").unit == "business days"


def test_duration_range_gives_both_ends() -> None:
    found = extract_quantities("30-59 days before departure: 50% refund")
    durations = [q.value / 24 for q in found if q.kind == "duration"]
    assert durations == [30, 59]
    assert [q.value for q in found if q.kind == "percent"] == [50]


@pytest.mark.parametrize(
    ("word", "value"),
    [
        ("one", 1),
        ("seven", 7),
        ("twelve", 12),
        ("nineteen", 19),
        ("twenty", 20),
        ("twenty-one", 21),
        ("twenty five", 25),
        ("thirty", 30),
        ("Fourteen", 14),
        ("60", 60),
    ],
)
def test_number_words(word: str, value: float) -> None:
    assert parse_number(word) == value


def test_number_words_need_a_unit_and_a_whole_word() -> None:
    assert parse_number("seventeenth") is None
    assert extract_quantities("one of our guides will meet you") == []
    assert _only("seventeen days", "duration").value == 17 * 24


@pytest.mark.parametrize(
    ("text", "value"),
    [("a 50% refund", 50), ("50 per cent of the price", 50), ("10 percent", 10), ("12.5%", 12.5)],
)
def test_percentages(text: str, value: float) -> None:
    quantity = _only(text, "percent")
    assert (quantity.value, quantity.unit) == (value, "%")


@pytest.mark.parametrize(
    ("text", "value", "unit"),
    [
        ("a deposit of $250", 250, "USD"),
        ("USD 250 per person", 250, "USD"),
        ("250 EUR per person", 250, "EUR"),
        ("€1,200 per person", 1200, "EUR"),
        ("CHF 90 fee", 90, "CHF"),
        ("£75 admin fee", 75, "GBP"),
        ("NZ$300 deposit", 300, "NZD"),
        ("30 euros", 30, "EUR"),
        ("US$1,200.50", 1200.5, "USD"),
    ],
)
def test_currency_amounts(text: str, value: float, unit: str) -> None:
    quantity = _only(text, "currency")
    assert (quantity.value, quantity.unit) == (value, unit)


def test_currency_label() -> None:
    assert _only("€1,200 deposit", "currency").label == "EUR 1,200"


@pytest.mark.parametrize(
    ("text", "value", "unit"),
    [
        ("Children aged 12 and over are welcome.", 12, "min"),
        ("Minimum age 16.", 16, "min"),
        ("minimum age of 18 years", 18, "min"),
        ("Guests must be 16+ years old.", 16, "min"),
        ("Guests must be 14 years old.", 14, "min"),
        ("ages 10+ welcome", 10, "min"),
        ("Under 18 must be accompanied by an adult.", 18, "under"),
        ("travellers under 16 years need consent", 16, "under"),
        ("Children 12 and under ride free", 12, "max"),
    ],
)
def test_ages(text: str, value: float, unit: str) -> None:
    quantity = _only(text, "age")
    assert (quantity.value, quantity.unit) == (value, unit)


def test_under_with_another_unit_is_not_an_age() -> None:
    kinds = [
        q.kind for q in extract_quantities("under 30 days, under 20 kg, groups under 10 people")
    ]
    assert kinds == ["duration", "weight"]


@pytest.mark.parametrize(
    ("text", "minutes"),
    [
        ("check-in at 06:00", 360),
        ("pickup at 6am", 360),
        ("dinner at 8:30 pm", 1230),
        ("meet at 7.15 a.m. sharp", 435),
        ("depart at 14:45", 885),
        ("lunch at noon", 720),
        ("12am", 0),
        ("12 pm", 720),
    ],
)
def test_times_of_day(text: str, minutes: float) -> None:
    assert _only(text, "time_of_day").value == minutes


def test_time_label_and_no_time_from_prices() -> None:
    assert _only("arrive by 6am", "time_of_day").label == "06:00"
    assert [q.kind for q in extract_quantities("a coffee costs 8.30")] == []


def test_weights_in_pounds_become_kg() -> None:
    found = extract_quantities("Bags max 20 kg (44 lbs).")
    assert [q.kind for q in found] == ["weight", "weight"]
    assert found[1].value == pytest.approx(19.96, abs=0.01)


def test_quantities_come_in_text_order_with_surface_and_context() -> None:
    found = extract_quantities("Deposit due 60 days before departure. Pickup at 6am.")
    assert [q.text for q in found] == ["60 days", "6am"]
    assert found[0].context == "deposit due # before departure"
    assert found[1].context == "pickup at #"


@pytest.mark.parametrize(
    ("text", "topic"),
    [
        ("Cancellations within 7 calendar days of departure are non-refundable.", "cancellation"),
        ("Flexible booking: free 24-hour cancellation on all tours!", "cancellation"),
        ("Deposit due 60 days before departure.", "deposit"),
        ("Your remaining balance must reach us 8 weeks before departure.", "payment_due"),
        ("Refunds are processed within 14 days of cancellation.", "refund_processing"),
        ("Free cancellation within 24 hours of booking.", "cancellation_after_booking"),
        ("Day 1 arrival, 06:00 at the hotel lobby.", "check_in"),
        ("The typical check-in is 08:00.", "check_in"),
        ("Hotel pickup at 6am.", "pickup"),
        ("Minimum age 16.", "minimum_age"),
        ("Under 18 must be accompanied by an adult.", "guardian"),
        ("Each bag may weigh up to 20 kg.", "luggage_weight"),
        ("A non-refundable deposit of 20% is due at booking.", "deposit"),
        ("Complaints must be made within 28 days.", "complaint"),
    ],
)
def test_topics(text: str, topic: str) -> None:
    found = extract_quantities(text)
    assert found, text
    assert quantity_topic(found[0]) == topic


def test_topic_none_when_unrelated_or_vetoed() -> None:
    assert quantity_topic(_only("The hike takes 6 hours.", "duration")) is None
    assert quantity_topic(_only("Children aged 12 and over get a discount.", "age")) is None
    assert quantity_topic(_only("Children under 12 travel free.", "age")) is None


def test_topic_of_respects_kind_and_distance() -> None:
    assert topic_of("cancellation within #", "duration") == "cancellation"
    assert topic_of("cancellation within #", "time_of_day") is None
    assert topic_of("deposit a b c d e f g #", "duration") is None
    assert topic_of("refund policy", None) == "cancellation"


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_extraction_never_raises_and_is_stable(text: str) -> None:
    first = extract_quantities(text)
    assert first == extract_quantities(text)
    for quantity in first:
        assert quantity.text
        assert "#" in quantity.context.split()
        assert isinstance(quantity.label, str)
        assert quantity_topic(quantity) is None or isinstance(quantity_topic(quantity), str)
