"""Per-variant lexical and passage features of a whole candidate pool at once (the ranking step).

`scoring.lexical_features` and `scoring.passage_coverage` give one candidate's values for one
variant; the ranking step needs them for every candidate (up to `candidate_cap`) and variant
(2-4), and computed the direct variant twice. Here each variant's term weights and totals are
computed once per retrieval, the lexical sums run over all candidates at once in numpy, and
each chunk's term hits are sorted once for every variant. Every value is the per-candidate
function's, bit for bit: the same float64 operations in the same order (a sum accumulated term
after term in sorted-term order, the passage window's running mass updated hit after hit),
tested against the per-candidate functions on fresh examples.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from kb_retrieval.query.answer_type import asked_kinds
from kb_retrieval.query.plan import QueryPlan
from kb_retrieval.retrieval.answerability import answer_features
from kb_retrieval.retrieval.candidates import Candidate
from kb_retrieval.retrieval.config import RetrievalConfig
from kb_retrieval.retrieval.scoring import best_window_mass, term_positions
from kb_retrieval.retrieval.typed_answer import TYPED_ANSWER, focus_terms, states_typed_answer


def set_pool_features(
    pool: Sequence[Candidate],
    plan: QueryPlan,
    variant_terms: Sequence[Sequence[str]],
    idf: dict[str, float],
    avgdl: float,
    config: RetrievalConfig,
) -> None:
    """Each candidate's direct-variant coverage, BM25 and passage coverage and its
    answerability features: what `lexical_features`, `passage_coverage` and
    `candidate_features` give it (their `sims`, `sentence_sims`, `seen_in_queries` and
    `lexical_top1` set before)."""
    coverage, bm25 = pool_lexical(pool, variant_terms, idf, avgdl, config)
    passages = pool_passages(pool, variant_terms, idf, config.passage_window)
    asked = asked_kinds(plan.normalized_text)
    focus = focus_terms(plan.normalized_text, variant_terms[0] if variant_terms else ())
    for cand, covs, scores, spans in zip(
        pool, coverage.tolist(), bm25.tolist(), passages.tolist(), strict=True
    ):
        cand.coverage, cand.bm25, cand.passage = covs[0], scores[0], spans[0]
        cand.features = answer_features(
            sims=cand.sims,
            sentence_sims=cand.sentence_sims,
            coverages=covs,
            bm25s=scores,
            passages=spans,
            asked=asked,
            text=cand.text,
            category=cand.version.category,
            seen=len(cand.seen_in_queries),
            variants=len(plan.variants),
            lexical_top1=cand.lexical_top1,
        )
        cand.features[TYPED_ANSWER] = float(states_typed_answer(asked, focus, cand.text))


def pool_lexical(
    pool: Sequence[Candidate],
    variant_terms: Sequence[Sequence[str]],
    idf: dict[str, float],
    avgdl: float,
    config: RetrievalConfig,
) -> tuple[np.ndarray, np.ndarray]:
    """(coverage, bm25), each candidates x variants: `lexical_features` of every pair."""
    coverage = np.zeros((len(pool), len(variant_terms)))
    bm25 = np.zeros((len(pool), len(variant_terms)))
    vocabulary = sorted({term for terms in variant_terms for term in terms})
    column = {term: j for j, term in enumerate(vocabulary)}
    tf = np.array(
        [[c.term_freqs.get(term, 0) for term in vocabulary] for c in pool], dtype=np.float64
    ).reshape(len(pool), len(vocabulary))
    k1, b = config.bm25_k1, config.bm25_b
    lengths = np.array([c.term_count for c in pool], dtype=np.float64)
    # `k1 * (1 - b + b * term_count / max(avgdl, 1.0))`, evaluated as Python evaluates it.
    norm = k1 * ((1 - b) + (b * lengths) / max(avgdl, 1.0))
    for v, terms in enumerate(variant_terms):
        unique = sorted(set(terms))
        total = sum(idf.get(t, 0.0) for t in unique)
        if not unique or total <= 0:
            continue
        matched = np.zeros(len(pool))
        score = np.zeros(len(pool))
        for term in unique:
            freqs = tf[:, column[term]]
            found = freqs != 0
            weight = idf.get(term, 0.0)
            matched = np.where(found, matched + weight, matched)
            gain = weight * freqs * (k1 + 1) / (freqs + norm)
            score = np.where(found, score + gain, score)
        coverage[:, v] = matched / total
        bm25[:, v] = score
    return coverage, bm25


def pool_passages(
    pool: Sequence[Candidate],
    variant_terms: Sequence[Sequence[str]],
    idf: dict[str, float],
    window: int,
) -> np.ndarray:
    """candidates x variants: `passage_coverage(candidate.text, terms, idf, window)`."""
    # Built as `passage_coverage` builds them (the total sums in the set's iteration order).
    wanted = [{t: idf.get(t, 0.0) for t in set(terms)} for terms in variant_terms]
    totals = [sum(w.values()) for w in wanted]
    union = set().union(*wanted) if wanted else set()
    out = np.zeros((len(pool), len(variant_terms)))
    for i, cand in enumerate(pool):
        index = term_positions(cand.text)
        hits = sorted((p, t) for t in union if t in index for p in index[t])
        if not hits:
            continue
        for v, weights in enumerate(wanted):
            if totals[v] > 0:
                mine = [hit for hit in hits if hit[1] in weights]
                out[i, v] = min(1.0, best_window_mass(mine, weights, window) / totals[v])
    return out
