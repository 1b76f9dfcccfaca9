"""The learned pairwise ranker (ranker.py, answerability_fit.fit_ranker): fresh examples only."""

from __future__ import annotations

from dataclasses import replace
from datetime import date

import numpy as np
import pytest

from kb_eval.answerability_fit import RANK_FEATURES, Row, fit_answerability, fit_ranker
from kb_eval.calibration import ece_noise_floor
from kb_eval.cross_validation import _best_chunk
from kb_retrieval.models import Category
from kb_retrieval.query.plan import build_query_plan
from kb_retrieval.retrieval.answerability import FEATURE_NAMES, AnswerabilityModel, default_model
from kb_retrieval.retrieval.candidates import Candidate, VersionInfo
from kb_retrieval.retrieval.config import RetrievalConfig
from kb_retrieval.retrieval.ranker import RANK_ONLY_FEATURES, RankerModel, add_rank_features
from kb_retrieval.retrieval.scoring import score_pool
from kb_retrieval.retrieval.selection import floor_relevance, is_low_relevance, select_pack
from kb_retrieval.retrieval.verdict import decide


def _candidate(
    chunk: str,
    category: Category,
    *,
    doc: str,
    section: str | None = None,
    index: int = 1,
    vector: float = 0.5,
    words: int = 40,
) -> Candidate:
    version = VersionInfo(f"{doc}_v1", doc, f"{doc} guide", category, 0, None, None, None, False)
    text = " ".join(["paddle"] * words)
    cand = Candidate(
        chunk_pk=abs(hash(chunk)) % 10_000,
        version=version,
        chunk_id=chunk,
        chunk_index=index,
        section_title=section,
        page_start=None,
        page_end=None,
        source_locator=f"docv:{doc}_v1#chunk:{index:03d}|p:-|sec:-",
        token_count=words,
        text=text,
        policy_likeness_hint="High",
        term_count=words,
        term_freqs={"paddl": words},
    )
    cand.features = dict.fromkeys(FEATURE_NAMES, 0.0)
    cand.features["vector_best"] = vector
    cand.features["high_precedence"] = float(category is Category.TERMS_POLICY)
    cand.vector = vector
    return cand


def test_rank_features_read_titles_length_position_and_the_documents_best_chunk():
    pool = [
        _candidate(
            "terms_3",
            Category.TERMS_POLICY,
            doc="terms",
            section="Deposit and balance",
            vector=0.40,
            words=300,
        ),
        _candidate("terms_0", Category.TERMS_POLICY, doc="terms", index=0, vector=0.55),
        _candidate("itin_0", Category.TRIP_ITINERARY, doc="itin", vector=0.60, words=80),
    ]
    pool[2].features["itinerary"] = 1.0
    idf = {"deposit": 2.0, "balanc": 1.0, "kayak": 1.0}
    add_rank_features(pool, policy_like=True, direct_terms=["deposit", "balanc", "kayak"], idf=idf)
    first, overview, itinerary = (c.features for c in pool)
    assert first["title_coverage"] == pytest.approx(3 / 4)  # "deposit" and "balance", not "kayak"
    assert overview["title_coverage"] == 0.0
    assert first["document_vector_gap"] == pytest.approx(0.15)  # behind terms_0 of its version
    assert overview["document_vector_gap"] == 0.0 and itinerary["document_vector_gap"] == 0.0
    assert overview["first_chunk"] == 1.0 and first["first_chunk"] == 0.0
    assert first["log_length"] > itinerary["log_length"]
    assert first["policy_high"] == 1.0 and itinerary["policy_itinerary"] == 1.0
    add_rank_features(pool, policy_like=False, direct_terms=["deposit"], idf=idf)
    assert all(c.features["policy_high"] == c.features["policy_itinerary"] == 0.0 for c in pool)
    assert set(RANK_ONLY_FEATURES) <= set(first)


def _ranking_rows(rng: np.random.Generator, tenant: str, cases: int) -> list[Row]:
    """Each case: one answering chunk with a strong sentence-level match but fewer shared words,
    and distractors sharing more words with a weak sentence-level match."""
    rows = []
    for case in range(cases):
        answer_at = case % 6
        for rank in range(6):
            label = rank == answer_at
            features = {
                "bm25_best": rng.normal(0.35 if label else 0.45, 0.05),
                "sentence_best": rng.normal(0.70 if label else 0.45, 0.05),
                "pool_absent_share": 0.1 * (case % 3),
            }
            rows.append(Row(tenant, f"{tenant}-{case}", rank, features, label))
    return rows


def test_the_pairwise_fit_learns_which_candidate_answers_and_is_deterministic():
    rng = np.random.default_rng(3)
    rows = _ranking_rows(rng, "a", 40) + _ranking_rows(rng, "b", 40)
    names = ("bm25_best", "sentence_best", "log_length")
    ranker = fit_ranker(rows, "synthetic", names)
    # bm25_best is a match strength: its slope would be negative here, so it is dropped.
    assert ranker.weights["sentence_best"] > 0 and "bm25_best" not in ranker.weights
    assert fit_ranker(rows, "synthetic", names) == ranker
    by_case: dict[str, list[Row]] = {}
    for row in rows:
        by_case.setdefault(row.case_id, []).append(row)
    hits = [max(group, key=lambda r: ranker.score(r.features)).label for group in by_case.values()]
    assert np.mean(hits) > 0.9
    # Relevance is a probability increasing in the score, calibrated to the base rate (1 in 6).
    mean = np.mean([ranker.relevance(r.features) for r in rows])
    assert abs(mean - 1 / 6) < 0.03
    weak, strong = {"sentence_best": 0.4}, {"sentence_best": 0.8}
    assert ranker.relevance(strong) > ranker.relevance(weak)
    with pytest.raises(ValueError, match="no case has both"):
        fit_ranker([r for r in rows if not r.label], "synthetic", names)


def test_fit_answerability_adds_the_ranker_only_when_asked():
    rng = np.random.default_rng(5)
    rows = _ranking_rows(rng, "a", 30) + _ranking_rows(rng, "b", 30)
    names = ("bm25_best", "sentence_best")
    assert fit_answerability(rows, "x", names=names).ranker is not None
    assert fit_answerability(rows, "x", names=names, ranker=False).ranker is None
    # Nothing to rank (no case with a quote-holding candidate): no ranker, no error.
    unlabelled = [replace(r, label=False) for r in rows]
    assert fit_answerability(unlabelled, "x", names=names).ranker is None
    assert "pool_absent_share" not in RANK_FEATURES  # constant within a case: no ranking signal


def test_the_ranker_orders_only_with_the_flag_and_never_inverts_tiers():
    ranker = RankerModel(weights={"title_coverage": 4.0}, bias=-1.0, slope=1.0)
    model = AnswerabilityModel(bias=0.0, weights={"vector_best": 2.0}, ranker=ranker)
    pool = [
        _candidate("brochure_0", Category.MARKETING, doc="brochure", section="Deposit", vector=0.7),
        _candidate("terms_2", Category.TERMS_POLICY, doc="terms", vector=0.6),
        _candidate("terms_5", Category.TERMS_POLICY, doc="terms", section="Deposit", vector=0.4),
    ]
    idf = {"deposit": 1.0}
    on = RetrievalConfig(answerability=model, learned_ranker=True)
    off = replace_config(on, learned_ranker=False)
    for config, expected_first in ((off, "terms_2"), (on, "terms_5")):
        fresh = [replace(c, features=dict(c.features)) for c in pool]
        score_pool(fresh, ["deposit"], idf, date(2026, 11, 1), config, policy_like=True)
        pack, _ = select_pack(fresh, config, tiered=True)
        assert pack[0].chunk_id == expected_first
        # The brochure ranks first by the ranker's score, yet policy text precedes it.
        assert [c.version.category.tier for c in pack] == sorted(
            c.version.category.tier for c in pack
        )


def replace_config(config: RetrievalConfig, **update: object) -> RetrievalConfig:
    return config.model_copy(update=update)


def test_the_stored_ranker_prefers_a_stronger_match_and_is_off_by_default():
    assert RetrievalConfig().learned_ranker is False
    ranker = default_model().ranker
    assert ranker is not None and set(ranker.weights) <= set(RANK_FEATURES)
    base = {name: 0.3 for name in ranker.weights}
    for name in ("vector_direct", "passage_direct", "title_coverage"):
        if ranker.weights.get(name, 0.0):
            assert ranker.relevance({**base, name: 0.9}) > ranker.relevance(base)


def test_cv_figures_count_answerable_cases_whose_first_pack_chunk_holds_a_quote():
    details = [
        {"expected_outcome": "OK_TO_DRAFT", "pack_gains": [1, 0, 1]},
        {"expected_outcome": "OK_TO_DRAFT", "pack_gains": [0, 1]},
        {"expected_outcome": "OK_TO_DRAFT", "pack_gains": []},
        {"expected_outcome": "UNKNOWN", "pack_gains": [1]},
    ]
    figures = _best_chunk(details)
    assert figures["best_chunk_quote"] == 1
    assert figures["best_chunk_quote_rate"] == pytest.approx(1 / 3)
    assert _best_chunk([])["best_chunk_quote_rate"] == 0.0


def test_the_ece_noise_floor_is_what_a_calibrated_predictor_shows_on_few_cases():
    rng = np.random.default_rng(1)
    confidences = rng.uniform(0.3, 0.95, size=40).round(3).tolist()
    few = [(c, False) for c in confidences]
    floor = ece_noise_floor(few)
    assert floor == ece_noise_floor(few)  # seeded: deterministic
    assert 0.05 < floor < 0.25  # 40 cases: sampling alone gives this much
    many = [(c, False) for c in confidences * 50]
    assert ece_noise_floor(many) < floor / 3
    assert ece_noise_floor([]) == 0.0


def test_the_floors_stay_on_the_chunk_probability_unless_ranker_floors_is_set():
    ranker = RankerModel(weights={"title_coverage": 6.0}, bias=-4.0, slope=1.0)
    model = AnswerabilityModel(bias=0.0, weights={"vector_best": 2.0}, ranker=ranker)
    base = RetrievalConfig(answerability=model, learned_ranker=True)
    for ranker_floors in (False, True):
        config = replace_config(base, ranker_floors=ranker_floors)
        pool = [_candidate("terms_2", Category.TERMS_POLICY, doc="terms", vector=0.6)]
        score_pool(pool, ["deposit"], {"deposit": 1.0}, date(2026, 11, 1), config)
        chunk_probability = model.probability(pool[0].features)
        expected = ranker.relevance(pool[0].features) if ranker_floors else chunk_probability
        assert floor_relevance(pool[0], config) == pytest.approx(expected)
        # The low-relevance line reads the chunk probability either way (session 9).
        assert pool[0].relevance == pytest.approx(chunk_probability)
        # The order always follows the ranker's probability (plus the soft signals).
        assert pool[0].rank_score < chunk_probability


def test_with_ranker_floors_the_ranker_decides_membership_and_the_chunk_model_the_marker():
    """A chunk the ranker scores under the floor but the chunk model finds plausible enters as
    fill without the low-relevance mark; one the ranker likes but the chunk model does not is
    in the pack, marked (session 9)."""
    ranker = RankerModel(weights={"title_coverage": 8.0}, bias=-3.0, slope=1.0)
    model = AnswerabilityModel(bias=-3.5, weights={"vector_best": 6.0}, ranker=ranker)
    config = RetrievalConfig(
        answerability=model, learned_ranker=True, ranker_floors=True, score_floor=0.1
    )
    plain = _candidate("faq_1", Category.FAQ, doc="faq", vector=0.8)
    titled = _candidate("faq_2", Category.FAQ, doc="guide", section="Kayak deposit", vector=0.2)
    pool = [plain, titled]
    score_pool(
        pool, ["deposit", "kayak"], {"deposit": 1.0, "kayak": 1.0}, date(2026, 11, 1), config
    )
    assert floor_relevance(plain, config) < config.score_floor <= plain.relevance
    assert titled.relevance < config.score_floor <= floor_relevance(titled, config)
    pack, stats = select_pack(pool, config, tiered=False)
    assert [c.chunk_id for c in pack] == ["faq_2", "faq_1"]
    assert stats["passing_floors"] == 1 and stats["low_relevance_fill"] == 1
    assert not is_low_relevance(plain, config) and is_low_relevance(titled, config)
    # The verdict grounds a draft on the chunk the chunk model finds plausible, never on the
    # marked one, whatever the ranker's probability says.
    question = build_query_plan("Can we rent a sea kayak for a day on our own?")
    assert not question.policy_like
    plain.confidence, titled.confidence = 0.8, 0.3
    assert decide(question, pack, config).outcome.value == "OK_TO_DRAFT"
    plain.confidence, titled.confidence = 0.3, 0.8
    assert decide(question, pack, config).outcome.value == "UNKNOWN"
