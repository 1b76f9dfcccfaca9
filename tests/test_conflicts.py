"""Retrieval-time conflict detection (000 section 6)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kb_retrieval.models import Category
from kb_retrieval.retrieval.conflicts import (
    BENEFIT_DENIAL,
    CONFLICT_KINDS,
    EXCEPTION_REQUEST,
    NUMERIC_WINDOW,
    POLICY_TERMS_DISAGREEMENT,
    UNLINKED_TERMS_VERSIONS,
    Conflict,
    ConflictInput,
    detect_conflicts,
)

POLICY_7_DAYS = "Cancellations within 7 calendar days of departure are non-refundable."
BROCHURE_24H = "Flexible booking: free 24-hour cancellation on all tours!"
SCHEDULE = (
    "Cancellation charges: more than 60 days before departure: full refund; "
    "30-59 days: 50% refund; under 30 days: no refund."
)


def chunk(
    chunk_id: str,
    category: Category,
    text: str,
    *,
    rank: int,
    doc: str | None = None,
    version: str | None = None,
    supersedes: str | None = None,
) -> ConflictInput:
    doc_id = doc or f"doc-{chunk_id}"
    return ConflictInput(
        chunk_id=chunk_id,
        doc_id=doc_id,
        doc_version_id=version or f"{doc_id}-v1",
        category=category,
        text=text,
        supersedes_doc_version_id=supersedes,
        rank=rank,
    )


def kinds(conflicts: list[Conflict]) -> list[str]:
    return [c.kind for c in conflicts]


def test_worked_example_1_brochure_contradicts_policy_window() -> None:
    chunks = [
        chunk("policy_000", Category.STRUCTURED_POLICY, POLICY_7_DAYS, rank=1),
        chunk(
            "terms_012", Category.TERMS_POLICY, "No refund for cancellations within 7 days.", rank=2
        ),
        chunk("brochure_021", Category.MARKETING, BROCHURE_24H, rank=3),
    ]
    conflicts = detect_conflicts(chunks, exception_request=False)
    assert kinds(conflicts) == [NUMERIC_WINDOW]
    assert conflicts[0].to_json() == {
        "kind": "numeric_window",
        "values": ["24 hours", "7 days"],
        "chunk_ids": ["policy_000", "terms_012", "brochure_021"],
    }
    assert "cancellation" in conflicts[0].detail


def test_worked_example_1_policy_and_brochure_alone() -> None:
    chunks = [
        chunk("p", Category.STRUCTURED_POLICY, POLICY_7_DAYS, rank=1),
        chunk("m", Category.MARKETING, BROCHURE_24H, rank=2),
    ]
    [conflict] = detect_conflicts(chunks, exception_request=False)
    assert (conflict.kind, conflict.values, conflict.chunk_ids) == (
        NUMERIC_WINDOW,
        ("24 hours", "7 days"),
        ("p", "m"),
    )


def test_worked_example_2_itinerary_time_wins_over_faq() -> None:
    """A trip-specific itinerary and the general FAQ differing on check-in is not a conflict."""
    chunks = [
        chunk(
            "it_003",
            Category.TRIP_ITINERARY,
            "Day 1 arrival: check-in at 06:00.",
            rank=1,
            doc="patagonia-jun14",
        ),
        chunk(
            "it_004",
            Category.TRIP_ITINERARY,
            "Arrival logistics: hotel pickup at 05:30.",
            rank=2,
            doc="patagonia-jun14",
        ),
        chunk("faq_030", Category.FAQ, "Arrival: typical check-in is 08:00.", rank=3),
    ]
    assert detect_conflicts(chunks, exception_request=False) == []


def test_itineraries_of_different_trips_do_not_conflict_but_versions_of_one_do() -> None:
    june = chunk("a", Category.TRIP_ITINERARY, "Check-in at 06:00.", rank=1, doc="jun14")
    july = chunk("b", Category.TRIP_ITINERARY, "Check-in at 07:00.", rank=2, doc="jul02")
    assert detect_conflicts([june, july], exception_request=False) == []
    june_v2 = chunk(
        "c", Category.TRIP_ITINERARY, "Check-in at 07:00.", rank=2, doc="jun14", version="jun14-v2"
    )
    [conflict] = detect_conflicts([june, june_v2], exception_request=False)
    assert (conflict.kind, conflict.values) == (NUMERIC_WINDOW, ("06:00", "07:00"))


def test_same_tier_numeric_window() -> None:
    chunks = [
        chunk(
            "f1",
            Category.FAQ,
            "Guests may cancel their booking up to 14 days before departure.",
            rank=1,
        ),
        chunk(
            "f2", Category.FAQ, "Cancellation is possible until 30 days before the trip.", rank=2
        ),
    ]
    [conflict] = detect_conflicts(chunks, exception_request=False)
    assert (conflict.kind, conflict.values, conflict.chunk_ids) == (
        NUMERIC_WINDOW,
        ("14 days", "30 days"),
        ("f1", "f2"),
    )


def test_structured_policy_and_terms_disagree() -> None:
    chunks = [
        chunk("sp", Category.STRUCTURED_POLICY, "A deposit of 20% is due at booking.", rank=1),
        chunk("tp", Category.TERMS_POLICY, "A 25% deposit secures your place.", rank=2),
    ]
    [conflict] = detect_conflicts(chunks, exception_request=False)
    assert (conflict.kind, conflict.values, conflict.chunk_ids) == (
        POLICY_TERMS_DISAGREEMENT,
        ("20%", "25%"),
        ("sp", "tp"),
    )


def test_lower_tiers_of_different_categories_are_not_compared() -> None:
    chunks = [
        chunk(
            "faq",
            Category.FAQ,
            "Guests may cancel their booking up to 14 days before departure.",
            rank=1,
        ),
        chunk("mkt", Category.MARKETING, BROCHURE_24H, rank=2),
    ]
    assert detect_conflicts(chunks, exception_request=False) == []


def test_same_value_in_different_words_is_not_a_conflict() -> None:
    chunks = [
        chunk("sp", Category.STRUCTURED_POLICY, POLICY_7_DAYS, rank=1),
        chunk(
            "tp",
            Category.TERMS_POLICY,
            "Cancellations within one week of travel are not refundable.",
            rank=2,
        ),
        chunk(
            "faq",
            Category.FAQ,
            "No refunds for cancellations within 168 hours of departure.",
            rank=3,
        ),
        chunk("mkt", Category.MARKETING, "Cancel up to seven days before you go.", rank=4),
    ]
    assert detect_conflicts(chunks, exception_request=False) == []


def test_months_and_weeks_are_approximately_equal() -> None:
    chunks = [
        chunk(
            "sp",
            Category.STRUCTURED_POLICY,
            "Your remaining balance must reach us 1 month before departure.",
            rank=1,
        ),
        chunk("faq", Category.FAQ, "Final payment is due 4 weeks before departure.", rank=2),
    ]
    assert detect_conflicts(chunks, exception_request=False) == []


def test_different_topics_do_not_conflict() -> None:
    chunks = [
        chunk("sp", Category.STRUCTURED_POLICY, "Deposit due 60 days before departure.", rank=1),
        chunk(
            "tp",
            Category.TERMS_POLICY,
            "Bookings are non-refundable within 7 days of departure.",
            rank=2,
        ),
        chunk("faq", Category.FAQ, "Refunds are processed within 14 days.", rank=3),
    ]
    assert detect_conflicts(chunks, exception_request=False) == []


def test_incomparable_units_do_not_conflict() -> None:
    chunks = [
        chunk("sp", Category.STRUCTURED_POLICY, "A deposit of $250 is required.", rank=1),
        chunk("faq", Category.FAQ, "The deposit is EUR 230.", rank=2),
        chunk("tp", Category.TERMS_POLICY, "Under 18 must be accompanied by an adult.", rank=3),
        chunk("wv", Category.WAIVER_RELEASE, "Minimum age 12.", rank=4),
    ]
    assert detect_conflicts(chunks, exception_request=False) == []


def test_schedule_is_one_policy_and_agrees_with_one_of_its_values() -> None:
    chunks = [
        chunk("sp", Category.STRUCTURED_POLICY, SCHEDULE, rank=1),
        chunk(
            "tp",
            Category.TERMS_POLICY,
            "Cancellations less than 30 days before departure are non-refundable.",
            rank=2,
        ),
        chunk("faq", Category.FAQ, "Cancel more than 60 days ahead for a full refund.", rank=3),
    ]
    assert detect_conflicts(chunks, exception_request=False) == []


def test_schedule_against_a_value_it_does_not_contain() -> None:
    chunks = [
        chunk("sp", Category.STRUCTURED_POLICY, SCHEDULE, rank=1),
        chunk("mkt", Category.MARKETING, BROCHURE_24H, rank=2),
    ]
    [conflict] = detect_conflicts(chunks, exception_request=False)
    assert conflict.kind == NUMERIC_WINDOW
    assert conflict.values == ("24 hours", "30 days", "59 days", "60 days")
    assert conflict.chunk_ids == ("sp", "mkt")


def test_chunks_of_one_document_version_never_conflict() -> None:
    chunks = [
        chunk(
            "t1",
            Category.TERMS_POLICY,
            "More than 60 days before departure: full refund.",
            rank=1,
            doc="terms",
            version="terms-v3",
        ),
        chunk(
            "t2",
            Category.TERMS_POLICY,
            "Within 30 days of departure: no refund.",
            rank=2,
            doc="terms",
            version="terms-v3",
        ),
    ]
    assert detect_conflicts(chunks, exception_request=False) == []


def test_unlinked_terms_versions() -> None:
    old = chunk(
        "t_old", Category.TERMS_POLICY, "General terms.", rank=2, doc="terms", version="terms-2025"
    )
    new = chunk(
        "t_new", Category.TERMS_POLICY, "General terms.", rank=1, doc="terms", version="terms-2026"
    )
    [conflict] = detect_conflicts([old, new], exception_request=False)
    assert (conflict.kind, conflict.values, conflict.chunk_ids) == (
        UNLINKED_TERMS_VERSIONS,
        ("terms-2026", "terms-2025"),
        ("t_new", "t_old"),
    )
    other_doc = chunk("t_x", Category.TERMS_POLICY, "Other terms.", rank=3, doc="terms-b2b")
    assert UNLINKED_TERMS_VERSIONS not in kinds(
        detect_conflicts([new, other_doc], exception_request=False)
    ), "separate terms documents are not versions of each other"


def test_linked_terms_versions_are_fine() -> None:
    v1 = chunk("a", Category.TERMS_POLICY, "Terms.", rank=1, doc="t", version="t-v1")
    v2 = chunk(
        "b", Category.TERMS_POLICY, "Terms.", rank=2, doc="t", version="t-v2", supersedes="t-v1"
    )
    v3 = chunk(
        "c", Category.TERMS_POLICY, "Terms.", rank=3, doc="t", version="t-v3", supersedes="t-v2"
    )
    assert detect_conflicts([v1, v2, v3], exception_request=False) == []
    stray = chunk("d", Category.TERMS_POLICY, "Terms.", rank=4, doc="t", version="t-v9")
    [conflict] = detect_conflicts([v1, v2, v3, stray], exception_request=False)
    assert conflict.values == ("t-v1", "t-v2", "t-v3", "t-v9")


def test_exception_request_needs_policy_text() -> None:
    policy = chunk("sp", Category.STRUCTURED_POLICY, "Medical waivers are not granted.", rank=2)
    medical = chunk("med", Category.SAFETY_MEDICAL, "Consult your doctor.", rank=1)
    [conflict] = detect_conflicts([medical, policy], exception_request=True)
    assert conflict.to_json() == {"kind": EXCEPTION_REQUEST, "values": [], "chunk_ids": ["sp"]}
    assert detect_conflicts([medical, policy], exception_request=False) == []
    assert detect_conflicts([medical], exception_request=True) == []


def test_output_order_is_by_kind_then_rank_and_independent_of_input_order() -> None:
    chunks = [
        chunk("sp", Category.STRUCTURED_POLICY, POLICY_7_DAYS, rank=1),
        chunk(
            "tp1",
            Category.TERMS_POLICY,
            "Cancellations within 14 days: no refund.",
            rank=2,
            doc="terms",
            version="terms-a",
        ),
        chunk(
            "tp2",
            Category.TERMS_POLICY,
            "Cancellations within 7 days: no refund.",
            rank=3,
            doc="terms",
            version="terms-b",
        ),
        chunk("mkt", Category.MARKETING, BROCHURE_24H, rank=4),
    ]
    conflicts = detect_conflicts(chunks, exception_request=True)
    assert kinds(conflicts) == [
        NUMERIC_WINDOW,
        POLICY_TERMS_DISAGREEMENT,
        UNLINKED_TERMS_VERSIONS,
        EXCEPTION_REQUEST,
    ]
    assert conflicts[0].chunk_ids == ("sp", "tp1", "tp2", "mkt")
    assert conflicts[0].values == ("24 hours", "7 days", "14 days")
    assert conflicts[1].chunk_ids == ("sp", "tp1")
    assert detect_conflicts(list(reversed(chunks)), exception_request=True) == conflicts


_PHRASES = [
    POLICY_7_DAYS,
    BROCHURE_24H,
    SCHEDULE,
    "Deposit due 60 days before departure.",
    "Check-in at 06:00.",
    "Minimum age 16.",
    "A deposit of $250 is required.",
    "Refunds within one week.",
]
_texts = st.one_of(st.text(max_size=120), st.sampled_from(_PHRASES))
_inputs = st.builds(
    ConflictInput,
    chunk_id=st.sampled_from(["c1", "c2", "c3", "c4", "c5"]),
    doc_id=st.sampled_from(["d1", "d2", "d3"]),
    doc_version_id=st.sampled_from(["v1", "v2", "v3", "v4"]),
    category=st.sampled_from(list(Category)),
    text=_texts,
    supersedes_doc_version_id=st.one_of(st.none(), st.sampled_from(["v1", "v2", "v3", "v4"])),
    rank=st.integers(min_value=1, max_value=6),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(_inputs, max_size=6), st.booleans(), st.randoms(use_true_random=False))
def test_detect_conflicts_never_raises_and_ignores_input_order(
    chunks: list[ConflictInput], exception_request: bool, rng: object
) -> None:
    result = detect_conflicts(chunks, exception_request=exception_request)
    shuffled = list(chunks)
    rng.shuffle(shuffled)  # type: ignore[attr-defined]
    assert detect_conflicts(shuffled, exception_request=exception_request) == result
    known = {c.chunk_id for c in chunks}
    for conflict in result:
        assert conflict.kind in CONFLICT_KINDS
        assert set(conflict.chunk_ids) <= known
        assert len(set(conflict.chunk_ids)) == len(conflict.chunk_ids)
        assert conflict.to_json()["kind"] == conflict.kind


PROMISE = (
    "Rain Promise. If it rains on every day of your tour, you will receive a voucher for "
    "another day trip with us."
)
DENIAL = "Weather. No refund or voucher is given if it rains during a tour."


def test_lower_tier_promise_against_policy_denial_under_the_same_condition() -> None:
    chunks = [
        chunk("site_000", Category.MARKETING, PROMISE, rank=1),
        chunk("terms_013", Category.TERMS_POLICY, DENIAL, rank=2),
    ]
    conflicts = detect_conflicts(chunks, exception_request=False)
    assert kinds(conflicts) == [BENEFIT_DENIAL]
    assert conflicts[0].values == ("voucher", "no refund or voucher")
    assert set(conflicts[0].chunk_ids) == {"site_000", "terms_013"}


def test_orca_style_promise_with_irregular_participle_and_negated_conditions() -> None:
    promise = "If your group does not see a whale during the trip, you will receive 20% off."
    denial = (
        "Sightings are never guaranteed, and no refund or credit is given if wildlife is not seen."
    )
    chunks = [
        chunk("web_000", Category.MARKETING, promise, rank=1),
        chunk("terms_013", Category.TERMS_POLICY, denial, rank=2),
    ]
    assert kinds(detect_conflicts(chunks, exception_request=False)) == [BENEFIT_DENIAL]


def test_benefit_rule_stays_quiet_without_a_shared_condition() -> None:
    other_condition = "No refund is given if you miss the launch."
    positive_polarity = "No refund is given if it does not rain."
    numeric = "If you cancel 60 days before departure you will receive a full refund."
    numeric_denial = "No refund is given if you cancel within 7 days of departure."
    cases = [
        [(Category.MARKETING, PROMISE), (Category.TERMS_POLICY, other_condition)],
        [(Category.MARKETING, PROMISE), (Category.TERMS_POLICY, positive_polarity)],
        [(Category.MARKETING, numeric), (Category.TERMS_POLICY, numeric_denial)],
        # Both policy tier, or both lower tier: not this rule.
        [(Category.STRUCTURED_POLICY, PROMISE), (Category.TERMS_POLICY, DENIAL)],
        [(Category.MARKETING, PROMISE), (Category.FAQ, DENIAL)],
    ]
    for pair in cases:
        chunks = [
            chunk(f"c{i}", category, text, rank=i + 1) for i, (category, text) in enumerate(pair)
        ]
        assert BENEFIT_DENIAL not in kinds(detect_conflicts(chunks, exception_request=False))
    same_doc = [
        chunk("a", Category.MARKETING, PROMISE, rank=1, doc="d", version="d-v1"),
        chunk("b", Category.TERMS_POLICY, DENIAL, rank=2, doc="d", version="d-v1"),
    ]
    assert detect_conflicts(same_doc, exception_request=False) == []
