"""An FAQ chunk read entry by entry for the verdict's confidence (faq_entries.py)."""

from __future__ import annotations

from datetime import date

from kb_retrieval.models import Category
from kb_retrieval.query.plan import build_query_plan
from kb_retrieval.retrieval.candidates import Candidate
from kb_retrieval.retrieval.config import RetrievalConfig
from kb_retrieval.retrieval.faq_entries import faq_entries, split_entries
from kb_retrieval.retrieval.pool_features import set_pool_features
from kb_retrieval.retrieval.scoring import (
    best_entry_lexical,
    faq_entry_capped,
    lexical_features,
    score_pool,
)
from kb_retrieval.text.analyzer import analyze
from tests.pool_candidates import built_candidate

CONFIG = RetrievalConfig()

# Each entry shares one word with the question below, none answers it.
SCATTERED_FAQ = """Travel tips

Can I bring a bicycle?

Bicycles travel free in the luggage van of the minibus.

Is breakfast included?

A continental breakfast is served every morning in the farmhouse kitchen.

How warm are the evenings?

Evenings in the hills are cool; bring a jumper for dinner on the terrace.

Can I hire a locker?

Lockers for valuables are at reception, free of charge."""

ANSWERING_FAQ = """Practical questions

Is there a sauna at the farmhouse?

Yes. The farmhouse sauna is free for guests and open every evening from 17:00 to 21:00.

Can I bring a bicycle?

Bicycles travel free in the luggage van of the minibus."""

QUESTION = "Is the sauna free for guests staying at the farmhouse, evenings included?"


def _chunk(text: str, category: Category = Category.FAQ) -> Candidate:
    cand = built_candidate(1, "c_0", "v_1", "d", category, text)
    cand.sims = [0.3]
    cand.vector = 0.3
    return cand


def _idf(*texts: str) -> dict[str, float]:
    return {t: 1.0 for text in texts for t in analyze(text)}


def test_entries_start_at_questions_and_headings_and_a_heading_keeps_its_first_question() -> None:
    entries = split_entries(SCATTERED_FAQ)
    assert len(entries) == 4
    assert entries[0][:2] == ["Travel tips", "Can I bring a bicycle?"]
    assert [entry[0] for entry in entries[1:]] == [
        "Is breakfast included?",
        "How warm are the evenings?",
        "Can I hire a locker?",
    ]
    assert all(entry[-1].endswith(".") for entry in entries)


def test_a_chunk_that_is_not_a_list_of_questions_has_no_entries() -> None:
    assert faq_entries("Opening hours\n\nThe office opens at 09:00.") == ()
    assert faq_entries("Is the office open on Sundays?\n\nNo, it is closed.") == ()
    assert len(faq_entries(SCATTERED_FAQ)) == 4


def test_scattered_words_score_lower_in_the_best_entry_than_in_the_whole_chunk() -> None:
    terms = analyze(QUESTION)
    idf = _idf(QUESTION, SCATTERED_FAQ)
    chunk = _chunk(SCATTERED_FAQ)
    whole, _ = lexical_features(chunk, terms, idf, 60.0, CONFIG)
    entry = best_entry_lexical(SCATTERED_FAQ, terms, idf, 60.0, 1.2, 0.75, lambda c, b: c)
    assert entry is not None and entry[0] < whole


def test_an_answering_entry_keeps_the_question_covered() -> None:
    terms = analyze(QUESTION)
    idf = _idf(QUESTION, ANSWERING_FAQ)
    entry = best_entry_lexical(ANSWERING_FAQ, terms, idf, 60.0, 1.2, 0.75, lambda c, b: c)
    chunk = _chunk(ANSWERING_FAQ)
    whole, _ = lexical_features(chunk, terms, idf, 60.0, CONFIG)
    assert entry is not None and entry[0] == whole


def _capped(text: str, category: Category, before: float, config: RetrievalConfig) -> Candidate:
    plan = build_query_plan(QUESTION)
    terms = [analyze(v.text) for v in plan.variants]
    chunk = _chunk(text, category)
    idf = _idf(QUESTION, text)
    set_pool_features([chunk], plan, terms, idf, 60.0, config)
    chunk.confidence = before
    chunk.confidence = faq_entry_capped(chunk, terms[0], idf, 60.0, config, 0.0)
    return chunk


def test_a_usable_faq_chunk_is_held_to_its_best_entry() -> None:
    scattered = _capped(SCATTERED_FAQ, Category.FAQ, 0.9, CONFIG)
    assert scattered.confidence < 0.65 and scattered.answer_lexical is not None
    assert scattered.answer_lexical[0] < scattered.coverage
    # The pack's score breakdown keeps the whole chunk's values.
    assert (scattered.coverage, scattered.bm25) == lexical_features(
        scattered,
        analyze(build_query_plan(QUESTION).variants[0].text),
        _idf(QUESTION, SCATTERED_FAQ),
        60.0,
        CONFIG,
    )
    answering = _capped(ANSWERING_FAQ, Category.FAQ, 0.9, CONFIG)
    assert answering.confidence >= 0.72  # the answering entry alone grounds a draft


def test_only_usable_faq_chunks_are_read_and_the_flag_turns_it_off() -> None:
    assert _capped(SCATTERED_FAQ, Category.TERMS_POLICY, 0.9, CONFIG).confidence == 0.9
    assert _capped(SCATTERED_FAQ, Category.FAQ, 0.6, CONFIG).confidence == 0.6
    off = CONFIG.model_copy(update={"faq_entry_confidence": False})
    assert _capped(SCATTERED_FAQ, Category.FAQ, 0.9, off).confidence == 0.9


def test_the_retrieval_path_reads_the_entries(monkeypatch) -> None:
    """score_pool applies the cap when given the average chunk length (as `retrieve` does)."""
    plan = build_query_plan(QUESTION)
    terms = [analyze(v.text) for v in plan.variants]
    chunk = _chunk(SCATTERED_FAQ)
    idf = _idf(QUESTION, SCATTERED_FAQ)
    set_pool_features([chunk], plan, terms, idf, 60.0, CONFIG)
    monkeypatch.setattr("kb_retrieval.retrieval.scoring.answerability", lambda cand, config: 0.95)
    score_pool([chunk], terms[0], idf, date(2026, 11, 1), CONFIG, avgdl=60.0)
    assert chunk.confidence < 0.65
    again = _chunk(SCATTERED_FAQ)
    set_pool_features([again], plan, terms, idf, 60.0, CONFIG)
    score_pool([again], terms[0], idf, date(2026, 11, 1), CONFIG)
    assert again.confidence == 0.95
