"""Sentence-bounded and intent features of a candidate pool (issue 12, session 10): measured by
bench/answerability_separation.py, not served (none improved held-out separation).

The lexical features of `answerability.py` read the whole chunk: a FAQ overview that names
every topic once matches every word of a question somewhere. These read where the words are:

- `sentence_coverage`: the share of the direct query's idf mass in the chunk's best single
  sentence (sentences and lines of `text/sentences.py`);
- `key_terms_sentence`: the share of the query's `KEY_TERMS` most specific words (highest idf
  among those some candidate contains) that one sentence of the chunk holds together;
- `type_in_sentence`: the question asks for a quantity kind and the best sentence (by
  coverage) states one of that kind, not only some other line of the chunk;
- `intent_mentioned`: the chunk uses the vocabulary of one of the plan's intents
  (`query/intents.py::mentions_intent`); `intent_authoritative`: it does, and its category is the
  one that states that intent (terms, structured policy or waiver for a policy intent; an
  itinerary or FAQ for a logistics one);
- `document_margin`: how far the chunk's best cosine is ahead of the best chunk of any other
  document version (negative when another document matches better).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

from kb_retrieval.models import HIGH_PRECEDENCE, Category
from kb_retrieval.query.answer_type import answer_type_match, asked_kinds, stated_kinds
from kb_retrieval.query.intents import mentions_intent
from kb_retrieval.query.plan import QueryPlan
from kb_retrieval.query.vocabulary import POLICY_INTENTS
from kb_retrieval.text.analyzer import analyze
from kb_retrieval.text.sentences import sentence_bounds

if TYPE_CHECKING:
    from kb_retrieval.retrieval.candidates import Candidate

KEY_TERMS = 2
LOGISTICS_CATEGORIES = frozenset({Category.TRIP_ITINERARY, Category.FAQ})
SPECIFIC_FEATURES: tuple[str, ...] = (
    "sentence_coverage",
    "key_terms_sentence",
    "type_in_sentence",
    "intent_mentioned",
    "intent_authoritative",
    "document_margin",
)


@lru_cache(maxsize=16384)
def sentences_with_terms(text: str) -> tuple[tuple[str, frozenset[str]], ...]:
    """Each sentence of `text` with its analyzed terms (cached: a chunk's text never changes)."""
    return tuple(
        (text[start:end], frozenset(analyze(text[start:end])))
        for start, end in sentence_bounds(text)
    )


@lru_cache(maxsize=16384)
def _mentioned(text: str, intents: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(intent for intent in intents if mentions_intent(text, intent))


def states_intent(category: Category, intents: Sequence[str]) -> bool:
    """Whether a chunk of `category` is where one of `intents` is stated with authority."""
    policy = any(i in POLICY_INTENTS for i in intents)
    logistics = any(i not in POLICY_INTENTS for i in intents)
    return (policy and category in HIGH_PRECEDENCE) or (
        logistics and category in LOGISTICS_CATEGORIES
    )


def sentence_values(
    text: str, weights: Mapping[str, float], key: Sequence[str], asked: frozenset[str]
) -> tuple[float, float, float]:
    """(idf mass of the best sentence, share of `key` in one sentence, type stated in the best
    sentence) for one chunk; the best sentence is the first of the highest mass."""
    best_mass, best_text, key_share = 0.0, "", 0.0
    for sentence, terms in sentences_with_terms(text):
        mass = math.fsum(w for t, w in weights.items() if t in terms)
        if mass > best_mass:
            best_mass, best_text = mass, sentence
        if key:
            key_share = max(key_share, sum(t in terms for t in key) / len(key))
    typed = 0.0
    if asked and best_text:
        typed = float(answer_type_match(asked, stated_kinds(best_text)) == 1.0)
    return best_mass, key_share, typed


def add_specific_features(
    pool: Sequence[Candidate],
    plan: QueryPlan,
    direct_terms: Sequence[str],
    idf: Mapping[str, float],
) -> None:
    """Set `SPECIFIC_FEATURES` in each candidate's `features` (after `answer_features`)."""
    unique = sorted(set(direct_terms))
    weights = {t: idf.get(t, 0.0) for t in unique}
    total = math.fsum(weights.values())
    present = [t for t in unique if any(t in c.term_freqs for c in pool)]
    key = sorted(present, key=lambda t: (-weights[t], t))[:KEY_TERMS]
    asked = asked_kinds(plan.normalized_text)
    best_by_version: dict[str, float] = {}
    for cand in pool:
        version = cand.version.doc_version_id
        vector = cand.features.get("vector_best", 0.0)
        best_by_version[version] = max(best_by_version.get(version, vector), vector)
    for cand in pool:
        f = cand.features
        mass, key_share, typed = sentence_values(cand.text, weights, key, asked)
        mentioned = _mentioned(cand.text, tuple(plan.intents))
        others = [v for k, v in best_by_version.items() if k != cand.version.doc_version_id]
        f["sentence_coverage"] = mass / total if total > 0 else 0.0
        f["key_terms_sentence"] = key_share
        f["type_in_sentence"] = typed
        f["intent_mentioned"] = float(bool(mentioned))
        f["intent_authoritative"] = float(
            bool(mentioned) and states_intent(cand.version.category, mentioned)
        )
        f["document_margin"] = f.get("vector_best", 0.0) - max(others, default=0.0)
