"""Absolute relevance features, calibrated confidence, and the within-tier ranking score."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from datetime import date
from functools import lru_cache

from kb_retrieval.models import Category
from kb_retrieval.query.answer_type import asked_kinds
from kb_retrieval.query.plan import QueryPlan
from kb_retrieval.retrieval.answerability import (
    add_gap_features,
    add_query_term_features,
    answer_features,
)
from kb_retrieval.retrieval.candidates import Candidate
from kb_retrieval.retrieval.config import ConfidenceModel, RetrievalConfig
from kb_retrieval.retrieval.dedicated_source import dedicated_categories
from kb_retrieval.retrieval.faq_entries import faq_entries
from kb_retrieval.retrieval.ranker import add_rank_features
from kb_retrieval.retrieval.typed_answer import (
    TYPED_ANSWER,
    TYPED_ANSWER_SOURCES,
    focus_terms,
    states_typed_answer,
)
from kb_retrieval.text.analyzer import analyze

EXPANSION_DISCOUNT = 0.9
LOGIT_EPSILON = 1e-6


def sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


def vector_feature(sims: Sequence[float]) -> float:
    """Best-window cosine for the direct query, or a slightly discounted expansion match."""
    if not sims:
        return 0.0
    others = max(sims[1:], default=0.0) * EXPANSION_DISCOUNT
    return max(sims[0], others)


def lexical_features(
    candidate: Candidate,
    terms: Sequence[str],
    idf: dict[str, float],
    avgdl: float,
    config: RetrievalConfig,
) -> tuple[float, float]:
    """(share of the query's idf mass the chunk contains, BM25 of the direct query)."""
    return lexical_scores(
        candidate.term_freqs, candidate.term_count, terms, idf, avgdl, config.bm25_k1, config.bm25_b
    )


def lexical_scores(
    term_freqs: Mapping[str, int],
    term_count: int,
    terms: Sequence[str],
    idf: dict[str, float],
    avgdl: float,
    k1: float,
    b: float,
) -> tuple[float, float]:
    """(coverage, BM25) of the query `terms` in a text of `term_count` terms (a chunk, or one
    entry of an FAQ chunk)."""
    unique = sorted(set(terms))
    total = sum(idf.get(t, 0.0) for t in unique)
    if not unique or total <= 0:
        return 0.0, 0.0
    matched, bm25 = 0.0, 0.0
    for term in unique:
        tf = term_freqs.get(term, 0)
        if tf:
            weight = idf.get(term, 0.0)
            matched += weight
            bm25 += weight * tf * (k1 + 1) / (tf + k1 * (1 - b + b * term_count / max(avgdl, 1.0)))
    return matched / total, bm25


@lru_cache(maxsize=8192)
def term_positions(text: str) -> dict[str, tuple[int, ...]]:
    """Positions of each analyzed term of a chunk (cached: a chunk's text never changes)."""
    positions: dict[str, list[int]] = {}
    for position, term in enumerate(analyze(text)):
        positions.setdefault(term, []).append(position)
    return {term: tuple(found) for term, found in positions.items()}


def passage_coverage(text: str, terms: Sequence[str], idf: dict[str, float], window: int) -> float:
    """Share of the query's idf mass found together in one passage of `window` analyzed terms.

    Whole-chunk coverage rewards a long chunk whose words match the query in different places
    (a multi-day itinerary naming the park on day 2 and the cold on day 5); an answer states
    them together. The best sliding window of the chunk's terms is taken.
    """
    wanted = {t: idf.get(t, 0.0) for t in set(terms)}
    total = sum(wanted.values())
    if total <= 0:
        return 0.0
    index = term_positions(text)
    hits = sorted((p, t) for t in wanted if t in index for p in index[t])
    return min(1.0, best_window_mass(hits, wanted, window) / total)


def best_window_mass(hits: list[tuple[int, str]], wanted: dict[str, float], window: int) -> float:
    """The largest idf mass of distinct terms within `window` positions of sorted `hits`
    (position, term); the running sum's rounding is part of the value."""
    counts: dict[str, int] = {}
    mass = best = 0.0
    start = 0
    for position, term in hits:
        counts[term] = counts.get(term, 0) + 1
        if counts[term] == 1:
            mass += wanted[term]
        while hits[start][0] <= position - window:
            old = hits[start][1]
            counts[old] -= 1
            if counts[old] == 0:
                mass -= wanted[old]
            start += 1
        if mass > best:
            best = mass
    return best


def confidence(
    vector: float, coverage: float, bm25: float, model: ConfidenceModel, passage: float = 0.0
) -> float:
    """A calibrated probability from absolute signals: same meaning for every query (no min-max)."""
    saturated = bm25 / (bm25 + model.bm25_half) if bm25 > 0 else 0.0
    z = model.bias + model.w_vector * vector + model.w_coverage * coverage
    z += model.w_bm25 * saturated + model.w_passage * passage
    return sigmoid(z)


def candidate_features(
    candidate: Candidate,
    plan: QueryPlan,
    variant_terms: Sequence[Sequence[str]],
    idf: dict[str, float],
    avgdl: float,
    config: RetrievalConfig,
) -> dict[str, float]:
    """The answerability features of one candidate, from every query variant, and whether it
    states a typed answer to the direct question (`TYPED_ANSWER`, read by the confidence only)."""
    coverages, bm25s, passages = [], [], []
    for terms in variant_terms:
        coverage, bm25 = lexical_features(candidate, terms, idf, avgdl, config)
        coverages.append(coverage)
        bm25s.append(bm25)
        passages.append(passage_coverage(candidate.text, terms, idf, config.passage_window))
    asked = asked_kinds(plan.normalized_text)
    features = answer_features(
        sims=candidate.sims,
        sentence_sims=candidate.sentence_sims,
        coverages=coverages,
        bm25s=bm25s,
        passages=passages,
        asked=asked,
        text=candidate.text,
        category=candidate.version.category,
        seen=len(candidate.seen_in_queries),
        variants=len(plan.variants),
        lexical_top1=candidate.lexical_top1,
    )
    focus = focus_terms(plan.normalized_text, variant_terms[0] if variant_terms else ())
    features[TYPED_ANSWER] = float(states_typed_answer(asked, focus, candidate.text))
    return features


def answerability(candidate: Candidate, config: RetrievalConfig) -> float:
    """The calibrated probability that the chunk answers (the learned model), or the session-3
    confidence model when `use_answerability` is off."""
    if config.use_answerability:
        return config.answerability.confidence(candidate.features)
    return confidence(
        candidate.vector, candidate.coverage, candidate.bm25, config.confidence, candidate.passage
    )


def faq_entry_capped(
    cand: Candidate,
    terms: Sequence[str],
    idf: dict[str, float],
    avgdl: float,
    config: RetrievalConfig,
    shift: float,
) -> float:
    """An FAQ chunk of two or more questions that the lexical confidence would let ground a
    draft is held to its best entry (faq_entries.py): the lower of the chunk's confidence and
    that entry's (its coverage and BM25, the chunk's cosine and the same shift). Only a chunk at
    `unknown_threshold` or above is read, since only its usability can change."""
    if (
        not config.faq_entry_confidence
        or config.use_answerability
        or cand.version.category is not Category.FAQ
        or cand.confidence < config.unknown_threshold
    ):
        return cand.confidence

    def score(coverage: float, bm25: float) -> float:
        return confidence(cand.vector, coverage, bm25, config.confidence, cand.passage)

    entry = best_entry_lexical(cand.text, terms, idf, avgdl, config.bm25_k1, config.bm25_b, score)
    if entry is None:
        return cand.confidence
    cand.answer_lexical = entry
    return min(cand.confidence, shift_log_odds(score(*entry), shift))


def best_entry_lexical(
    text: str,
    terms: Sequence[str],
    idf: dict[str, float],
    avgdl: float,
    k1: float,
    b: float,
    score: Callable[[float, float], float],
) -> tuple[float, float] | None:
    """The (coverage, BM25) of the FAQ entry `score` rates highest (the first on ties), or None
    for a chunk that is not a list of questions (`faq_entries`)."""
    found = [
        lexical_scores(e.counts, e.length, terms, idf, avgdl, k1, b) for e in faq_entries(text)
    ]
    return max(found, key=lambda lexical: score(*lexical), default=None)


def is_stale(last_reviewed_at: date | None, as_of: date, config: RetrievalConfig) -> bool:
    """Never reviewed, or last reviewed more than `stale_after_days` before `as_of`."""
    return last_reviewed_at is None or (as_of - last_reviewed_at).days > config.stale_after_days


def rank_score(
    candidate: Candidate, as_of: date, config: RetrievalConfig, base: float | None = None
) -> float:
    """Relevance (or `base`: the learned ranker's probability) plus the soft signals of spec
    6.2 (ordering only, never the tier); with `soft_signal_logit_scale` the signals move the
    probability's log-odds instead (`scale` log-odds per unit of signal)."""
    probability = candidate.relevance if base is None else base
    scale = config.soft_signal_logit_scale
    if scale <= 0:
        return soft_signals(candidate, as_of, config, probability)
    return shift_log_odds(probability, scale * soft_signals(candidate, as_of, config))


def shift_log_odds(probability: float, shift: float) -> float:
    """`probability` moved by `shift` log-odds (clipped `LOGIT_EPSILON` from 0 and 1 first)."""
    clipped = min(max(probability, LOGIT_EPSILON), 1 - LOGIT_EPSILON)
    return sigmoid(math.log(clipped / (1 - clipped)) + shift)


def soft_signals(
    candidate: Candidate, as_of: date, config: RetrievalConfig, start: float = 0.0
) -> float:
    """`start` plus spec 6.2's soft signals: priority, review and effective-date recency, the
    stale penalty and the trip-date match."""
    version = candidate.version
    score = start + config.priority_weight * max(
        -config.priority_cap, min(config.priority_cap, version.priority)
    )
    if version.last_reviewed_at is not None:
        age = max(0, (as_of - version.last_reviewed_at).days)
        score += config.review_recency_weight * math.exp(-age / config.stale_after_days)
    if version.effective_date is not None:
        age = max(0, (as_of - version.effective_date).days)
        score += config.effective_recency_weight * math.exp(-age / 365)
    if candidate.stale:
        score -= config.stale_penalty
    if candidate.trip_match:
        score += config.trip_match_boost
    return score


def confidence_shift(
    candidate: Candidate, config: RetrievalConfig, dedicated: frozenset[Category]
) -> float:
    """Log-odds added to the verdict's confidence of `candidate`: `typed_answer_logit` when it
    states a typed answer (typed_answer.py), `dedicated_source_logit` when its category is one
    written to answer the e-mail's intents (`dedicated`, dedicated_source.py)."""
    shift = 0.0
    if candidate.features.get(TYPED_ANSWER) and candidate.version.category in TYPED_ANSWER_SOURCES:
        shift += config.typed_answer_logit
    if candidate.version.category in dedicated:
        shift += config.dedicated_source_logit
    return shift


def score_pool(
    pool: Sequence[Candidate],
    direct_terms: Sequence[str],
    idf: dict[str, float],
    as_of: date,
    config: RetrievalConfig,
    *,
    policy_like: bool = False,
    intents: Sequence[str] = (),
    avgdl: float | None = None,
) -> None:
    """Pool features, confidence (answerability), relevance and rank score of every candidate
    (`intents`: the e-mail's, for the dedicated-source shift of the confidence; `avgdl`: the
    average chunk length, for reading an FAQ chunk entry by entry, `faq_entry_capped`)."""
    add_gap_features([c.features for c in pool])
    add_query_term_features(
        [c.features for c in pool], [c.term_freqs for c in pool], direct_terms, idf
    )
    add_rank_features(pool, policy_like=policy_like, direct_terms=direct_terms, idf=idf)
    dedicated = dedicated_categories(intents)
    for cand in pool:
        cand.confidence = answerability(cand, config)
        shift = confidence_shift(cand, config, dedicated)
        if shift:
            cand.confidence = shift_log_odds(cand.confidence, shift)
        if avgdl is not None:
            cand.confidence = faq_entry_capped(cand, direct_terms, idf, avgdl, config, shift)
        order = None
        if config.answerability_orders:
            model = config.answerability
            cand.relevance = model.probability(cand.features)
            if config.learned_ranker:
                order = model.relevance(cand.features)
        else:
            cand.relevance = confidence(
                cand.vector, cand.coverage, cand.bm25, config.relevance, cand.passage
            )
        cand.rank_score = rank_score(cand, as_of, config, order)
