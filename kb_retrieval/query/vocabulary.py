"""Word lists and patterns of the query planner: intents, sensitivity, exceptions, expansions.

Data, not logic: `kb_retrieval.query.plan` compiles and applies them. Adding a word here changes
query plans, so the golden-set evaluation (`kb eval`) is the test of any change.
"""

from __future__ import annotations


def words(text: str) -> frozenset[str]:
    return frozenset(text.split())


SENSITIVITY_NAMES: tuple[str, ...] = ("exceptions", "legal", "medical", "refund", "safety")
VARIANT_WEIGHTS: dict[str, float] = {
    "direct": 1.0,
    "policy_expansion": 0.8,
    "trip_specific": 0.7,
    "exact_term": 0.6,
}
MAX_DIRECT_TERMS = 32
MAX_EXACT_ITEMS = 6
MAX_EXPANSION_WORDS = 12
MAX_QUERY_CHARS = 4000  # the focus text is cut here (latency); sensitivity reads the whole thread

# Documented intent list: name -> regex over prepared (case-folded, dates canonical) text.
INTENT_PATTERNS: dict[str, str] = {
    "age": r"\bages?\b|\byears? old\b|\d+[ -]years?[ -]old|\b(?:child|children|kids?|minors?"
    r"|teens?|teenagers?|toddlers?|infants?|bab(?:y|ies)|seniors?)\b"
    r"|(?:\b(?:under|over|aged?)|\b(?:son|daughter|child|kid|boy|girl|brother|sister|nephew"
    r"|niece|grand(?:son|daughter|child)|he|she|i|i'm)(?:'s| is| are| am| will be| turns?"
    r"| turning| just turned)?(?<=[a-z']) ) ?\d{1,2}\b(?!\s*(?:%|(?:days?|hours?|hrs?|h|km|kg"
    r"|lbs?|miles?|mi|m|nights?|weeks?|months?|people|persons|guests|participants|pax|minutes?"
    r"|mins?)\b))",
    "booking_change": r"\b(?:change|changing|switch|swap|move|moving|transfer|transferring)\b"
    r"[^.?!\n]{0,30}\b(?:booking|reservation|dates?|departure|name|spot|place)s?\b"
    r"|\bre-?(?:schedul|book)\w*|\bpostpon\w*|\bdefer\w*",
    "cancel": r"\bcancel(?:s|led|ed|ling|ing)?\b",
    "cancellation": r"\bcancell?ations?\b",
    "check_in": r"\bcheck[- ]?ins?\b|\bcheck[- ]?out\b|\barriv(?:e|es|al|als|ing)\b"
    r"|\b(?:start|meeting|report|departure) time\b",
    "deposit": r"\bdeposits?\b",
    "dietary": r"\bdiet(?:ary)?\b|\bvegetarian|\bvegan|\bgluten|\bco?eliac|\bkosher\b|\bhalal\b"
    r"|\blactose|\bdairy\b|\b(?:nut|food) allerg",
    # A price reduction or something given for free is a commitment (spec 3.6: "rules/
    # commitments"), so it is policy-like: staff notes and marketing alone do not ground it.
    "discount": r"\bdiscount\w*|\bloyalty\b|\bpromo(?:tion(?:al)?)? codes?\b|\bcoupons?\b"
    r"|\b\d+ ?(?:%|per ?cent) (?:off|discount|reduction)\b|\breduced (?:price|rate|fee)s?\b"
    r"|\bfree of charge\b|\b(?:go|goes|sail|sails|travel|travels|stay|stays|ride|rides|come"
    r"|comes|join|joins) (?:along )?(?:for )?free\b|\breturning (?:guests?|customers?|clients?)\b",
    "fitness": r"\bfitness\b|\bfit enough\b|\bphysical(?:ly)?\b|\bstrenuous\b|\bdifficult(?:y)?\b"
    r"|\bhow hard\b|\bexperience level\b|\bbeginners?\b",
    "guarantee": r"\bguarantee\w*|\bminimum (?:group|number|participants)\b",
    "inclusions": r"\binclud(?:e|es|ed)\b|\binclusions?\b|\bexclu(?:de|des|ded|sions?)\b"
    r"|\bextra cost\b",
    "insurance": r"\binsur(?:ance|ed|er|ers)\b",
    "liability": r"\bliab(?:le|ility)\b|\blawyers?\b|\battorneys?\b|\blegal\b|\blawsuit\b"
    r"|\bnegligen\w*|\bsu(?:e|ed|ing) (?:you|your|the|them|for)\b|\bcompensation\b",
    "luggage": r"\bluggage\b|\bbaggage\b|\bsuitcases?\b|\bduffel\w*|\bbags?\b|\bbackpacks?\b",
    "medical": r"\bmedic(?:al|ation|ations|ine|ines)\b|\bdoctor\w*|\bphysician\b|\bprescri\w*"
    r"|\ballerg\w*|\bpregnan\w*|\bheart\b(?! of\b)|\bcardiac\b|\basthma\w*|\bdiabet\w*|\bepilep\w*"
    r"|\bhealth\b|\bclearance\b|\bdisabilit\w*|\bwheelchair\b|\bsurgery\b|\bpre-?existing\b"
    r"|\baltitude sickness\b|\bhospital\w*|\bsick(?:ness)?\b|\billness\b|\bstents?\b|\bcoronary\b"
    r"|\bblood pressure\b|\bhypertension\b|\binhaler\b",
    "packing": r"\bpack(?:ing)?\b|\bgear\b|\bequipment\b|\bcloth(?:es|ing)\b|\bboots\b"
    r"|\bwhat (?:to|should i|should we) (?:bring|wear)\b|\bsleeping bags?\b|\brent(?:al)?\b",
    "payment": r"\bpay(?:s|ing|ment|ments|able)?\b|\bpaid\b|\binstal?lments?\b|\binvoices?\b"
    r"|\bbalance\b|\bcredit card\b|\bbank transfer\b"
    # a charge put on a card or an account, or one made ("we were charged"), is a payment;
    # "a charge for corkage" is a price, "charge it" (a car, a phone) neither
    r"|\bcharged\b|\bcharg(?:e|es|ing)\b[^.?!\n]{0,25}\b(?:to|on|onto) (?:my|our|the|a|your"
    r"|his|her) (?:\w+ )?(?:card|account|visa|mastercard|amex)\b"
    r"|\bgift (?:cards?|certificates?|vouchers?)\b",
    # Whether a permit, licence or visa is required is a legal requirement (spec 3.6).
    # (Not the card brand: "my Visa card", "pay with my Visa".)
    "permit": r"\bpermits?\b|\blicen[cs]es?\b"
    r"|(?<!to my )(?<!on my )(?<!by my )(?<!with my )\bvisas?\b(?! (?:debit |credit )?cards?\b)",
    "pickup": r"\bpick[- ]?ups?\b|\bpick (?:me|us) up\b|\bdrop[- ]?offs?\b|(?<!bank )\btransfers?\b"
    r"|\bshuttles?\b|\bairport\b|\bmeet(?:ing)? (?:point|place|location)\b"
    r"|\bwhere (?:do|should|will|shall) (?:we|i) meet\b"
    r"|\bwhat time (?:do|should|will|shall) (?:we|i) (?:meet|start|leave)\b"
    # the other end of a departure's logistics: when it finishes and the guests are back
    r"|\b(?:what time|when) (?:do|does|will|would|should|shall) (?:we|i|you|it|the \w+)"
    r" (?:get back|come back|return|finish|end)\b|\b(?:return|finish|finishing|end) time\b",
    "price": r"\bprices?\b|\bpricing\b|\bcosts?\b|\bhow much\b|\bfees?\b|\bdiscounts?\b"
    r"|\bcharges?\b(?! (?:it|them|my|our|the|a|your|his|her)\b)"
    r"|\bpromo\w*|\bsupplements?\b|\bgratuit\w*|\btipping\b",
    "refund": r"\brefund\w*|\breimburs\w*|\bmoney back\b|\bcredit note\b|\bvouchers?\b",
    "safety": r"\bsafe(?:ty)?\b|\bunsafe\b|\bhelmets?\b|\bpfds?\b|\blife ?(?:jackets?|vests?)\b"
    r"|\bharness\w*|\bavalanche\w*|\binjur(?:y|ies|ed)\b|\baccidents?\b|\bdanger\w*"
    r"|\bemergenc\w*|\brescue\b|\bfirst aid\b|\bevacuat\w*",
    "waiver": r"\bwaivers?\b|\brelease forms?\b",
    "weather": r"\bweather\b|\brain(?:s|y|ing|fall)?\b|\bstorms?\b|\bsnow(?:s|y|ing|fall)?\b"
    r"|\bwind(?:s|y)?\b|\bforecast\b|\bthunder\w*|\blightning\b|\btemperatures?\b",
}
INTENTS: tuple[str, ...] = tuple(sorted(INTENT_PATTERNS))
POLICY_INTENTS = frozenset(
    {
        "age", "booking_change", "cancel", "cancellation", "deposit", "discount", "fitness",
        "guarantee",
        "inclusions", "insurance", "liability", "medical", "payment", "permit", "refund", "safety",
        "waiver",
    }
)  # fmt: skip
# Canonical policy vocabulary, in the order it is added to the policy expansion.
POLICY_EXPANSIONS: dict[str, str] = {
    "cancellation": "cancellation refund window terms policy",
    "cancel": "cancellation refund window terms policy",
    "refund": "refund window terms policy",
    "deposit": "deposit non-refundable payment terms policy",
    "payment": "payment schedule balance due terms policy",
    "booking_change": "booking change transfer fee terms policy",
    "medical": "safety medical requirement physician clearance",
    "safety": "safety rules requirement policy",
    "fitness": "fitness requirement physical ability",
    "age": "minimum age requirement policy",
    "waiver": "waiver release liability form",
    "liability": "liability waiver release terms",
    "insurance": "travel insurance requirement policy",
    "inclusions": "inclusions exclusions included terms",
    "guarantee": "departure guarantee minimum group size terms",
    "discount": "discount offer price reduction terms policy",
    "permit": "permit licence requirement terms policy",
}
EXCEPTION_EXPANSION = "exception policy terms"
# The guest relies on what marketing told them ("your website says ..."): a promise, so the
# question is policy-like (spec 6.1: marketing never grounds a policy-like claim alone).
ADVERTISED_PATTERNS: tuple[str, ...] = (
    r"\b(?:your|the) (?:website|web ?site|site|brochure|flyer|leaflet|catalogue|catalog|advert"
    r"|advertisement|ad|newsletter|instagram|facebook)\b[^.?!\n]{0,25}\b(?:says?|said|states?"
    r"|stated|promis(?:e|es|ed)|claims?|claimed|advertis(?:es|ed))\b",
    r"\bas advertised\b",
)
# Expansion of a policy-like question with no policy topic of its own (only an advertised claim).
ADVERTISED_EXPANSION = "terms policy included conditions"
# Itinerary vocabulary per intent for the trip-specific variant.
TRIP_EXPANSIONS: dict[str, str] = {
    "check_in": "day 1 arrival",
    "pickup": "pickup meeting point transfer",
    "medical": "medical requirement",
    "safety": "safety equipment",
    "fitness": "fitness difficulty",
    "age": "minimum age",
    "dietary": "meals dietary",
    "luggage": "luggage",
    "packing": "packing list gear",
    "weather": "weather conditions",
    "inclusions": "inclusions",
    "price": "price",
}
SENSITIVITY_PATTERNS: dict[str, str] = {
    "legal": r"\blawyers?\b|\battorneys?\b|\blegal\w*|\bliab(?:le|ility)\b|\blawsuit\b|\bcourt\b"
    r"|\bsu(?:e|ed|ing) (?:you|your|the|them|for)\b|\bwaivers?\b|\bnegligen\w*|\bcompensation\b"
    r"|\binsurance claim|\bclaim (?:on|against|with|from) (?:my |the |your )?insurance\b",
    "safety": r"\binjur\w*|\baccident\w*|\bavalanche\w*|\bsafe(?:ty)?\b|\bunsafe\b|\bhelmets?\b"
    r"|\bpfds?\b|\blife ?(?:jackets?|vests?)\b|\bdanger\w*|\bemergenc\w*|\brescue\b|\bevacuat\w*"
    r"|\bfirst aid\b|\b(?:severe|extreme|dangerous) weather\b|\bstorms?\b|\blightning\b"
    r"|\bfloods?\b|\bflooding\b|\bhurricanes?\b",
}
# A deposit is a refund matter (sensitivity "refund") when the e-mail speaks of getting it back
# or losing it; "how much is the deposit" and "we've paid the deposit" are payment matters.
DEPOSIT_RETURN_PATTERN = (
    r"\bdeposits?\b[^.?!\n]{0,100}\b(?:back|lose|lost|losing|forfeit\w*|keep|kept|retain\w*"
    r"|return(?:ed|able)?|non-?returnable)\b|\b(?:back|lose|lost|losing|forfeit\w*|keep|kept"
    r"|retain\w*|return)\b[^.?!\n]{0,40}\bdeposits?\b"
)
# A risk named as what travel insurance covers ("does it include rescue", "evacuation cover") is
# a question about the policy's cover, not a safety matter of the trip.
INSURED_RISK_PATTERN = (
    r"\b(?:cover(?:s|ed|ing|age)?|includ(?:e|es|ed|ing)|insur\w*|policy)\b[^.?!\n]{0,40}"
    r"\b(?:rescue|evacuation|emergenc(?:y|ies)|accidents?|injur(?:y|ies))\b"
    r"|\b(?:rescue|evacuation|emergency|accident|injury)(?: \w+)? (?:cover|coverage|insurance)\b"
)
EXCEPTION_PATTERNS: tuple[str, ...] = (
    r"\bmake (?:an? |one )?(?:one[- ]time |small |special )?exceptions?\b",
    r"\ban? (?:one[- ]time |small |special )?exception\b",
    r"\bwaiv(?:e|ed|ing) (?:the|my|our|this|that|a|any|your)\b[^.?!\n]{0,25}"
    r"\b(?:fees?|penalty|charges?|deposit|cost|supplement|requirement|rules?|policy)\b",
    r"\bspecial (?:case|circumstances?|consideration)\b|\bextenuating\b",
    r"\b(?:could|can|would|will) you (?:please )?(?:bend|relax|overlook)\b|\bbend the rules?\b",
    r"\bdespite (?:the|your) (?:policy|rules?|terms)\b",
    r"\beven though\b[^.?!\n]{0,80}\b(?:policy|rules?|terms|non-refundable|deadline)\b",
    r"\b(?:know|understand|realise|realize|appreciate)\b[^.?!\n]{0,60}"
    r"\b(?:policy|rules?|non-refundable|deadline)\b",
    r"\blet (?:me|us) off\b|\bcompassion\w*|\bgoodwill\b|\bas a courtesy\b|\bjust this once\b",
    r"\b(?:medical|special) (?:waiver|exemption|exception)\b|\bexempt\w*",
    r"\boutside (?:the|your) (?:policy|rules|terms)\b",
    r"\bwould it be (?:ok|okay|alright|all right|fine|acceptable)\b",
    # Altering a legal document rather than accepting it.
    r"\b(?:amend|alter|modify|edit|remove|delete|cross out|strike out|strike through)\b"
    r"[^.?!\n]{0,40}\b(?:waivers?|release|clauses?|contract|disclaimer|form)\b",
    r"\b(?:amended|altered|modified|edited) (?:version|copy|waiver|form|contract)\b",
    # Paying after the terms' deadline.
    r"\b(?:extend|extensions? (?:of|on|to|for)|push back|postpone|delay)\b[^.?!\n]{0,30}"
    r"\b(?:deadline|due date|balance|final payment|payment)\b",
    r"\b(?:more time|a few (?:more |extra )?days|an extra week|until (?:next )?\w+day)\b"
    r"[^.?!\n]{0,30}\b(?:to pay|for (?:the )?(?:payment|balance|deposit))\b",
    r"\bpay (?:late|later than|after the (?:deadline|due date))\b",
    r"\b(?:late|behind) (?:with|on|in paying) (?:the |my |our )?(?:balance|final payment|payments?"
    r"|deposit|instal\w*)\b",
    r"\b(?:was|were) due (?:last|yesterday|on|a few)\b|\boverdue\b"
    r"|\bmissed the (?:deadline|due date|payment)\b|\bforgot to pay\b",
    # Holding the operator to superseded terms (the conditions at the time of booking).
    r"\b(?:keep|stick|hold (?:you|us)) to\b[^.?!\n]{0,40}\b(?:original(?:ly)?|old|previous"
    r"|earlier|at the time)\b",
    r"\bhonou?r (?:the|our|my) (?:original|old|previous|earlier|quoted)\b",
    r"\b(?:original|old|previous|earlier) (?:[a-z]+ )?(?:terms|conditions|prices?|rates?)\b"
    r"[^.?!\n]{0,30}\b(?:still )?(?:apply|applies|stand|stands)\b",
    r"\b(?:not|don't|do not) cancel\b[^.?!\n]{0,40}\b(?:if|until|when) (?:i|we) pay\b",
)
# Exception phrasings that count only together with a policy intent ("is there any way ...").
WEAK_EXCEPTION_PATTERNS: tuple[str, ...] = (
    r"\bis there (?:any|some) way\b",
    r"\bwould you (?:be willing to |please )?consider\b",
    r"\b(?:any|some) flexibility\b|\bbe flexible\b|\bany chance\b",
)
DOMAIN_PHRASES: tuple[str, ...] = (
    "medical clearance", "medical certificate", "medical form", "medical questionnaire",
    "doctor's note", "travel insurance", "full refund", "partial refund", "cancellation fee",
    "cancellation policy", "refund policy", "change fee", "transfer fee", "final payment",
    "balance due", "minimum age", "age limit", "life jacket", "fitness level",
    "dietary requirements", "single supplement", "meeting point", "release form", "waiver form",
    "altitude sickness", "force majeure", "credit note", "booking reference", "booking number",
)  # fmt: skip
SOURCE_WORDS = frozenset(
    {"brochure", "website", "faq", "flyer", "leaflet", "catalogue", "catalog", "advert",
     "advertisement", "newsletter", "instagram", "facebook", "tripadvisor"}
)  # fmt: skip
# Words dropped from queries on top of the analyzer's stopwords (spec 4.2: "please", "thanks"...).
QUERY_FILLER = words(
    """hi hello hey hiya dear greetings team everyone folks guys cheers regards thx ty pls
    get got getting still need needs needed want wanted wants would could might may must shall
    like know let tell ask asking asked wondering wonder curious question questions quick just
    also really actually maybe possible possibly anyone someone something anything thing things
    kind sort bit lot ok okay yes yeah yep sure great awesome cool nice lol hope hoping well
    help advise appreciate appreciated say says said"""
)
# Words that do not count as content for the quality gate (but stay in the direct query).
GATE_IGNORE = QUERY_FILLER | words(
    "test testing tested message messages email mail hmm um morning afternoon evening"
    # closing pleasantries ("thanks so much", "see you soon", "looking forward to it")
    " much soon looking forward"
)
TRIP_NOUNS = words(
    """trip trips tour tours trek treks departure departures expedition expeditions hike hikes
    climb excursion excursions journey cruise safari adventure itinerary retreat holiday
    vacation"""
)
GENERIC_TRIP_NOUNS = frozenset({"trip", "trips", "itinerary", "holiday", "vacation"})
DESCRIPTOR_IGNORE = words(
    """next last first upcoming whole entire same other previous recent planned booked
    cancelled canceled group family private day days great amazing wonderful"""
)
