"""Golden cases for the alpine-treks tenant, written by hand from the source documents."""

from __future__ import annotations

from golden_helpers import ask, g, o, rel, thread, unknown

TENANT = "alpine-treks"
TERMS_V1 = "docv_2026_terms_v1"
PRICES_2027 = "docv_prices_2027_v1"
COASTAL_VERSIONS = [
    "docv_ck_policy_v3",
    "docv_ck_terms_2026_v1",
    "docv_ck_safety_v4",
    "docv_ck_johnstone_2026_v2",
    "docv_ck_website_2026",
]
REFUND_WINDOW = rel(
    "docv_policy_refund_v5", "within 7 calendar days of departure are non-refundable"
)
TERMS_7_DAYS = rel("docv_2026_terms_v2", "Refund eligibility changes at 7 days prior to departure.")
BROCHURE_24H = rel("docv_brochure_2026", "every 2026 departure comes with 24-hour cancellation")
BROCHURE_FULL = rel(
    "docv_brochure_2026", "Cancel up to 24 hours before departure and we will refund you in full"
)
CHARGES_8_29 = rel(
    "docv_policy_refund_v5",
    "cancellations made 8 to 29 days before departure are charged 75% of the trip price",
)
JUN14_CHECKIN = rel("docv_patagonia_jun14_v1", "Day 1 check-in opens at 06:00 local time")
NOV08_CHECKIN = rel(
    "docv_patagonia_nov08_v1",
    "Day 1 check-in opens at 14:00 at the reception of Hotel Costaustralis",
)
CLEARANCE = rel("docv_medical_policy_v2", "must provide a signed physician clearance form")
CARDIAC = rel(
    "docv_medical_policy_v2",
    "Participants with cardiovascular conditions may need physician clearance",
)
MIN_AGE = rel("docv_2026_terms_v2", "minimum age on all Alpine Treks departures is 16 years")
CONFLICT = {"conflicting_evidence": True}
STALE = {"stale_only_evidence": True}
REFUND_CONFLICT = ["CONFLICT_DETECTED", "SENSITIVE_TOPIC"]
STALE_SENSITIVE = ["STALE_ONLY_EVIDENCE", "SENSITIVE_TOPIC"]
EXCEPTION = ["EXCEPTION_REQUEST", "SENSITIVE_TOPIC"]

CASES = [
    # ---- OK_TO_DRAFT -------------------------------------------------------------------------
    o(
        "at-jun14-checkin",
        TENANT,
        "What time is check-in for the June 14 Patagonia departure?",
        [
            JUN14_CHECKIN,
            rel(
                "docv_patagonia_jun14_v1",
                "you must arrive in Puerto Natales the day before the trip starts",
            ),
        ],
        flags={
            "conflicting_evidence": False,
            "stale_only_evidence": False,
            "low_confidence": False,
        },
    ),
    o(
        "at-jun14-checkin-thread",
        TENANT,
        thread(
            "Patagonia 14 June - first morning",
            (
                "guest",
                "Hi there,\n\nWe're booked on the Patagonia W Trek starting 14 June (booking "
                "AT-55102, two people). What time do we have to be at the hotel on the first "
                "morning and which hotel is it exactly?\n\nCheers,\nSarah Whitfield",
            ),
            (
                "operator",
                "Hi Sarah,\n\nThanks for getting in touch! Let me double-check the details with "
                "our Patagonia team and I'll come back to you today.\n\nBest,\nLena\nAlpine Treks",
            ),
            (
                "guest",
                "Thanks Lena. Also - I've heard the first day starts super early in winter, "
                "is that right? Just want to plan our flights.\n\n> Let me double-check the "
                "details with our Patagonia team\n\nSarah",
            ),
        ),
        [
            JUN14_CHECKIN,
            rel(
                "docv_patagonia_jun14_v1",
                "come to the lobby of Hotel Vendaval, Avenida Pedro Montt 62, Puerto Natales",
            ),
        ],
        trip={
            "trip_id": "patagonia-2026-06-14",
            "trip_date": "2026-06-14",
            "product_name": "Patagonia Trek",
        },
    ),
    o(
        "at-nov08-checkin-context",
        TENANT,
        "Hello! What time can we check in on the first day? Thanks, Priya",
        [NOV08_CHECKIN],
        trip={
            "trip_id": "patagonia-2026-11-08",
            "trip_date": "2026-11-08",
            "product_name": "Patagonia Trek",
        },
    ),
    o(
        "at-nov08-airport-transfer",
        TENANT,
        "Hi, our flight from Santiago lands in Puerto Natales around 12:10 on 8 Nov for the "
        "Patagonia trek. Is there a transfer from the airport to the hotel or should we grab "
        "a taxi? Thx, Mark",
        [
            rel(
                "docv_patagonia_nov08_v1",
                "shared arrival transfer meets the Santiago flight at Puerto Natales airport",
            ),
            rel(
                "docv_patagonia_nov08_v1",
                "This transfer is free but must be requested at least 14 days before departure.",
            ),
        ],
    ),
    o(
        "at-deposit",
        TENANT,
        "Good morning, how much deposit do I need to pay to secure 2 places on the Tour du "
        "Mont Blanc in August? Kind regards, Peter Hall",
        [
            rel(
                "docv_policy_refund_v5",
                "A deposit of 25% of the trip price is required to confirm a booking.",
            ),
            rel(
                "docv_2026_terms_v2",
                "you must pay a deposit of 25% of the trip price for each person",
            ),
        ],
        must_not_cite=[TERMS_V1],
        flags={"conflicting_evidence": False},
    ),
    o(
        "at-balance-due-old-terms",
        TENANT,
        thread(
            "Balance payment",
            (
                "guest",
                "Hello,\n\nI read in your booking conditions that the balance is due 45 days "
                "before departure. Our Everest Base Camp trek leaves on 10 April 2027 - can you "
                "confirm the exact date I need to pay by?\n\nMany thanks,\nGraham Oduya",
            ),
        ),
        [
            rel("docv_policy_refund_v5", "The balance is due 60 days before departure."),
            rel(
                "docv_2026_terms_v2",
                "The balance of the trip price is due no later than 60 days before departure.",
            ),
        ],
        must_not_cite=[TERMS_V1],
    ),
    o(
        "at-min-age-17",
        TENANT,
        "My son will be 17 in July, can he come on the Tour du Mont Blanc with me? Ta, Jo",
        [
            MIN_AGE,
            rel(
                "docv_2026_terms_v2",
                "Travellers aged 16 or 17 must be accompanied by a parent or legal guardian",
            ),
        ],
        must_not_cite=[TERMS_V1],
    ),
    o(
        "at-insurance-required",
        TENANT,
        "Is travel insurance actually mandatory for the Patagonia trip? My credit card comes "
        "with some travel cover already, I'm not sure it includes rescue though.",
        [
            rel(
                "docv_2026_terms_v2",
                "Travel insurance is a condition of joining any Alpine Treks departure.",
            ),
            rel("docv_2026_terms_v2", "with a limit of at least USD 200,000 for these costs"),
            rel(
                "docv_guest_faq_v9",
                "You cannot join a trek without travel insurance that includes emergency rescue",
            ),
        ],
    ),
    o(
        "at-transfer-departure",
        TENANT,
        "Hi Alpine Treks team, can I move my Tour du Mont Blanc booking (departing 29 August) "
        "to a later date? It's still about ten weeks away. Thanks! Emma",
        [
            rel(
                "docv_policy_refund_v5",
                "One free transfer to another departure of the same trip is allowed",
            ),
            rel(
                "docv_2026_terms_v2",
                "The new departure must take place within 12 months of the original departure date.",
            ),
        ],
    ),
    o(
        "at-card-surcharge",
        TENANT,
        "do you charge extra for paying the balance by mastercard?",
        [
            rel(
                "docv_2026_terms_v2",
                "Card payments carry a surcharge of 1.8% of the amount charged",
            )
        ],
        must_not_cite=[TERMS_V1],
    ),
    o(
        "at-price-patagonia",
        TENANT,
        "How much does the Patagonia W trek cost per person? And what's the single supplement "
        "if I want my own room? Thanks, Carla",
        [rel("docv_prices_2026_v4", "USD 3,450 per person sharing. Single supplement USD 620")],
        must_not_cite=[PRICES_2027],
    ),
    o(
        "at-park-fees-included",
        TENANT,
        "Are the national park fees included in the Patagonia price or do we pay at the gate?",
        [
            rel(
                "docv_prices_2026_v4",
                "national park entrance fees and all transport during the trek",
            ),
        ],
        must_not_cite=[PRICES_2027],
    ),
    o(
        "at-vegan",
        TENANT,
        "Hiya - I'm vegan, can you cater for that on the Alps trek? x",
        [
            rel(
                "docv_guest_faq_v9",
                "Vegetarian, vegan and gluten-free diets can be catered for on every trek",
            )
        ],
    ),
    o(
        "at-sleeping-bag-w-trek",
        TENANT,
        "Do I need to bring a sleeping bag for the W trek or do the refugios have bedding?",
        [
            rel(
                "docv_packing_2026_v3",
                "Refugios and huts in Patagonia and the Alps provide bedding",
            )
        ],
    ),
    o(
        "at-luggage-weight-ebc",
        TENANT,
        "Whats the luggage limit for Everest base camp?? trying to work out what to pack",
        [
            rel(
                "docv_packing_2026_v3",
                "Maximum weight of main luggage: 15 kg on Himalaya departures",
            ),
            rel(
                "docv_ebc_2026_v1",
                "The baggage allowance on the Lukla flight is 15 kg in total per person",
            ),
        ],
    ),
    o(
        "at-ebc-lukla-minibus",
        TENANT,
        "For the Everest Base Camp trek, what time does the minibus leave for the Lukla flight "
        "on day 2? And is it true the flight sometimes goes from a different airport?",
        [
            rel("docv_ebc_2026_v1", "The hotel minibus leaves at 05:00 for the domestic terminal."),
            rel(
                "docv_ebc_2026_v1",
                "flights to Lukla may operate from Ramechhap airport instead of Kathmandu",
            ),
        ],
        reasons=["STALE_ONLY_EVIDENCE"],
        flags=STALE,
    ),
    o(
        "at-ebc-which-day-base-camp",
        TENANT,
        "Quick question about the EBC itinerary: on which day do we actually get to base camp, "
        "and do we sleep there?",
        [
            rel(
                "docv_ebc_2026_v1",
                "continue to Everest Base Camp (5,364 m) at the foot of the Khumbu Icefall",
            ),
            rel("docv_ebc_2026_v1", "Return to Gorak Shep for the night."),
        ],
        reasons=["STALE_ONLY_EVIDENCE"],
        flags=STALE,
    ),
    o(
        "at-tmb-checkin-faq",
        TENANT,
        "What time is check-in on day 1 of the Tour du Mont Blanc?",
        [
            rel(
                "docv_guest_faq_v9",
                "Typical check-in is 08:00 on Day 1 at the start hotel",
            )
        ],
    ),
    o(
        "at-drone",
        TENANT,
        "Can I bring my DJI drone to film Torres del Paine? It's small, under 250g.",
        [rel("docv_packing_2026_v3", "Drones are not permitted in Torres del Paine National Park")],
    ),
    o(
        "at-guide-ratio-himalaya",
        TENANT,
        "What's the guide to trekker ratio on your Himalaya trips?",
        [
            rel(
                "docv_ops_manual_2026_v2",
                "one lead guide plus one assistant guide for every 4 guests",
            )
        ],
    ),
    o(
        "at-complaint",
        TENANT,
        thread(
            "Formal complaint - TMB 18 July",
            (
                "guest",
                "Dear Sir or Madam,\n\nWe returned from the Tour du Mont Blanc two weeks ago. "
                "Two of the huts had no record of our booking and we had to sleep in the "
                "dormitory annex. I would like to make a formal complaint. How do I do that and "
                "how long will it take you to respond?\n\nYours faithfully,\nDr. R. Lindqvist\n"
                "--\nSent from my iPad",
            ),
        ),
        [
            rel(
                "docv_2026_terms_v2",
                "send a written complaint to feedback@alpinetreks.example within 28 days",
            ),
            rel("docv_2026_terms_v2", "send you a full response within 14 days"),
        ],
    ),
    # ---- NEEDS_REVIEW: refund window conflict (brochure vs policy) ----------------------------
    g(
        "refund-5-days",
        TENANT,
        "Can we cancel 5 days before and still get a full refund? The brochure says 24-hour "
        "cancellation.",
        "NEEDS_REVIEW",
        [REFUND_WINDOW, TERMS_7_DAYS, BROCHURE_24H],
        reasons=REFUND_CONFLICT,
        trip={
            "trip_id": "patagonia-2026-06-14",
            "trip_date": "2026-06-14",
            "product_name": "Patagonia Trek",
        },
        sensitivity=["refund"],
        must_not_cite=[TERMS_V1],
        flags=CONFLICT,
    ),
    g(
        "at-refund-10-days-thread",
        TENANT,
        thread(
            "Cancellation - TMB 29 Aug, ref AT-58213",
            (
                "guest",
                "Hello,\n\nUnfortunately my husband broke his ankle on Saturday and we need to "
                "cancel our Tour du Mont Blanc booking (departing 29 August, booking ref "
                "AT-58213). We are 10 days before departure. Your brochure promised 24-hour "
                "cancellation with a full refund, so I assume we will get our money back?\n\n"
                "Regards,\nHelen Barker",
            ),
            (
                "operator",
                "Dear Helen,\n\nI'm so sorry to hear about the accident. Let me check with our "
                "bookings team and come back to you.\n\nKind regards,\nMarco\nAlpine Treks",
            ),
            (
                "guest",
                "Thanks Marco. Just to confirm - how much will we get back, and when?\n\n"
                "On 19 Aug, Marco wrote:\n> Let me check with our bookings team and come back "
                "to you.",
            ),
        ),
        "NEEDS_REVIEW",
        [CHARGES_8_29, BROCHURE_FULL],
        reasons=REFUND_CONFLICT,
        sensitivity=["refund"],
        must_not_cite=[TERMS_V1],
        flags=CONFLICT,
    ),
    g(
        "at-24h-true",
        TENANT,
        "quick q - is it true you do free cancellation up to 24hrs before departure?? saw it "
        "in the brochure",
        "NEEDS_REVIEW",
        [BROCHURE_FULL, REFUND_WINDOW],
        reasons=REFUND_CONFLICT,
        must_not_cite=[TERMS_V1],
        flags=CONFLICT,
    ),
    g(
        "at-cancel-latest",
        TENANT,
        "What's the latest I can cancel my Everest Base Camp trek and still get some money back?",
        "NEEDS_REVIEW",
        [CHARGES_8_29, REFUND_WINDOW, BROCHURE_24H],
        reasons=REFUND_CONFLICT,
        must_not_cite=[TERMS_V1],
        flags=CONFLICT,
    ),
    g(
        "at-old-terms-14-days",
        TENANT,
        "Hi,\n\nYour Terms and Conditions that I downloaded in January say that if we cancel "
        "within 14 calendar days we lose everything. We leave for Patagonia on 8 November and "
        "today is 26 October, so that's 13 days. Is there really no refund at all?\n\n"
        "Thanks for your help,\nAnnika & Jens",
        "NEEDS_REVIEW",
        [CHARGES_8_29, TERMS_7_DAYS],
        reasons=REFUND_CONFLICT,
        must_not_cite=[TERMS_V1],
    ),
    g(
        "at-refund-brochure-long-thread",
        TENANT,
        thread(
            "Re: Re: Cancelling Patagonia",
            (
                "guest",
                "Hi,\n\nI booked the November Patagonia trek after reading your 2026 brochure, "
                "which says very clearly 'Cancel up to 24 hours before departure and we will "
                "refund you in full, no questions asked'. My work situation has changed and I now "
                "have to cancel, four days before departure.\n\nPlease confirm the refund.\n\n"
                "Mike Donnelly",
            ),
            (
                "operator",
                "Hi Mike,\n\nThanks for letting us know, and sorry your plans have changed. I have "
                "passed this to our bookings team, who handle all cancellations.\n\nBest "
                "wishes,\nLena",
            ),
            (
                "guest",
                "Lena, it's been two days. I was told 24 hours, full refund. I have the brochure "
                "in front of me, page 7. I expect the full amount back on my card this week or I "
                "will raise a chargeback.\n\nMike\n\n-----Original Message-----\nFrom: Lena\n"
                "Subject: Re: Cancelling Patagonia\n> I have passed this to our bookings team",
            ),
        ),
        "NEEDS_REVIEW",
        [REFUND_WINDOW, TERMS_7_DAYS, BROCHURE_FULL],
        reasons=REFUND_CONFLICT,
        sensitivity=["refund"],
        must_not_cite=[TERMS_V1],
        flags=CONFLICT,
    ),
    # ---- NEEDS_REVIEW: medical, stale-only evidence ------------------------------------------
    g(
        "at-medical-clearance",
        TENANT,
        "Do I need medical clearance for this altitude trip?",
        "NEEDS_REVIEW",
        [CLEARANCE, CARDIAC],
        reasons=STALE_SENSITIVE,
        sensitivity=["medical"],
        flags=STALE,
    ),
    g(
        "at-stent-ebc",
        TENANT,
        "Hi, I had a coronary stent put in last March (so about 8 months ago). I'm fit and walk "
        "a lot. Would I be able to join your Everest Base Camp trek next April?\n\nBest, Alan",
        "NEEDS_REVIEW",
        [
            rel(
                "docv_medical_policy_v2",
                "a coronary stent or heart surgery within the past 12 months",
            ),
            CARDIAC,
        ],
        reasons=STALE_SENSITIVE,
        flags=STALE,
    ),
    g(
        "at-asthma",
        TENANT,
        "I have mild asthma, controlled with an inhaler. Is that a problem for the Patagonia trek?",
        "NEEDS_REVIEW",
        [
            rel(
                "docv_medical_policy_v2",
                "welcome on all of our treks provided their asthma is well controlled",
            )
        ],
        reasons=STALE_SENSITIVE,
        flags=STALE,
    ),
    g(
        "at-pregnancy",
        TENANT,
        "Hello, my wife will be about 16 weeks pregnant on our TMB departure in July. Can she "
        "still come? She walks every day. Thanks, Luca",
        "NEEDS_REVIEW",
        [
            rel(
                "docv_medical_policy_v2",
                "pregnant guests need medical clearance and must tell us how many weeks pregnant",
            )
        ],
        reasons=STALE_SENSITIVE,
        sensitivity=["medical"],
        flags=STALE,
    ),
    g(
        "at-medical-form-deadline",
        TENANT,
        "When do you need my medical disclosure form back by? Departing on the EBC trek in April.",
        "NEEDS_REVIEW",
        [rel("docv_medical_policy_v2", "must be returned no later than 45 days before departure")],
        reasons=STALE_SENSITIVE,
        flags=STALE,
    ),
    g(
        "at-over-65",
        TENANT,
        "Good afternoon. I am 68 and very active (I did the Camino last year). Do I need "
        "anything from my doctor before the Patagonia trip?\n\nKind regards,\nMargaret Shaw",
        "NEEDS_REVIEW",
        [
            rel(
                "docv_medical_policy_v2",
                "Guests aged 65 or over need medical clearance for every departure",
            )
        ],
        reasons=STALE_SENSITIVE,
        sensitivity=["medical"],
        flags=STALE,
    ),
    g(
        "at-diabetes-insulin",
        TENANT,
        "Type 1 diabetic here - how do I keep my insulin from freezing on the EBC trek, and "
        "can the porters carry my supplies?",
        "NEEDS_REVIEW",
        [
            rel(
                "docv_medical_policy_v2",
                "Insulin must be protected from freezing in cold weather and kept in your daypack",
            )
        ],
        reasons=STALE_SENSITIVE,
        flags=STALE,
    ),
    g(
        "at-blood-pressure",
        TENANT,
        "I take medication for high blood pressure - do I need a doctor's letter for the Tour "
        "du Mont Blanc?",
        "NEEDS_REVIEW",
        [CARDIAC, rel("docv_medical_policy_v2", "high blood pressure that requires medication")],
        reasons=STALE_SENSITIVE,
        sensitivity=["medical"],
        flags=STALE,
    ),
    # ---- NEEDS_REVIEW: exception requests -----------------------------------------------------
    g(
        "at-exception-age-15",
        TENANT,
        "Hi! My daughter turns 16 two weeks after the Patagonia departure in November. She's a "
        "very strong hiker and has done loads of multi-day hikes with us. Could you make an "
        "exception and let her join?\n\nThanks so much,\nRuth",
        "NEEDS_REVIEW",
        [MIN_AGE],
        reasons=EXCEPTION,
        sensitivity=["exceptions"],
        must_not_cite=[TERMS_V1],
    ),
    g(
        "at-exception-transfer-fee",
        TENANT,
        "Could you waive the USD 150 fee for switching from the TMB to the Patagonia trek? "
        "We've travelled with you three times already.",
        "NEEDS_REVIEW",
        [
            rel("docv_policy_refund_v5", "Transfers to a different trip cost USD 150 per person."),
            rel("docv_2026_terms_v2", "charged an administration fee of USD 150 per person"),
        ],
        reasons=EXCEPTION,
        must_not_cite=[TERMS_V1],
    ),
    g(
        "at-exception-bereavement",
        TENANT,
        thread(
            "Booking AT-60114 - Everest Base Camp",
            (
                "guest",
                "Dear Alpine Treks team,\n\nMy father passed away on Sunday and the funeral is "
                "next week, which means I can't travel on our EBC departure in 5 days. I know "
                "your policy says no refunds within 7 days, but given the circumstances is there "
                "any way you could make an exception and refund at least part of what we paid?"
                "\n\nWith thanks,\nDaniel Reyes",
            ),
        ),
        "NEEDS_REVIEW",
        [REFUND_WINDOW, TERMS_7_DAYS],
        reasons=EXCEPTION,
        sensitivity=["refund", "exceptions"],
        must_not_cite=[TERMS_V1],
    ),
    g(
        "at-exception-late-balance",
        TENANT,
        "Hello - we're about a week late with the balance for the November Patagonia trip "
        "(sorry, new job chaos). Can you please hold our two places and not cancel the "
        "booking? I can pay on Friday.\nBest, Tomasz",
        "NEEDS_REVIEW",
        [
            rel("docv_2026_terms_v2", "we may treat the booking as cancelled by you"),
            rel("docv_policy_refund_v5", "The balance is due 60 days before departure."),
        ],
        reasons=EXCEPTION,
        must_not_cite=[TERMS_V1],
    ),
    g(
        "at-exception-insurance",
        TENANT,
        "My travel insurance doesn't cover helicopter rescue. Can I sign a disclaimer instead "
        "and still start the trek? I'm very experienced.",
        "NEEDS_REVIEW",
        [
            rel(
                "docv_2026_terms_v2",
                "you will not be able to start the trek and no refund will be made",
            ),
            rel(
                "docv_2026_terms_v2",
                "Travel insurance is a condition of joining any Alpine Treks departure.",
            ),
        ],
        reasons=EXCEPTION,
        sensitivity=["exceptions", "safety"],
    ),
    # ---- NEEDS_REVIEW: missing precedence / marketing only / low confidence -------------------
    g(
        "at-gift-voucher",
        TENANT,
        "My sister gave me an Alpine Treks gift voucher in summer 2024. Is it still valid, and "
        "can I use it to pay towards the Patagonia trek?",
        "NEEDS_REVIEW",
        [
            rel(
                "docv_brochure_2026",
                "Gift vouchers are valid for 24 months from the date of purchase",
            )
        ],
        reasons=["MARKETING_ONLY_EVIDENCE", "MISSING_REQUIRED_PRECEDENCE"],
    ),
    g(
        "at-walk-alone",
        TENANT,
        "Could I skip the group on one day and hike up to the towers on my own at my own pace? "
        "I'm an experienced solo hiker.",
        "NEEDS_REVIEW",
        [
            rel(
                "docv_guest_faq_v9",
                "every guest must stay with the group and the guide on all trail days",
            ),
            rel("docv_ops_manual_2026_v2", "Guests are never left alone on the trail."),
        ],
        reasons=["MISSING_REQUIRED_PRECEDENCE", "SENSITIVE_TOPIC"],
        sensitivity=["safety"],
    ),
    g(
        "at-lowconf-heated-refugios",
        TENANT,
        "Are the refugios in Torres del Paine heated at night? I get cold really easily.",
        "NEEDS_REVIEW",
        [rel("docv_patagonia_jun14_v1", "where winter guests stay in heated cabins")],
        reasons=["LOW_CONFIDENCE"],
    ),
    g(
        "at-lowconf-snacks-beer",
        TENANT,
        "Do the refugios on the W sell snacks and beer, or should we bring our own?",
        "NEEDS_REVIEW",
        [rel("docv_guest_faq_v9", "Allow about USD 30 per day for drinks, snacks and souvenirs")],
        reasons=["LOW_CONFIDENCE"],
    ),
    # ---- UNKNOWN ----------------------------------------------------------------------------
    unknown("at-kilimanjaro", TENANT, "Do you run any treks on Kilimanjaro in 2027?"),
    unknown(
        "at-other-tenant-pfd",
        TENANT,
        "Hi, for the kayaking day do you provide PFDs in kids' sizes, or should we bring our own?",
        must_not_cite=COASTAL_VERSIONS,
        sensitive=True,
    ),
    unknown(
        "at-other-tenant-orca",
        TENANT,
        "Do you offer the Johnstone Strait orca kayak expedition? We're looking at 5 days in "
        "August. Cheers, Ben",
        must_not_cite=COASTAL_VERSIONS,
    ),
    unknown(
        "at-park-fee-amount",
        TENANT,
        "What exactly is the new Torres del Paine entrance fee for foreigners from October "
        "2026? Our accountant needs the CLP amount.",
        must_not_cite=["docv_park_fee_notice_2026"],
    ),
    unknown(
        "at-wifi-refugios",
        TENANT,
        "Is there wifi at the refugios on the W trek? I need to check work emails once a day.",
    ),
    unknown(
        "at-financial-protection",
        TENANT,
        "Is my money protected if Alpine Treks goes bust before my trip? Are you bonded or part "
        "of any guarantee scheme?",
        sensitive=True,
        sensitivity=["legal"],
    ),
    # ---- ASK_CLARIFYING_QUESTION ---------------------------------------------------------------
    ask("at-chitchat-hi", TENANT, "hi!"),
    ask("at-chitchat-thanks", TENANT, "Great, thanks!"),
    ask("at-chitchat-test", TENANT, "test"),
    ask(
        "at-ambiguous-checkin",
        TENANT,
        "What time is check-in for the Patagonia trek?",
        [JUN14_CHECKIN, NOV08_CHECKIN],
    ),
    ask(
        "at-ambiguous-meeting-hotel",
        TENANT,
        "Hello, where exactly do we meet on the first day of the Patagonia W Trek? Which hotel? "
        "Thanks, Tom",
        [
            rel(
                "docv_patagonia_jun14_v1",
                "come to the lobby of Hotel Vendaval, Avenida Pedro Montt 62, Puerto Natales",
            ),
            rel(
                "docv_patagonia_nov08_v1",
                "at the reception of Hotel Costaustralis, Avenida Pedro Montt 262, Puerto Natales",
            ),
        ],
    ),
    ask(
        "at-ambiguous-airport",
        TENANT,
        "Which airport should I fly into for the Patagonia trek - Punta Arenas or Puerto Natales?",
        [
            rel(
                "docv_patagonia_jun14_v1",
                "There are no scheduled winter flights into Puerto Natales in June",
            ),
            rel(
                "docv_patagonia_nov08_v1",
                "The easiest way to reach the start is to fly into Puerto Natales",
            ),
        ],
    ),
    ask(
        "at-ambiguous-last-day",
        TENANT,
        "What time does the Patagonia trek finish on the last day? I need to book my flight home.",
        [
            rel(
                "docv_patagonia_jun14_v1",
                "A shared departure transfer leaves the hotel at 09:00 for Punta Arenas airport",
            ),
            rel(
                "docv_patagonia_nov08_v1",
                "A free shared transfer leaves the hotel at 10:15 for Puerto Natales airport",
            ),
        ],
    ),
    # ---- Threads whose latest guest message is a short follow-up -------------------------------
    o(
        "at-thread-jun14-airport-transfer",
        TENANT,
        thread(
            "June Patagonia - getting there",
            (
                "guest",
                "Hello,\n\nWe're joining the Patagonia W Trek on 14 June (booking AT-57710). "
                "We'll be coming down from Santiago - which airport should we fly into?\n\n"
                "Thanks,\nTom & Aisha",
            ),
            (
                "operator",
                "Hi Tom,\n\nFor the June departure please fly into Punta Arenas (PUQ): there are no "
                "scheduled winter flights into Puerto Natales. Because check-in is very early on "
                "Day 1, please plan to arrive the day before - the night of 13 June at Hotel "
                "Vendaval is included.\n\nBest,\nLena\nAlpine Treks",
            ),
            (
                "guest",
                "Thanks Lena! Is there a transfer from the airport to the hotel or do we sort "
                "that ourselves? And how much is it?\n\nTom\n\nOn 2 Apr, Lena wrote:\n> For the "
                "June departure please fly into Punta Arenas (PUQ)",
            ),
        ),
        [
            rel(
                "docv_patagonia_jun14_v1",
                "shared arrival transfer leaves the arrivals hall of Punta Arenas airport at 15:30",
            ),
            rel("docv_patagonia_jun14_v1", "The transfer costs USD 60 per person"),
            rel("docv_patagonia_jun14_v1", "must be booked at least 21 days before departure"),
        ],
        trip={
            "trip_id": "patagonia-2026-06-14",
            "trip_date": "2026-06-14",
            "product_name": "Patagonia Trek",
        },
    ),
    o(
        "at-thread-balance-and-card",
        TENANT,
        thread(
            "Booking 2 places - TMB 1 August",
            (
                "guest",
                "Good morning,\n\nMy wife and I would like to book two places on the Tour du Mont "
                "Blanc departing 1 August. How much deposit do we need to pay to hold the "
                "places?\n\nKind regards,\nPeter Novak",
            ),
            (
                "operator",
                "Dear Peter,\n\nLovely to hear from you! The deposit is 25% of the trip price per "
                "person, and your places are confirmed as soon as we receive it. I'll send the "
                "booking link separately.\n\nBest wishes,\nMarco\nAlpine Treks",
            ),
            (
                "guest",
                "Thanks Marco, deposit paid. When is the rest due? And is ther a fee if I pay it "
                "by Mastercard?\n\n> The deposit is 25% of the trip price per person\n\nPeter",
            ),
        ),
        [
            rel("docv_policy_refund_v5", "The balance is due 60 days before departure."),
            rel(
                "docv_2026_terms_v2",
                "The balance of the trip price is due no later than 60 days before departure.",
            ),
            rel(
                "docv_2026_terms_v2",
                "Card payments carry a surcharge of 1.8% of the amount charged",
            ),
        ],
        must_not_cite=[TERMS_V1],
        flags={"conflicting_evidence": False},
    ),
    o(
        "at-thread-min-age-ebc",
        TENANT,
        thread(
            "Travelling with my son",
            (
                "guest",
                "Hi there,\n\nMy son turns 17 in May. Can he join me on the Tour du Mont Blanc this "
                "summer?\n\nCheers,\nJo",
            ),
            (
                "operator",
                "Hi Jo,\n\nYes, absolutely - travellers aged 16 or 17 are very welcome as long as "
                "they travel with a parent or legal guardian booked on the same departure.\n\n"
                "Kind regards,\nLena",
            ),
            (
                "guest",
                "Brilliant, thank you! Is that the same for Everest Base Camp? We were thinking "
                "of doing it together in October, he'd still be 17 then.\n\nJo\nSent from my "
                "iPhone",
            ),
        ),
        [
            rel(
                "docv_2026_terms_v2",
                "The minimum age for Everest Base Camp and other Himalaya departures is 18 years.",
            ),
            rel("docv_guest_faq_v9", "For Everest Base Camp the minimum age is 18."),
        ],
        must_not_cite=[TERMS_V1],
    ),
    g(
        "at-thread-refund-amount-nov08",
        TENANT,
        thread(
            "Re: Cancellation - Patagonia 8 Nov (AT-59340)",
            (
                "guest",
                "Hi,\n\nSadly I have to cancel my place on the Patagonia trek departing 8 "
                "November (booking AT-59340, one person) - my mother is going into hospital and "
                "I need to be here. Your brochure says you refund in full up to 24 hours before "
                "departure, so I hope this is straightforward. Today is 28 September.\n\n"
                "Best,\nAnnika Berg",
            ),
            (
                "operator",
                "Dear Annika,\n\nI'm very sorry to hear about your mother. I have passed your "
                "cancellation to our bookings team, who will confirm it in writing.\n\nKind "
                "regards,\nLena\nAlpine Treks",
            ),
            (
                "guest",
                "Thank you Lena. So how much will I get back, and when? I paid the full amount "
                "by card.\n\nOn 28 Sep, Lena wrote:\n> I have passed your cancellation to our "
                "bookings team",
            ),
        ),
        "NEEDS_REVIEW",
        [
            rel(
                "docv_policy_refund_v5",
                "30 to 59 days before departure are charged 50% of the trip price",
            ),
            BROCHURE_FULL,
            rel(
                "docv_policy_refund_v5",
                "Approved refunds are paid to the original payment method within 14 business days.",
            ),
        ],
        reasons=REFUND_CONFLICT,
        trip={
            "trip_id": "patagonia-2026-11-08",
            "trip_date": "2026-11-08",
            "product_name": "Patagonia Trek",
        },
        sensitivity=["refund"],
        must_not_cite=[TERMS_V1, PRICES_2027],
        flags=CONFLICT,
    ),
    g(
        "at-thread-ebc-doctor",
        TENANT,
        thread(
            "EBC April 2027 - a few questions",
            (
                "guest",
                "Hello,\n\nI'm 67, reasonably fit (I walk 10 km most days) and I have mild "
                "asthma, well controlled with an inhaler. I'm looking at the Everest Base Camp "
                "trek next April. How long are the walking days?\n\nKind regards,\nMargaret",
            ),
            (
                "operator",
                "Dear Margaret,\n\nMost days are 5 to 7 hours of walking, and the longest days "
                "(Base Camp and Kala Patthar) are around 8 hours. There are two acclimatisation "
                "days, in Namche Bazaar and Dingboche.\n\nBest wishes,\nMarco",
            ),
            (
                "guest",
                "Thanks Marco, that sounds doable. Do I need anything signed by my doctor before "
                "I go?\n\nMargaret\n\n> There are two acclimatisation days",
            ),
        ),
        "NEEDS_REVIEW",
        [
            CLEARANCE,
            rel(
                "docv_medical_policy_v2",
                "Guests aged 65 or over need medical clearance for every departure",
            ),
            rel(
                "docv_medical_policy_v2",
                "guests with asthma on a Himalaya departure need medical clearance",
            ),
        ],
        reasons=STALE_SENSITIVE,
        sensitivity=["medical"],
        flags=STALE,
    ),
]
