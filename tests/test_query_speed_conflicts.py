"""Issue 11 session 8: numeric conflict detection computes each comparison once per call.

`_numeric_conflicts` memoises what a document version states on a key, whether two versions'
value sets are disjoint and whether two chunks agree (`_PairChecks`). These tests pin the
rule's results on fresh examples and check the memoised path against the plain definition
(every comparison recomputed per pair, as the rule is stated in the module docstring).
"""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from kb_retrieval.models import Category
from kb_retrieval.retrieval.conflict_facts import disjoint, facts_of, value_labels
from kb_retrieval.retrieval.conflicts import (
    NUMERIC_WINDOW,
    POLICY_TERMS_DISAGREEMENT,
    Conflict,
    ConflictInput,
    _input_key,
    _numeric_conflicts,
    _pair_kind,
    detect_conflicts,
)

WINDOWS = (
    "Bookings cancelled within 10 calendar days of departure are not refunded.",
    "Cancelling 21 days or longer prior to departure: we refund the whole tour price.",
    "Cancellations made within 21 days of the trip start receive no refund.",
    "Refund schedule: 45 days or more before departure: full refund; 21-44 days: half the "
    "price; fewer than 21 days: nothing is refunded.",
    "Refund schedule: 45 days or more before departure: full refund; 10-44 days: half the "
    "price; under 10 days: no refund.",
    "You may cancel up to 3 weeks before the start date for a full refund.",
    "Free cancellation until 48 hours before your river tour.",
    "Remaining payment is owed 60 days prior to departure.",
    "Our office answers messages within 2 business days.",
    "Cancellations within 14 days of departure are not refunded.",
    "Cancellations within 15 days of departure are not refunded.",
    "Cancelling over 1 month prior to departure earns a full refund.",
    "Cancelling over 33 days prior to departure earns a full refund.",
)
CATEGORIES = (
    Category.STRUCTURED_POLICY,
    Category.TERMS_POLICY,
    Category.FAQ,
    Category.MARKETING,
    Category.TRIP_ITINERARY,
)


def make(
    chunk_id: str, category: Category, text: str, doc: str, version: str, rank: int
) -> ConflictInput:
    return ConflictInput(chunk_id, doc, version, category, text, None, rank)


def plain_numeric_conflicts(ordered: Sequence[ConflictInput]) -> list[Conflict]:
    """The rule with every comparison recomputed for every pair (the reference)."""
    facts = [facts_of(chunk.text) for chunk in ordered]

    def version_values(key: tuple[str, str, str], index: int) -> list:
        version = ordered[index].doc_version_id
        return [
            q
            for k, chunk in enumerate(ordered)
            if chunk.doc_version_id == version
            for q in facts[k].get(key, ())
        ]

    def reconciled(key: tuple[str, str, str], pair: tuple[int, int]) -> bool:
        best_tier = min(ordered[i].category.tier for i in pair)
        return any(
            k not in pair
            and ordered[k].category.tier <= best_tier
            and key in facts[k]
            and all(not disjoint(facts[k][key], facts[i][key]) for i in pair)
            for k in range(len(ordered))
        )

    groups: dict[tuple[str, tuple[str, str, str]], set[int]] = {}
    for i in range(len(ordered)):
        for j in range(i + 1, len(ordered)):
            for key in sorted(facts[i].keys() & facts[j].keys()):
                kind = _pair_kind(ordered[i], ordered[j], key[2])
                if (
                    kind is not None
                    and disjoint(version_values(key, i), version_values(key, j))
                    and not reconciled(key, (i, j))
                ):
                    groups.setdefault((kind, key), set()).update((i, j))
    out = []
    for (kind, key), members in groups.items():
        indexes = sorted(members)
        values = value_labels([q for i in indexes for q in facts[i][key]])
        ids = tuple(dict.fromkeys(ordered[i].chunk_id for i in indexes))
        out.append((kind, values, ids, key[2]))
    return out


def test_a_versions_values_span_its_chunks() -> None:
    """A version stating 10 and 21 days in two chunks agrees with another stating 21 days."""
    chunks = [
        make("a1", Category.TERMS_POLICY, WINDOWS[0], "terms", "terms-v2", 1),
        make("a2", Category.TERMS_POLICY, WINDOWS[1], "terms", "terms-v2", 2),
        make("b1", Category.STRUCTURED_POLICY, WINDOWS[2], "policy", "policy-v1", 3),
    ]
    assert detect_conflicts(chunks, exception_request=False) == []
    alone = [chunks[0], chunks[2]]
    [conflict] = detect_conflicts(alone, exception_request=False)
    assert conflict.kind == POLICY_TERMS_DISAGREEMENT
    assert conflict.values == ("10 days", "21 days")


def test_a_schedule_reconciles_only_when_at_least_as_authoritative() -> None:
    """Two FAQ answers quoting different lines of the policy's schedule are not a conflict; the
    same schedule in a brochure (a lower tier) does not reconcile them."""
    faq = [
        make("faq1", Category.FAQ, WINDOWS[1], "faq-a", "faq-a-v1", 1),
        make("faq2", Category.FAQ, WINDOWS[0], "faq-b", "faq-b-v1", 2),
    ]
    policy = make("sp", Category.STRUCTURED_POLICY, WINDOWS[4], "sched", "sched-v1", 3)
    brochure = make("mkt", Category.MARKETING, WINDOWS[4], "sched", "sched-v1", 3)
    found = detect_conflicts([*faq, policy], exception_request=False)
    assert all(set(c.chunk_ids) != {"faq1", "faq2"} for c in found), found
    [conflict] = detect_conflicts([*faq, brochure], exception_request=False)
    assert conflict.kind == NUMERIC_WINDOW
    assert conflict.chunk_ids == ("faq1", "faq2")


def test_near_copies_of_one_text_in_many_versions() -> None:
    """The same text in many versions (a large tenant's copies) is compared per version."""
    copies = [
        make(f"c{n}", Category.FAQ, WINDOWS[1], f"faq-{n}", f"faq-{n}-v1", n) for n in range(12)
    ]
    other = make("x", Category.FAQ, WINDOWS[6], "faq-x", "faq-x-v1", 12)
    assert detect_conflicts(copies, exception_request=False) == []
    [conflict] = detect_conflicts([*copies, other], exception_request=False)
    assert conflict.chunk_ids == (*(f"c{n}" for n in range(12)), "x")
    assert conflict.values == ("48 hours", "21 days")


def test_a_month_is_near_33_days_but_30_days_is_not() -> None:
    """Values are compared with their units: "1 month" (about 30 days) agrees with "33 days";
    "30 days" stated in days does not, although it is the same number of hours (the terms'
    "1 month" is below the two policies' tier, so it reconciles nothing)."""
    chunks = [
        make("b", Category.STRUCTURED_POLICY, WINDOWS[-1], "pol-b", "pol-b-v1", 1),
        make("a", Category.TERMS_POLICY, WINDOWS[-2], "terms", "terms-v1", 2),
        make("c", Category.STRUCTURED_POLICY, WINDOWS[-1].replace("33", "30"), "pol-c", "c1", 3),
    ]
    [conflict] = detect_conflicts(chunks, exception_request=False)
    assert conflict.kind == NUMERIC_WINDOW
    assert conflict.chunk_ids == ("b", "c")
    assert conflict.values == ("30 days", "33 days")


@st.composite
def pools(draw: st.DrawFn) -> list[ConflictInput]:
    size = draw(st.integers(min_value=0, max_value=14))
    chunks = []
    for n in range(size):
        doc = draw(st.integers(min_value=0, max_value=4))
        version = draw(st.integers(min_value=0, max_value=1))
        chunks.append(
            make(
                f"k{n}",
                draw(st.sampled_from(CATEGORIES)),
                draw(st.sampled_from(WINDOWS)),
                f"d{doc}",
                f"d{doc}-v{version}",
                n,
            )
        )
    return chunks


@settings(max_examples=300, deadline=None)
@given(pools())
def test_memoised_comparisons_equal_the_plain_rule(chunks: list[ConflictInput]) -> None:
    ordered = sorted(chunks, key=_input_key)
    got = [(c.kind, c.values, c.chunk_ids, c.topic) for c in _numeric_conflicts(ordered)]
    assert got == plain_numeric_conflicts(ordered)
