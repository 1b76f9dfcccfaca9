"""Floors, precedence tiers, near-duplicate penalty and MMR-lite: candidates to evidence pack."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from kb_retrieval.retrieval.candidates import Candidate
from kb_retrieval.retrieval.config import RetrievalConfig


def term_jaccard(terms_a: frozenset[str], terms_b: frozenset[str]) -> float:
    """Overlap of two chunks' term sets (near-duplicate and MMR signal)."""
    if not terms_a or not terms_b:
        return 0.0
    shared = len(terms_a & terms_b)
    return shared / (len(terms_a) + len(terms_b) - shared)


def floor_relevance(candidate: Candidate, config: RetrievalConfig) -> float:
    """The probability the floors read (pack membership): the learned ranker's with
    `ranker_floors`, else the candidate's `relevance`."""
    if config.answerability_orders and config.learned_ranker and config.ranker_floors:
        return config.answerability.relevance(candidate.features)
    return candidate.relevance


def passes_floors(candidate: Candidate, config: RetrievalConfig) -> bool:
    """spec 6.4: the relevance floor (`score_floor`), and a vector floor unless the keyword
    match is very strong."""
    if floor_relevance(candidate, config) < config.score_floor:
        return False
    return passes_vector_floor(candidate, config)


def passes_minimal_floor(candidate: Candidate, config: RetrievalConfig) -> bool:
    """spec 7: eligible for a pack at all (`relevance_floor`, and the vector floor)."""
    return floor_relevance(candidate, config) >= config.relevance_floor and passes_vector_floor(
        candidate, config
    )


def is_low_relevance(candidate: Candidate, config: RetrievalConfig) -> bool:
    """Under the low-relevance line (spec 7.5): kept in the pack, marked, never a draft's
    grounding. The line reads `relevance` (the chunk probability, the scale `score_floor` was
    set on) even when the learned ranker carries the floors: the ranker's probability is spread
    wider, so chunks the verdict's confidence finds usable would fall under it."""
    return candidate.relevance < config.score_floor


def passes_vector_floor(candidate: Candidate, config: RetrievalConfig) -> bool:
    return candidate.vector >= config.vector_floor or (
        candidate.lexical_top1 and candidate.coverage >= config.vector_floor_keyword_coverage
    )


def keyword_override(candidate: Candidate, config: RetrievalConfig) -> bool:
    """spec 6.4: the strongest keyword candidate is kept when its normalised keyword score >= 0.5."""
    return (
        config.keyword_top1_override
        and candidate.lexical_top1
        and candidate.coverage >= config.keyword_top1_min_coverage
    )


def tier_of(candidate: Candidate, tiered: bool) -> int:
    return candidate.version.category.tier if tiered else 0


def select_pack(
    candidates: Sequence[Candidate], config: RetrievalConfig, *, tiered: bool
) -> tuple[list[Candidate], dict[str, int]]:
    """Choose at most `pack_max` chunks; for policy-like questions tiers are never inverted.

    Chunks passing the floors first; then the best candidates passing the minimal floor
    (`relevance_floor`) fill the pack to `pack_fill` (marked low relevance in the pack). Greedy MMR inside the best remaining tier: value = lambda * rank_score - (1 - lambda) *
    max overlap with chosen chunks, minus the near-duplicate penalty; at most
    `max_per_document` chunks per document unless the alternative is much weaker.
    """
    passing = [c for c in candidates if passes_floors(c, config)]
    override = [c for c in candidates if keyword_override(c, config) and c not in passing]
    pool = sorted(passing + override[:1], key=lambda c: (-c.rank_score, c.key))
    chosen: list[Candidate] = []
    per_doc: Counter[str] = Counter()
    deferred: list[Candidate] = []
    terms = {id(c): frozenset(c.term_freqs) for c in pool}
    tiers = {id(c): tier_of(c, tiered) for c in pool}
    overlap_with_chosen = {id(c): 0.0 for c in pool}
    while pool and len(chosen) < config.pack_max:
        best_tier = min(tiers[id(c)] for c in pool)
        best_score = max(c.rank_score for c in pool if tiers[id(c)] == best_tier)
        best_value, best = None, None
        for cand in pool:
            if tiers[id(cand)] != best_tier:
                continue
            overlap = overlap_with_chosen[id(cand)]
            value = config.mmr_lambda * cand.rank_score - (1 - config.mmr_lambda) * overlap
            if overlap >= config.near_duplicate_jaccard:
                value -= config.near_duplicate_penalty
            if best_value is None or value > best_value + 1e-12:
                best_value, best = value, cand
        assert best is not None
        pool.remove(best)
        doc = best.version.doc_id
        if (
            per_doc[doc] >= config.max_per_document
            and best.rank_score > best_score - config.per_document_drop
        ):
            others = [c for c in pool if c.version.doc_id != doc and tiers[id(c)] == best_tier]
            if (
                others
                and max(c.rank_score for c in others) >= best.rank_score - config.per_document_drop
            ):
                deferred.append(best)
                continue
        chosen.append(best)
        per_doc[doc] += 1
        for cand in pool:
            overlap = term_jaccard(terms[id(cand)], terms[id(best)])
            overlap_with_chosen[id(cand)] = max(overlap_with_chosen[id(cand)], overlap)
    for cand in deferred:
        if len(chosen) >= config.pack_max:
            break
        chosen.append(cand)
    filled = _fill_to_minimum(candidates, chosen, config)
    if tiered:
        chosen.sort(key=lambda c: (tier_of(c, True), -c.rank_score, c.key))
    stats = {
        "passing_floors": len(passing),
        "keyword_override": len(override[:1]),
        "deferred": len(deferred),
        "low_relevance_fill": filled,
    }
    return chosen, stats


def _fill_to_minimum(
    candidates: Sequence[Candidate], chosen: list[Candidate], config: RetrievalConfig
) -> int:
    """Append the best remaining candidates passing the minimal floor until the pack holds
    `pack_fill` chunks (at least `pack_min`, at most `pack_max`)."""
    target = min(config.pack_max, max(config.pack_min, config.pack_fill))
    if len(chosen) >= target:
        return 0
    taken = {id(c) for c in chosen}
    extra = sorted(
        (c for c in candidates if id(c) not in taken and passes_minimal_floor(c, config)),
        key=lambda c: (-c.rank_score, c.key),
    )[: target - len(chosen)]
    chosen.extend(extra)
    return len(extra)
