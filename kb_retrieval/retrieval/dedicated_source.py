"""Whether a chunk comes from the document kind that exists to answer the question asked.

Some questions have a source written for them: "do we sign a waiver?" is answered by the waiver
or release form, "is the life jacket compulsory?" by the safety and medical policy, "what should
we pack?" by the packing list. A guest asks in their own words and the form speaks in its own
("participant agreement", "acknowledgement of risk"), so shared words under-rate the very
document the operator wrote for the question. When the e-mail's intents name such a question, a
chunk of the dedicated category gains `RetrievalConfig.dedicated_source_logit` log-odds on the
verdict's confidence (`scoring.score_pool`); ordering, floors and the learned model are untouched.

Unlike `verdict.CLAIM_CLASS_SPECIALISTS` (which source a specific claim must rest on when judging
"stale only"), this map says which source is *likely to answer*; it reads only the intents of
`query/vocabulary.py` (general words, not any e-mail's wording).
"""

from __future__ import annotations

from collections.abc import Iterable

from kb_retrieval.models import Category

# Intent (query/vocabulary.py INTENT_PATTERNS) -> the category written to answer it.
DEDICATED_SOURCES: dict[str, Category] = {
    "waiver": Category.WAIVER_RELEASE,
    "liability": Category.WAIVER_RELEASE,
    "medical": Category.SAFETY_MEDICAL,
    "safety": Category.SAFETY_MEDICAL,
    "fitness": Category.SAFETY_MEDICAL,
    "packing": Category.PACKING_LIST,
    "luggage": Category.PACKING_LIST,
}


def dedicated_categories(intents: Iterable[str]) -> frozenset[Category]:
    """The categories written to answer any of `intents`."""
    return frozenset(DEDICATED_SOURCES[i] for i in intents if i in DEDICATED_SOURCES)
