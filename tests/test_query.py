"""E-mail thread cleaning and deterministic query generation (000 section 2, 002 item 1)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kb_retrieval.query.email_thread import extract_guest_text
from kb_retrieval.query.plan import QueryPlan, build_query_plan
from kb_retrieval.query.vocabulary import INTENTS

EXAMPLE_1 = (
    "Can we cancel 5 days before and still get a full refund? "
    "The brochure says 24-hour cancellation."
)
EXAMPLE_2 = "What time is check-in for the June 14 Patagonia departure?"
EXAMPLE_3 = "Do I need medical clearance for this altitude trip?"


def kinds(plan: QueryPlan) -> list[str]:
    return [variant.kind for variant in plan.variants]


def text_of(plan: QueryPlan, kind: str) -> str:
    return next(variant.text for variant in plan.variants if variant.kind == kind)


# --- worked examples of 000 section 8 ---------------------------------------------------------


def test_example_1_refund_policy_and_exact_terms() -> None:
    plan = build_query_plan(EXAMPLE_1)
    assert kinds(plan) == ["direct", "policy_expansion", "exact_term"]
    assert text_of(plan, "direct").startswith("cancel 5 days full refund")
    assert text_of(plan, "policy_expansion") == "cancellation refund window terms policy"
    exact = text_of(plan, "exact_term")
    assert '"24-hour cancellation"' in exact and "brochure" in exact
    assert plan.intents == ("cancel", "cancellation", "refund")
    assert plan.sensitivity == ("refund",)
    assert plan.policy_like and plan.quality_ok and not plan.exception_request


def test_example_2_trip_check_in() -> None:
    plan = build_query_plan(EXAMPLE_2)
    assert kinds(plan) == ["direct", "trip_specific", "exact_term"]
    direct = text_of(plan, "direct")
    for term in ("jun 14", "patagonia", "check in", "time"):
        assert term in direct
    assert text_of(plan, "trip_specific") == "patagonia jun 14 departure itinerary day 1 arrival"
    exact = text_of(plan, "exact_term")
    assert '"jun 14"' in exact and '"check-in"' in exact
    assert not plan.policy_like
    assert plan.intents == ("check_in",)
    assert plan.sensitivity == ()
    assert plan.dates == ("jun 14",)
    assert "patagonia" in plan.entities


def test_example_3_medical_altitude() -> None:
    plan = build_query_plan(EXAMPLE_3)
    assert kinds(plan) == ["direct", "policy_expansion", "trip_specific", "exact_term"]
    assert text_of(plan, "direct") == "medical clearance altitude trip"
    assert text_of(plan, "policy_expansion") == "safety medical requirement physician clearance"
    assert text_of(plan, "trip_specific") == "altitude itinerary medical requirement"
    assert text_of(plan, "exact_term") == '"medical clearance"'
    assert plan.sensitivity == ("medical",)
    assert plan.policy_like


# --- quality gate ----------------------------------------------------------------------------


@pytest.mark.parametrize("email", ["hey this is a test message", "Thanks!", "hello?", "", "ok"])
def test_gate_rejects_chit_chat(email: str) -> None:
    plan = build_query_plan(email)
    assert not plan.quality_ok
    assert plan.content_tokens == 0
    assert kinds(plan) == ["direct"]


def test_gate_accepts_domain_token_and_real_questions() -> None:
    refund = build_query_plan("refund?")
    assert refund.quality_ok and refund.content_tokens == 1
    assert kinds(refund) == ["direct", "policy_expansion"]
    check_in = build_query_plan(EXAMPLE_2)
    assert check_in.quality_ok and check_in.content_tokens >= 3
    assert build_query_plan("Booking PT-0614?").quality_ok  # a code is domain-like
    assert build_query_plan("June 14?").quality_ok  # a date is domain-like
    assert build_query_plan("Patagonia?", known_entities=["Patagonia"]).quality_ok
    assert not build_query_plan("Patagonia?").quality_ok


def test_gate_threshold_is_configurable() -> None:
    email = "Is lunch provided on the hike?"
    assert build_query_plan(email).quality_ok
    assert not build_query_plan(email, min_content_tokens=4).quality_ok


def test_gate_uses_thread_context_when_latest_message_is_thin() -> None:
    thread = {
        "subject": "Re: Refund for Patagonia",
        "messages": [
            {"role": "guest", "text": "I would like a refund for the Patagonia Trek."},
            {"role": "operator", "text": "We are checking with the team."},
            {"role": "guest", "text": "Any update?\n\nSent from my iPhone"},
        ],
    }
    plan = build_query_plan(thread, known_entities=["Patagonia Trek"])
    assert plan.quality_ok and plan.policy_like
    assert "refund" in plan.intents and plan.sensitivity == ("refund",)
    assert "patagonia trek" in text_of(plan, "trip_specific")


# --- variants ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "email",
    [EXAMPLE_1, EXAMPLE_2, EXAMPLE_3, "Is lunch provided on the hike?", "refund?", "luggage?"],
)
def test_variant_shape(email: str) -> None:
    plan = build_query_plan(email)
    assert 2 <= len(plan.variants) <= 4
    assert plan.variants[0].kind == "direct"
    assert len(set(kinds(plan))) == len(plan.variants)
    assert all(variant.text == variant.text.strip() and variant.text for variant in plan.variants)
    weights = {variant.kind: variant.weight for variant in plan.variants}
    assert weights["direct"] == 1.0 and all(0 < w <= 1 for w in weights.values())


def test_non_policy_question_gets_a_lexical_second_variant() -> None:
    plan = build_query_plan("Is lunch provided on the hike?")
    assert kinds(plan) == ["direct", "exact_term"]
    assert text_of(plan, "direct") == "lunch provided hike"
    assert '"lunch provided"' in text_of(plan, "exact_term")
    assert not plan.policy_like


def test_known_entities_trip_context_and_codes() -> None:
    plan = build_query_plan(
        'Hi, my booking PT-0614 is for the Tour du Mont Blanc. Is the "single supplement" extra?',
        known_entities=["tour du mont blanc", "Patagonia Trek"],
        trip_context={"trip_id": "tmb-2026-07-02", "trip_date": "2026-07-02"},
    )
    assert plan.entities[0] == "tour du mont blanc"
    assert plan.quoted_terms == ("single supplement",)
    trip = text_of(plan, "trip_specific")
    assert "tour du mont blanc" in trip and "jul 2 2026" in trip and "itinerary" in trip
    exact = text_of(plan, "exact_term")
    for item in ('"pt-0614"', '"tour du mont blanc"', '"single supplement"'):
        assert item in exact
    assert "pt-0614" in text_of(plan, "direct")


def test_trip_context_alone_makes_a_trip_variant() -> None:
    plan = build_query_plan(
        "Can I bring my own sleeping bag?",
        trip_context={"product_name": "Patagonia Trek", "trip_date": "2026-06-14"},
    )
    trip = text_of(plan, "trip_specific")
    assert trip.startswith("patagonia trek jun 14 2026 itinerary")
    assert "packing" in plan.intents


def test_no_trip_variant_without_trip_signal() -> None:
    assert "trip_specific" not in kinds(
        build_query_plan("Can we cancel the trip and get a refund?")
    )


@pytest.mark.parametrize(
    "email",
    [
        "Arriving June 14 for the trek",
        "Arriving 14 June for the trek",
        "Arriving 14th of June for the trek",
        "Arriving 6/14 for the trek",
        "Arriving 2026-06-14 for the trek",
    ],
)
def test_dates_are_canonical(email: str) -> None:
    plan = build_query_plan(email)
    assert plan.dates == ("jun 14",)
    assert "jun 14" in text_of(plan, "direct")
    assert "jun 14" in text_of(plan, "trip_specific")
    assert "june" not in plan.normalized_text


def test_year_is_kept_separately() -> None:
    plan = build_query_plan("Is the June 14, 2026 departure confirmed?")
    assert plan.dates == ("jun 14",)
    assert "jun 14 2026" in plan.normalized_text
    assert "2026" in text_of(plan, "trip_specific").split()


# --- sensitivity and exceptions ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("email", "expected"),
    [
        ("Can I get my deposit back if I cancel?", ("refund",)),
        ("My son injured his knee on the last trek, are helmets required?", ("safety",)),
        ("I am pregnant and take medication for asthma, can I join?", ("medical",)),
        ("My lawyer says your liability waiver is invalid.", ("legal",)),
        ("Is the trip still on with the storm forecast?", ("safety",)),
        ("What time does the bus leave?", ()),
    ],
)
def test_sensitivity_is_derived(email: str, expected: tuple[str, ...]) -> None:
    assert build_query_plan(email).sensitivity == expected


def test_caller_sensitivity_is_used_as_is_and_validated() -> None:
    plan = build_query_plan(EXAMPLE_1, sensitivity=["safety", "refund", "safety"])
    assert plan.sensitivity == ("refund", "safety")
    assert build_query_plan(EXAMPLE_1, sensitivity=[]).sensitivity == ()
    with pytest.raises(ValueError, match="'billing'"):
        build_query_plan(EXAMPLE_1, sensitivity=["refund", "billing"])
    with pytest.raises(ValueError):
        build_query_plan(EXAMPLE_1, sensitivity="refund")


@pytest.mark.parametrize(
    "email",
    [
        "Could you make an exception and refund the deposit?",
        "Would you waive the change fee this one time?",
        "This is a special case, my father passed away.",
        "I realise the booking deposit is non-refundable, but could it come back to us?",
        "Is there any way to get a refund?",
        "Even though the policy says 30 days, can we cancel?",
        "Would you consider a partial refund on compassionate grounds?",
        "I need a special medical waiver for my knee brace.",
    ],
)
def test_exception_requests(email: str) -> None:
    plan = build_query_plan(email)
    assert plan.exception_request
    assert "exceptions" in plan.sensitivity
    assert plan.policy_like
    assert "exception" in text_of(plan, "policy_expansion")


@pytest.mark.parametrize(
    "email",
    [
        "Is there any way to get to the start point by bus?",
        "What is your cancellation policy?",
        "Would you consider adding a vegetarian option to the menu?",
    ],
)
def test_not_exception_requests(email: str) -> None:
    assert not build_query_plan(email).exception_request


def test_policy_likeness() -> None:
    assert build_query_plan("Is lunch included in the price?").policy_like
    assert build_query_plan("What is the minimum age for rafting?").policy_like
    assert not build_query_plan("What is the weather like in June at the lodge?").policy_like
    assert set(build_query_plan(EXAMPLE_1).intents) <= set(INTENTS)


# --- e-mail thread cleaning -------------------------------------------------------------------


def test_string_email_is_stripped() -> None:
    email = (
        "Hi team,\n\nCan I still get a refund for my trek?\n\nBest regards,\nAnna Smith\n"
        "+44 20 7946 0958\n\nOn Mon, Jun 3, 2026 at 10:00 AM Alpine Treks <info@alpine.test>\n"
        "wrote:\n> Your balance is due.\n> Thanks"
    )
    guest = extract_guest_text(email)
    assert guest.latest == "Can I still get a refund for my trek?"
    assert guest.context == "" and guest.full == guest.latest


@pytest.mark.parametrize(
    ("email", "expected"),
    [
        ("Hello\nWhere do we meet?\n-- \nJohn\nwww.john.test", "Where do we meet?"),
        ("Hello, where do we meet?\n\nSent from my iPhone", "where do we meet?"),
        ("Where do we meet?\n-----Original Message-----\nFrom: ops\nold text", "Where do we meet?"),
        ("> quoted line\nWhere do we meet?\n> another", "Where do we meet?"),
        ("Dear Alpine Treks team,\nWhere do we meet?\nThanks,\nJo", "Where do we meet?"),
        ("Thanks!", "Thanks!"),
        ("Thanks, where do we meet?", "Thanks, where do we meet?"),
        # Sign-off name on the closing line, or after the last sentence of a one-line message.
        ("Where do we meet?\n\nBest, Alan", "Where do we meet?"),
        ("How much is the deposit? Kind regards, Peter Hall", "How much is the deposit?"),
        ("Can my son come with me? Ta, Jo", "Can my son come with me?"),
        ("Can you cater for vegans? x", "Can you cater for vegans?"),
        (
            "Best of all, the price includes meals. Is that right?",
            "Best of all, the price includes meals. Is that right?",
        ),
        # A dash after the greeting is not part of an addressee name.
        ("Hiya - we eat no dairy, is that doable?", "we eat no dairy, is that doable?"),
    ],
)
def test_message_cleaning(email: str, expected: str) -> None:
    assert extract_guest_text(email).latest == expected


def test_thread_latest_context_full() -> None:
    thread = {
        "subject": "RE: Fwd: Patagonia questions",
        "messages": [
            {"role": "guest", "text": "Hi, is the June trek full?"},
            {"role": "operator", "text": "Yes, the refund window is 7 days."},
            {"role": "guest", "text": "Do I need a visa?\n\nOn Tue, ops wrote:\n> Yes..."},
        ],
    }
    guest = extract_guest_text(thread)
    assert guest.latest == "Do I need a visa?"
    assert guest.subject == "Patagonia questions"
    assert guest.context.startswith("Patagonia questions")
    assert "is the June trek full?" in guest.context
    assert "refund window" not in guest.full  # operator text is not guest text
    assert guest.full.startswith(guest.latest)


def test_thread_validation() -> None:
    with pytest.raises(ValueError, match="'agent'"):
        extract_guest_text({"messages": [{"role": "agent", "text": "hi"}]})
    with pytest.raises(ValueError):
        extract_guest_text({"messages": [{"role": "guest"}]})
    assert extract_guest_text({"subject": "Hello", "messages": []}).latest == ""


# --- determinism ------------------------------------------------------------------------------


def test_known_entity_order_does_not_matter() -> None:
    names = ["Patagonia Trek", "Patagonia", "Inca Trail", "Torres del Paine"]
    first = build_query_plan(EXAMPLE_2, known_entities=names)
    assert first == build_query_plan(EXAMPLE_2, known_entities=list(reversed(names)))
    assert first.entities == ("jun 14", "patagonia")


@settings(max_examples=100, deadline=None)
@given(
    st.text(max_size=160),
    st.lists(st.sampled_from(["Patagonia", "Inca Trail", "tour du mont blanc", "PFD"]), max_size=3),
)
def test_build_query_plan_is_deterministic(text: str, entities: list[str]) -> None:
    plan = build_query_plan(text, known_entities=entities)
    assert plan == build_query_plan(text, known_entities=entities)
    assert plan.variants[0].kind == "direct"
    assert (2 <= len(plan.variants) <= 4) if plan.quality_ok else len(plan.variants) == 1
    assert plan.intents == tuple(sorted(plan.intents))
    assert plan.sensitivity == tuple(sorted(plan.sensitivity))
    assert set(plan.intents) <= set(INTENTS)


WORDS = st.sampled_from(
    [
        "refund",
        "cancel",
        "June",
        "14",
        "Patagonia",
        "trek",
        "the",
        "a",
        "please",
        "is",
        "there",
        "any",
        "way",
        "deposit",
        "helmet",
        "lawyer",
        "check-in",
        "24-hour",
        "PT-0614",
        "?",
        ".",
        ",",
        "Hi",
        "Thanks",
        "make",
        "an",
        "exception",
        "6/14",
        "medical",
    ]
)


@settings(max_examples=100, deadline=None)
@given(st.lists(WORDS, max_size=25))
def test_plans_from_domain_words_are_stable(words: list[str]) -> None:
    email = " ".join(words)
    plan = build_query_plan(email)
    assert plan == build_query_plan(email)
    if plan.exception_request:
        assert "exceptions" in plan.sensitivity and plan.policy_like


def test_same_trip_groups_departures_by_trip_name():
    from kb_retrieval.query.trips import same_trip, trip_entities

    june = "Patagonia Trek 7-Day Itinerary - 14 June 2026"
    assert "Patagonia Trek" in trip_entities([june])
    assert same_trip(june, "Patagonia Trek 7-Day Itinerary - Departure 8 November 2026")
    assert not same_trip(june, "Everest Base Camp Trek 2026")
    assert not same_trip(june, "Johnstone Strait Orca Expedition")


def test_gift_cards_are_a_payment_policy_question():
    plan = build_query_plan("My aunt gave us a gift voucher for a sea trip - is it still valid?")
    assert "payment" in plan.intents and plan.policy_like


def test_a_short_follow_up_in_a_thread_is_read_with_the_earlier_guest_messages():
    thread = {
        "subject": "Cancellation - TMB 29 Aug",
        "messages": [
            {
                "role": "guest",
                "text": "Our Mont Blanc circuit has to be called off. Cancel + refund?",
            },
            {"role": "operator", "text": "Sorry to hear that, I will check with bookings."},
            {"role": "guest", "text": "Cheers. So what amount comes back to us then?"},
        ],
    }
    plan = build_query_plan(thread)
    assert plan.policy_like and {"cancel", "refund"} <= set(plan.intents)
    assert "cancel" in plan.variants[0].text
    alone = build_query_plan(thread, follow_up_max_terms=0)
    assert not alone.policy_like, "without the rule the follow-up stands alone"
    named = {
        **thread,
        "messages": [
            *thread["messages"][:2],
            {"role": "guest", "text": "And what time does the Patagonia trek start on 8 Nov?"},
        ],
    }
    assert "cancel" not in build_query_plan(named).variants[0].text


def test_paying_a_deposit_to_hold_places_is_not_an_exception_request():
    assert not build_query_plan("What deposit secures a cabin for the two of us?").exception_request
    assert not build_query_plan("Can we pay by card instead of a bank transfer?").exception_request


@pytest.mark.parametrize(
    "text",
    [
        "Could we get an extension on the final payment? Payday is only at the end of the month.",
        "The balance was due on Monday and I completely forgot to pay - please keep our cabin.",
        "Can I sign an amended waiver without the clause about rough seas?",
        "Is it possible to strike out the liability clause in the release form?",
    ],
)
def test_paying_late_and_altering_legal_forms_are_exception_requests(text: str):
    assert build_query_plan(text).exception_request


@pytest.mark.parametrize(
    ("text", "is_age"),
    [
        ("Our daughter turns 15 in May - is she old enough for the glacier day?", True),
        ("My nephew is 11 - can he come along with us?", True),
        ("I am 67 and have asthma, is that a problem?", True),
        ("We are 10 days before departure, can we still cancel?", False),
        ("Is day 3 of the trek hard?", False),
    ],
)
def test_a_persons_age_is_an_age_question(text: str, is_age: bool):
    assert ("age" in build_query_plan(text).intents) is is_age


@pytest.mark.parametrize(
    "text",
    [
        "On arrival day, where shall I meet the others?",
        "What time should we meet the van on day one?",
    ],
)
def test_where_and_when_to_meet_are_pickup_logistics(text: str):
    assert "pickup" in build_query_plan(text).intents


@pytest.mark.parametrize(
    "text",
    [
        "Is there a loyalty reduction for people who have toured with you before?",
        "My sister is a student - is there a student discount on the canyon weekend?",
        "A friend mentioned a promo code for spring departures. Does it still work?",
        "Does the partner come along for free if we book the double room?",
        "Is 15% off still on for early bookings in January?",
    ],
)
def test_discounts_and_free_places_are_policy_like(text: str):
    plan = build_query_plan(text)
    assert plan.policy_like and "discount" in plan.intents
    assert "discount" in text_of(plan, "policy_expansion")


@pytest.mark.parametrize(
    "text",
    ["Is there free parking at the lodge?", "What does the farewell dinner cost per person?"],
)
def test_free_parking_and_plain_prices_are_not_discounts(text: str):
    assert "discount" not in build_query_plan(text).intents


@pytest.mark.parametrize(
    "text",
    [
        "When we reserved last spring the deposit was 20%. Can we stick to the terms we had at the "
        "time?",
        "Please honour the original rate you quoted us in March; the new price list is higher.",
        "Surely the old cancellation conditions still apply to a booking made before the change?",
    ],
)
def test_holding_the_operator_to_earlier_terms_is_an_exception_request(text: str):
    plan = build_query_plan(text)
    assert plan.exception_request and plan.policy_like


def test_asking_which_terms_are_current_is_not_an_exception_request():
    assert not build_query_plan("Where can I read your current booking terms?").exception_request


@pytest.mark.parametrize(
    "text",
    [
        "The brochure promised a welcome hamper in every room. Is that still the case in May?",
        "Your instagram says the photos from the glacier day are free for guests. Where are they?",
        "We chose the lodge because the spa access was as advertised - can you confirm it?",
    ],
)
def test_relying_on_what_marketing_said_is_policy_like(text: str):
    plan = build_query_plan(text)
    assert plan.policy_like and text_of(plan, "policy_expansion")


def test_reading_the_website_is_not_relying_on_a_promise():
    plan = build_query_plan("I was reading your website about the Dolomites hut week.")
    assert not plan.policy_like
