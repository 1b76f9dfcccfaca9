"""Golden cases for the coastal-kayak tenant, written by hand from the source documents."""

from __future__ import annotations

from golden_helpers import ask, g, o, rel, thread, unknown

TENANT = "coastal-kayak"
ALPINE_VERSIONS = [
    "docv_ebc_2026_v1",
    "docv_brochure_2026",
    "docv_prices_2026_v4",
    "docv_policy_refund_v5",
]
POLICY_14 = rel(
    "docv_ck_policy_v3", "Cancellations within 14 days of the trip start are non-refundable."
)
TERMS_14 = rel(
    "docv_ck_terms_2026_v1",
    "Cancellations made within 14 days of the trip start are non-refundable",
)
WEBSITE_7 = rel("docv_ck_website_2026", "Free cancellation up to 7 days before your expedition.")
MIN_AGE = rel(
    "docv_ck_policy_v3", "The minimum age is 12 for multi-day expeditions and 8 for day paddles."
)
SHARE_DOUBLE = rel("docv_ck_policy_v3", "Paddlers aged 12 to 15 must share a double kayak")
PFD_RULE = rel(
    "docv_ck_policy_v3",
    "A personal flotation device must be worn, fastened, at all times on the water.",
)
CONFLICT = {"conflicting_evidence": True}
STALE = {"stale_only_evidence": True}
REFUND_CONFLICT = ["CONFLICT_DETECTED", "SENSITIVE_TOPIC"]
EXCEPTION = ["EXCEPTION_REQUEST", "SENSITIVE_TOPIC"]

CASES = [
    # ---- OK_TO_DRAFT -------------------------------------------------------------------------
    o(
        "ck-min-age",
        TENANT,
        "Hi! What's the minimum age for your multi-day kayak trips? Our twins are 13.\n\n"
        "Thanks,\nNadia",
        [
            MIN_AGE,
            rel(
                "docv_ck_terms_2026_v1",
                "The minimum age for multi-day expeditions is 12 years on the trip start date.",
            ),
        ],
    ),
    o(
        "ck-pfd-always",
        TENANT,
        "Do we really have to wear life jackets the whole time, even when it's flat calm?",
        [PFD_RULE],
        sensitivity=["safety"],
    ),
    o(
        "ck-own-pfd",
        TENANT,
        "I have my own PFD from home (it's a US Coast Guard approved one). Can I use it on the "
        "Broken Group trip?",
        [
            rel(
                "docv_ck_terms_2026_v1",
                "use your own PFD only if it is approved by Transport Canada",
            ),
            rel(
                "docv_ck_safety_v4",
                "Guests may bring their own PFD if it is Transport Canada approved",
            ),
        ],
    ),
    o(
        "ck-deposit-balance",
        TENANT,
        "How much is the deposit and when is the rest due? We're booking the Broken Group for "
        "July. Regards, Ian",
        [
            rel("docv_ck_policy_v3", "A deposit of 30% is due at booking"),
            rel("docv_ck_policy_v3", "The balance is due 45 days before the trip start."),
        ],
    ),
    o(
        "ck-sleeping-bag-rental",
        TENANT,
        "Can we rent sleeping bags from you, and how much is it?",
        [
            rel(
                "docv_ck_faq_v4",
                "Sleeping bags and sleeping mats can be rented for CAD 35 each per expedition.",
            ),
            rel(
                "docv_ck_terms_2026_v1",
                "Sleeping bags and sleeping mats can be rented for CAD 35 each per expedition.",
            ),
        ],
    ),
    o(
        "ck-johnstone-meeting",
        TENANT,
        "What time and where do we meet on day one of the Johnstone Strait Orca Expedition?",
        [
            rel(
                "docv_ck_johnstone_2026_v2",
                "Meet your guides at 07:30 at the Telegraph Cove boardwalk",
            )
        ],
    ),
    o(
        "ck-insurance",
        TENANT,
        "Is travel insurance required to book with you?",
        [
            rel("docv_ck_terms_2026_v1", "Insurance is not a condition of booking."),
            rel(
                "docv_ck_terms_2026_v1",
                "We strongly recommend that every guest buys travel insurance",
            ),
        ],
    ),
    o(
        "ck-swim-requirement",
        TENANT,
        "I'm honestly not a great swimmer. Can I still do the Broken Group trip?",
        [
            rel(
                "docv_ck_safety_v4",
                "Every expedition guest must be able to swim at least 25 metres",
            )
        ],
        sensitivity=["safety"],
    ),
    o(
        "ck-shoulder-surgery",
        TENANT,
        thread(
            "Johnstone Strait - 14 Sept - medical question",
            (
                "guest",
                "Hello Coastal Kayak,\n\nI had shoulder surgery (rotator cuff) in July and my "
                "physio says I'm recovering well. Do I need anything from my doctor to join the "
                "Johnstone Strait trip in September?\n\nBest regards,\nKatrin Vogel\n\n"
                "This email and any attachments are confidential.",
            ),
        ),
        [
            rel(
                "docv_ck_safety_v4",
                "surgery, a fracture or a dislocated shoulder in the past 6 months",
            ),
            rel("docv_ck_safety_v4", "send us a signed note from their doctor"),
        ],
        sensitivity=["medical"],
        flags={"stale_only_evidence": False},
    ),
    o(
        "ck-epilepsy",
        TENANT,
        "I have epilepsy (well controlled, my last seizure was 3 years ago). Am I able to join "
        "one of your expeditions?",
        [
            rel(
                "docv_ck_safety_v4",
                "must paddle in a double kayak with a guide or a named companion",
            ),
            rel("docv_ck_safety_v4", "epilepsy or any seizure in the past 24 months"),
        ],
        sensitivity=["medical"],
    ),
    o(
        "ck-flip-flops",
        TENANT,
        "Are flip flops ok for getting in and out of the kayak or do I need something else?",
        [
            rel(
                "docv_ck_packing_v2",
                "Neoprene booties or sturdy sandals with a heel strap for launching and landing",
            )
        ],
        reasons=["STALE_ONLY_EVIDENCE"],
        flags=STALE,
    ),
    o(
        "ck-jeans-camp",
        TENANT,
        "Packing question: is it fine to bring jeans and a hoodie for the evenings at camp?",
        [
            rel(
                "docv_ck_packing_v2",
                "Cotton stays cold when wet, so please leave jeans and cotton hoodies at home.",
            )
        ],
        reasons=["STALE_ONLY_EVIDENCE"],
        flags=STALE,
    ),
    o(
        "ck-weather-cancel-refund",
        TENANT,
        "If you cancel our Broken Group trip because of a storm before we set off, do we get "
        "our money back?",
        [
            rel(
                "docv_ck_policy_v3",
                "guests choose a full refund or a free transfer to another date",
            ),
            rel(
                "docv_ck_terms_2026_v1",
                "you may choose either a full refund or a free transfer to another date",
            ),
        ],
        sensitivity=["refund"],
    ),
    o(
        "ck-waiver-online",
        TENANT,
        "Do we need to sign a waiver, and can we do it online before we arrive?",
        [
            rel(
                "docv_ck_waiver_2026_v2",
                "This agreement can be signed online through the link in your booking confirmation",
            ),
            rel(
                "docv_ck_terms_2026_v1",
                "The waiver is sent by email when you book and can be signed online.",
            ),
        ],
    ),
    o(
        "ck-waiver-minor",
        TENANT,
        "My daughter is 17 - who has to sign the waiver for her?",
        [
            rel(
                "docv_ck_waiver_2026_v2",
                "must have this agreement signed by a parent or legal guardian",
            )
        ],
    ),
    o(
        "ck-kayak-age",
        TENANT,
        "How old are your kayaks? A friend said you replace them every few years.",
        [rel("docv_ck_website_2026", "High-quality touring kayaks replaced every three seasons.")],
    ),
    # ---- NEEDS_REVIEW -------------------------------------------------------------------------
    g(
        "ck-refund-website-7-days",
        TENANT,
        "Hello,\n\nYour website says free cancellation up to 7 days before the expedition. We "
        "need to cancel our Johnstone Strait trip, which starts in 10 days. Please process a "
        "full refund.\n\nThank you,\nOlivia Grant",
        "NEEDS_REVIEW",
        [POLICY_14, TERMS_14, WEBSITE_7],
        reasons=REFUND_CONFLICT,
        sensitivity=["refund"],
        flags=CONFLICT,
    ),
    g(
        "ck-refund-how-many-days",
        TENANT,
        "How many days before the trip can I cancel and still get a refund?",
        "NEEDS_REVIEW",
        [POLICY_14, WEBSITE_7],
        reasons=REFUND_CONFLICT,
        flags=CONFLICT,
    ),
    g(
        "ck-refund-short",
        TENANT,
        "hey is it really free cancellation up to 7 days before??",
        "NEEDS_REVIEW",
        [WEBSITE_7, POLICY_14],
        reasons=REFUND_CONFLICT,
        flags=CONFLICT,
    ),
    g(
        "ck-refund-thread",
        TENANT,
        thread(
            "Re: Cancellation Broken Group 20 Aug",
            (
                "guest",
                "Hi, we need to cancel our Broken Group trip on 20 August, sorry! What do we "
                "get back? Sam",
            ),
            (
                "operator",
                "Hi Sam, sorry to hear that. As your trip starts within 14 days, I'm afraid "
                "the booking is non-refundable under our terms. Best, Jess (Coastal Kayak Co.)",
            ),
            (
                "guest",
                "Jess, that's not what your homepage says - it literally says free "
                "cancellation up to 7 days before your expedition. We're 11 days out. Which "
                "one is it?\n\n> As your trip starts within 14 days, I'm afraid the booking is "
                "non-refundable",
            ),
        ),
        "NEEDS_REVIEW",
        [POLICY_14, TERMS_14, WEBSITE_7],
        reasons=REFUND_CONFLICT,
        trip={
            "trip_id": "broken-group-2026-08-20",
            "trip_date": "2026-08-20",
            "product_name": "Broken Group Islands Explorer",
        },
        flags=CONFLICT,
    ),
    g(
        "ck-refund-trip-context",
        TENANT,
        "If I cancel next week would I get anything back at all?",
        "NEEDS_REVIEW",
        [POLICY_14, WEBSITE_7],
        reasons=REFUND_CONFLICT,
        trip={
            "trip_id": "johnstone-2026-08-17",
            "trip_date": "2026-08-17",
            "product_name": "Johnstone Strait Orca Expedition",
        },
        sensitivity=["refund"],
        flags=CONFLICT,
    ),
    g(
        "ck-orca-promise",
        TENANT,
        "We did the Johnstone Strait trip in August and didn't see a single orca :( Your "
        "website promises 20% off the next trip in that case - how do I claim it?",
        "NEEDS_REVIEW",
        [
            rel("docv_ck_website_2026", "you will receive 20% off your next trip with us"),
            rel(
                "docv_ck_terms_2026_v1",
                "no refund or credit is given if wildlife is not seen",
            ),
        ],
        reasons=REFUND_CONFLICT,
        sensitivity=["refund"],
        flags=CONFLICT,
    ),
    g(
        "ck-exception-age-11",
        TENANT,
        "Hi there,\n\nOur son is 11 and a half and has kayaked loads with us at home on the "
        "lake. Could you make an exception and let him join the Broken Group expedition in "
        "August? He'd be in a double with me.\n\nCheers,\nAmit",
        "NEEDS_REVIEW",
        [MIN_AGE],
        reasons=EXCEPTION,
        sensitivity=["exceptions"],
    ),
    g(
        "ck-exception-booking-fee",
        TENANT,
        "We have to cancel 3 weeks out (so more than 14 days). Would you be willing to waive "
        "the CAD 150 booking fee? We've booked with you twice before.",
        "NEEDS_REVIEW",
        [rel("docv_ck_policy_v3", "refunded in full, less the CAD 150 booking fee")],
        reasons=EXCEPTION,
    ),
    g(
        "ck-exception-broken-wrist",
        TENANT,
        thread(
            "Broken wrist - Johnstone Strait 17 Aug",
            (
                "guest",
                "Hi,\n\nI broke my wrist yesterday and the cast stays on for 6 weeks, so I can't "
                "paddle on our trip in 9 days. I know it's inside your 14 days, but is there any "
                "chance of a refund, or of moving us to next summer as a one-off?\n\nThanks,\n"
                "Chris Matthews\nSent from my phone",
            ),
        ),
        "NEEDS_REVIEW",
        [
            POLICY_14,
            rel(
                "docv_ck_policy_v3",
                "One free date change within the same season is allowed",
            ),
        ],
        reasons=EXCEPTION,
        sensitivity=["refund", "exceptions"],
    ),
    g(
        "ck-exception-single-kayak-14",
        TENANT,
        "My 14-year-old is a very competent paddler (he races K1 at club level). Can he have "
        "his own single kayak on the Johnstone Strait trip rather than sharing a double with "
        "me?",
        "NEEDS_REVIEW",
        [SHARE_DOUBLE],
        reasons=EXCEPTION,
    ),
    g(
        "ck-exception-waiver-edit",
        TENANT,
        "Before I sign, I'd like to strike out the paragraph of the waiver about negligence. "
        "Can I sign a modified version instead? I'm a lawyer and I'm not comfortable with it.",
        "NEEDS_REVIEW",
        [
            rel(
                "docv_ck_waiver_2026_v2",
                "The agreement cannot be amended, and the guides have no authority to change it.",
            )
        ],
        reasons=EXCEPTION,
        sensitivity=["legal", "exceptions"],
    ),
    g(
        "ck-exception-pfd-off",
        TENANT,
        "It's going to be hot in August - would it be ok to take my PFD off when we're in the "
        "sheltered bay? Just for an hour or so.",
        "NEEDS_REVIEW",
        [PFD_RULE, rel("docv_ck_policy_v3", "There are no exceptions to this rule.")],
        reasons=EXCEPTION,
        sensitivity=["safety", "exceptions"],
    ),
    g(
        "ck-exception-late-balance",
        TENANT,
        "Our balance was due last week for the Johnstone Strait trip - totally slipped my mind. "
        "Can we pay it at the start of the trip instead?",
        "NEEDS_REVIEW",
        [
            rel("docv_ck_policy_v3", "The balance is due 45 days before the trip start."),
            rel(
                "docv_ck_terms_2026_v1",
                "If the balance is not paid on time, we may cancel your booking",
            ),
        ],
        reasons=EXCEPTION,
    ),
    g(
        "ck-exception-group-deposit",
        TENANT,
        "We're a group of 8 from the same paddling club. Could you give us a discount, or at "
        "least waive the deposit until everyone has confirmed?",
        "NEEDS_REVIEW",
        [
            rel(
                "docv_ck_terms_2026_v1",
                "Groups of six or more booking together may reserve a private departure.",
            ),
            rel("docv_ck_terms_2026_v1", "Private departures require a deposit of 50%"),
        ],
        reasons=EXCEPTION,
    ),
    g(
        "ck-instalments",
        TENANT,
        "Can I pay for the Johnstone Strait trip in monthly instalments? How many payments "
        "would that be?",
        "NEEDS_REVIEW",
        [
            rel(
                "docv_ck_website_2026",
                "Spread the cost of any expedition over three interest-free monthly instalments",
            )
        ],
        reasons=["MARKETING_ONLY_EVIDENCE", "MISSING_REQUIRED_PRECEDENCE"],
    ),
    g(
        "ck-gift-card-expiry",
        TENANT,
        "Do your gift cards expire? I got one for Christmas 2024 and want to use it for a day "
        "paddle.",
        "NEEDS_REVIEW",
        [rel("docv_ck_website_2026", "gift cards are available in any amount and never expire")],
        reasons=["MARKETING_ONLY_EVIDENCE", "MISSING_REQUIRED_PRECEDENCE"],
    ),
    g(
        "ck-fishing",
        TENANT,
        "Can I bring a rod and fish from my kayak on the Broken Group trip? Would love to catch "
        "dinner!",
        "NEEDS_REVIEW",
        [
            rel(
                "docv_ck_faq_v4",
                "Fishing from the kayaks is not allowed on our trips for safety reasons.",
            )
        ],
        reasons=["MISSING_REQUIRED_PRECEDENCE", "SENSITIVE_TOPIC"],
        sensitivity=["safety"],
    ),
    g(
        "ck-lowconf-coffee",
        TENANT,
        "Do you have decent coffee at camp? Any chance of oat milk?",
        "NEEDS_REVIEW",
        [rel("docv_ck_faq_v4", "Expect pancakes and coffee in the morning")],
        reasons=["LOW_CONFIDENCE"],
    ),
    # ---- UNKNOWN ----------------------------------------------------------------------------
    unknown("ck-sup-lessons", TENANT, "Do you offer stand up paddleboard lessons in Ucluelet?"),
    unknown(
        "ck-dog",
        TENANT,
        "Can we bring our dog on the Broken Group trip? She's very calm and loves the water.",
    ),
    unknown(
        "ck-other-tenant-ebc",
        TENANT,
        "Do you organise Everest Base Camp treks as well? Looking for something for next April.",
        must_not_cite=ALPINE_VERSIONS,
    ),
    unknown(
        "ck-other-tenant-patagonia-supplement",
        TENANT,
        "What's the single supplement on the Patagonia W Trek?",
        must_not_cite=ALPINE_VERSIONS,
    ),
    unknown(
        "ck-safety-record",
        TENANT,
        "Have you ever had a guest drown or a serious accident on one of your trips? What's "
        "your safety record like?",
        sensitive=True,
        sensitivity=["safety"],
    ),
    unknown(
        "ck-ferry-times",
        TENANT,
        "Which BC Ferries sailing from Horseshoe Bay should we take to make the Ucluelet "
        "meeting in time?",
    ),
    # ---- ASK_CLARIFYING_QUESTION ---------------------------------------------------------------
    ask("ck-chitchat-hello", TENANT, "Hello :)"),
    ask("ck-chitchat-ok", TENANT, "ok thanks"),
    ask("ck-chitchat-testing", TENANT, "Hi there, just testing"),
    ask("ck-chitchat-hope-well", TENANT, "Hope you're all well!"),
    ask(
        "ck-ambiguous-meeting-time",
        TENANT,
        "What time do we need to be at the meeting point on the first morning of the kayak trip?",
        [
            rel(
                "docv_ck_johnstone_2026_v2",
                "Meet your guides at 07:30 at the Telegraph Cove boardwalk",
            ),
            rel(
                "docv_ck_broken_group_2026_v1",
                "Meet at 09:00 at our Ucluelet base, 310 Marine Drive.",
            ),
        ],
    ),
    ask(
        "ck-ambiguous-return-time",
        TENANT,
        "What time do we get back on the last day of the expedition? Need to book onward travel.",
        [
            rel("docv_ck_johnstone_2026_v2", "land at Telegraph Cove between 13:00 and 15:00"),
            rel(
                "docv_ck_broken_group_2026_v1",
                "We expect to be back at the Ucluelet base by 14:30.",
            ),
        ],
    ),
    # ---- Threads whose latest guest message is a short follow-up -------------------------------
    o(
        "ck-thread-johnstone-meeting-time",
        TENANT,
        thread(
            "Johnstone Strait Orca Expedition - Mon 10 Aug",
            (
                "guest",
                "Hi,\n\nWe're booked on the Johnstone Strait Orca Expedition starting Monday 10 "
                "August (booking CK-20931, 2 ppl). We're driving up from Victoria - where's best "
                "to stay the night before?\n\nThanks!\nPaul",
            ),
            (
                "operator",
                "Hi Paul,\n\nBecause of the early start we recommend staying in Telegraph Cove or "
                "Port McNeill the night before. Parking at Telegraph Cove is CAD 15 per day, paid "
                "at the marina office.\n\nCheers,\nJess (Coastal Kayak Co.)",
            ),
            (
                "guest",
                "Perfect, we've booked a cabin in Port McNeill. What time and where exactly do we "
                "meet on day 1?\n\n> Because of the early start we recommend staying in Telegraph "
                "Cove or Port McNeill",
            ),
        ),
        [
            rel(
                "docv_ck_johnstone_2026_v2",
                "Meet your guides at 07:30 at the Telegraph Cove boardwalk",
            ),
            rel(
                "docv_ck_terms_2026_v1",
                "Please arrive 15 minutes early so that we can fit your equipment",
            ),
        ],
    ),
    o(
        "ck-thread-min-age-sibling",
        TENANT,
        thread(
            "Broken Group 16 July - family booking",
            (
                "guest",
                "Hi!\n\nMy daughter is 13 - is she old enough for the Broken Group Islands trip "
                "on 16 July? She's done a bit of canoeing at camp.\n\nThanks, Nadia",
            ),
            (
                "operator",
                "Hi Nadia,\n\nYes - the minimum age for our multi-day expeditions is 12, so she's "
                "very welcome, and no experience is needed for the Broken Group. At 13 she'll "
                "share a double kayak with you or one of the guides.\n\nBest,\nJess",
            ),
            (
                "guest",
                "Amazing, thank you! Is that the same for her brother? He's 9.\n\nOn 3 May, Jess "
                "wrote:\n> the minimum age for our multi-day expeditions is 12",
            ),
        ),
        [
            MIN_AGE,
            rel(
                "docv_ck_terms_2026_v1",
                "The minimum age for multi-day expeditions is 12 years on the trip start date.",
            ),
        ],
    ),
    o(
        "ck-thread-broken-group-included",
        TENANT,
        thread(
            "Broken Group Islands Explorer - price",
            (
                "guest",
                "Hello, how much is the Broken Group trip for 2 adults in August? Regards, Ian",
            ),
            (
                "operator",
                "Hi Ian,\n\nThe Broken Group Islands Explorer is CAD 1,695 per person, and "
                "departures run every Thursday until 17 September. You can book online or reply "
                "here and I'll hold two places for 48 hours.\n\nBest,\nJess",
            ),
            (
                "guest",
                "ok thx. does that inlcude the water taxi out to the islands and the park fees, "
                "or do we pay those on the day?\n\nIan",
            ),
        ),
        [
            rel(
                "docv_ck_broken_group_2026_v1",
                "kayaks and paddling equipment, PFDs, the return water taxi",
            ),
            rel(
                "docv_ck_broken_group_2026_v1",
                "Pacific Rim National Park Reserve camping fees and permits",
            ),
            rel(
                "docv_ck_terms_2026_v1",
                "national park camping fees and permits, and the water taxi where the itinerary "
                "includes one",
            ),
        ],
    ),
    g(
        "ck-thread-date-change-then-cancel",
        TENANT,
        thread(
            "Re: Johnstone Strait 24 Aug - change of dates?",
            (
                "guest",
                "Hi there,\n\nWe're booked on the Johnstone Strait trip starting 24 August, but my "
                "partner has a work trip come up that week. Could we move to the September 7 "
                "departure instead? Today is 14 Aug.\n\nThanks,\nOlivia",
            ),
            (
                "operator",
                "Hi Olivia,\n\nSorry to hear that! Free date changes need at least 21 days notice, "
                "so at 10 days out a change would be treated as a cancellation, I'm afraid.\n\n"
                "Best,\nJess (Coastal Kayak Co.)",
            ),
            (
                "guest",
                "Ugh ok. So if we just cancel then, do we get anything back? Your homepage says "
                "free cancellation up to 7 days before.\n\n> a change would be treated as a "
                "cancellation",
            ),
        ),
        "NEEDS_REVIEW",
        [POLICY_14, TERMS_14, WEBSITE_7],
        reasons=REFUND_CONFLICT,
        trip={
            "trip_id": "johnstone-2026-08-24",
            "trip_date": "2026-08-24",
            "product_name": "Johnstone Strait Orca Expedition",
        },
        sensitivity=["refund"],
        flags=CONFLICT,
    ),
    unknown(
        "ck-thread-german-speaking-guide",
        TENANT,
        thread(
            "Johnstone Strait in July - for my parents",
            (
                "guest",
                "Hello,\n\nI'd like to book the Johnstone Strait Orca Expedition in July as a "
                "present for my parents (both 64, fit, they paddle on the lake at home every "
                "summer). Do they need any kayaking experience?\n\nViele Gruesse,\nLena Hofmann",
            ),
            (
                "operator",
                "Hi Lena,\n\nWhat a lovely present! For Johnstone Strait guests should have "
                "paddled a kayak at least once before, so your parents are all set.\n\n"
                "Cheers,\nJess",
            ),
            (
                "guest",
                "Great, thanks! Do any of your guides speak German? Mum's English is a bit "
                "rusty.\n\nLena",
            ),
        ),
        must_not_cite=["docv_patagonia_jun14_v1", "docv_patagonia_nov08_v1"],
    ),
]
