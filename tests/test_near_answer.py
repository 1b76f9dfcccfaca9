"""The near answer (near_answer.py): the candidates' sentence nearest the guest's question sends
an e-mail with no usable chunk to review instead of UNKNOWN, and never makes a draft.

Unit tests use hand-made unit vectors; the last tests run the real model over the demo index.
Every e-mail here is written for these tests (no golden e-mail is repeated)."""

from __future__ import annotations

from dataclasses import replace
from datetime import date

import numpy as np
import pytest

from kb_retrieval.models import Category
from kb_retrieval.query.plan import build_query_plan
from kb_retrieval.retrieval.config import RetrievalConfig
from kb_retrieval.retrieval.near_answer import (
    NearAnswer,
    admit_near_answer,
    nearest_sentence,
    question_texts,
    reaches,
    readable,
)
from kb_retrieval.retrieval.pack import validate_pack
from kb_retrieval.retrieval.verdict import decide, review_near_answer
from tests.test_ranking_rules import cand

CONFIG = RetrievalConfig()
AS_OF = date(2026, 11, 15)


def test_question_texts_are_the_message_and_each_sentence_that_asks():
    text = "We land late on Friday.  Is the hotel desk open at night? Thanks a lot."
    assert question_texts(text) == [
        "We land late on Friday. Is the hotel desk open at night? Thanks a lot.",
        "Is the hotel desk open at night?",
    ]
    assert question_texts("Is the hotel desk open at night?") == [
        "Is the hotel desk open at night?"
    ]
    assert question_texts("   ") == []


def test_the_question_is_the_latest_guest_message_not_the_thread():
    thread = {
        "subject": "Dates",
        "messages": [
            {"role": "guest", "text": "Which boots do you recommend for the glacier day?"},
            {"role": "operator", "text": "Stiff leather boots that take crampons."},
            {"role": "guest", "text": "Great. Do you lend them?"},
        ],
    }
    plan = build_query_plan(thread)
    assert plan.question_text == "Great. Do you lend them?"


def test_the_nearest_sentence_is_the_closest_chunks_and_names_its_sentence():
    first = cand(
        "faq_0", Category.FAQ, 0.3, "Towels are provided at the lodge. Bring your sandals."
    )
    second = cand(
        "faq_1",
        Category.FAQ,
        0.3,
        "Breakfast is served at eight each day. Dinner is served at seven each day.",
    )
    nearest = {first.chunk_pk: (0, 0.61234), second.chunk_pk: (1, 0.70004)}
    near = nearest_sentence([first, second], nearest)
    assert near == NearAnswer("faq_1", "faq_v1", "Dinner is served at seven each day.", 0.7)


def test_a_tie_goes_to_the_first_candidate_and_a_chunk_without_vectors_is_skipped():
    first = cand("faq_0", Category.FAQ, 0.3, "Towels are provided.")
    second = cand("faq_1", Category.FAQ, 0.3, "Towels are free.")
    third = cand("faq_2", Category.FAQ, 0.3, "Towels cost extra.")
    nearest = {first.chunk_pk: (0, 0.8), second.chunk_pk: (0, 0.80001)}
    near = nearest_sentence([third, first, second], nearest)
    assert near is not None and near.chunk_id == "faq_0" and near.cosine == 0.8
    assert nearest_sentence([third], nearest) is None


def test_only_current_guest_facing_text_is_read():
    faq = cand("faq_0", Category.FAQ, 0.3, "Towels are provided.")
    internal = cand("ops_0", Category.OPERATIONS_INTERNAL, 0.3, "Towels are restocked daily.")
    quiet = cand("faq_1", Category.FAQ, 0.3, "Supplier rates. Do not quote them to guests.")
    old = replace(faq, version=replace(faq.version, superseded=True))
    assert readable(faq)
    assert not readable(internal) and not readable(quiet) and not readable(old)
    nearest = {c.chunk_pk: (0, 0.9) for c in (internal, quiet)}
    assert nearest_sentence([internal, quiet], nearest) is None


def test_the_near_answers_chunk_joins_the_pack_in_its_last_place():
    pack = [cand(f"terms_{i}", Category.TERMS_POLICY, 0.3) for i in range(3)]
    outside = [cand("faq_4", Category.FAQ, 0.2), cand("faq_5", Category.FAQ, 0.2)]
    near = NearAnswer("faq_5", "faq_v1", "Towels are provided.", 0.7)
    assert admit_near_answer(pack, outside, near, 10) == [*pack, outside[1]]
    assert admit_near_answer(pack, outside, near, 3) == [*pack[:2], outside[1]]
    inside = NearAnswer("terms_1", "terms_v1", "Clause.", 0.7)
    assert admit_near_answer(pack, outside, inside, 3) == pack


def _weak_pack() -> list:
    """A pack with no usable chunk: confident enough for nothing."""
    return [cand("faq_0", Category.FAQ, CONFIG.unknown_threshold - 0.2, "Towels are provided.")]


def _near(cosine: float) -> NearAnswer:
    return NearAnswer("faq_0", "faq_v1", "Towels are provided.", cosine)


def test_a_near_answer_at_the_line_sends_the_email_to_review_never_to_a_draft():
    plan = build_query_plan("Do we need to pack our own beach towels for the trip?")
    line = CONFIG.near_answer_threshold
    assert reaches(_near(line), line) and not reaches(_near(line - 0.001), line)
    assert not reaches(None, line)
    unknown = decide(plan, _weak_pack(), CONFIG)
    verdict = review_near_answer(unknown, _near(line), CONFIG)
    assert verdict.outcome.value == "NEEDS_REVIEW"
    assert [r.value for r in verdict.reason_codes] == ["LOW_CONFIDENCE"]
    below = review_near_answer(unknown, _near(line - 0.001), CONFIG)
    assert below.outcome.value == "UNKNOWN"
    assert [r.value for r in below.reason_codes] == ["NO_EVIDENCE"]
    off = CONFIG.model_copy(update={"near_answer_review": False})
    unknown_off = decide(plan, _weak_pack(), off)
    assert review_near_answer(unknown_off, _near(0.99), off).outcome.value == "UNKNOWN"


def test_a_near_answer_does_not_change_a_verdict_that_has_a_usable_chunk():
    plan = build_query_plan("Do we need to pack our own beach towels for the trip?")
    usable = [cand("faq_0", Category.FAQ, 0.9, "Towels are provided on every trip.")]
    with_near = review_near_answer(decide(plan, usable, CONFIG), _near(0.99), CONFIG)
    assert with_near == decide(plan, usable, CONFIG)
    assert with_near.outcome.value == "OK_TO_DRAFT"


@pytest.fixture(scope="module")
def near_retriever(db, minilm, real_pipeline, demo_index):
    from kb_retrieval.retrieval.retriever import Retriever

    def build(**update: object) -> Retriever:
        config = RetrievalConfig().model_copy(update={"cache_ttl_seconds": 0.0, **update})
        return Retriever(db, minilm, real_pipeline.versions, config)

    return build


PARAPHRASE = "Are the kayaks you use fairly new?"


def test_a_paraphrased_question_goes_to_review_with_its_near_answer(near_retriever):
    pack = near_retriever().retrieve("coastal-kayak", PARAPHRASE, as_of=AS_OF).pack
    validate_pack(pack)
    near = pack["near_answer"]
    assert pack["outcome"] == "NEEDS_REVIEW" and pack["reason_codes"] == ["LOW_CONFIDENCE"]
    assert near["doc_version_id"] == "docv_ck_website_2026"
    assert "replaced every three seasons" in near["sentence"]
    assert near["cosine"] >= RetrievalConfig().near_answer_threshold
    assert near["chunk_id"] in {item["chunk_id"] for item in pack["evidence"]}
    above = near_retriever(near_answer_threshold=near["cosine"] + 0.01)
    unknown = above.retrieve("coastal-kayak", PARAPHRASE, as_of=AS_OF).pack
    validate_pack(unknown)
    assert unknown["outcome"] == "UNKNOWN" and unknown["reason_codes"] == ["NO_EVIDENCE"]
    assert unknown["near_answer"] == near


def test_a_question_nothing_answers_stays_unknown(near_retriever):
    pack = (
        near_retriever()
        .retrieve("coastal-kayak", "Do your guides speak Japanese?", as_of=AS_OF)
        .pack
    )
    assert pack["outcome"] == "UNKNOWN"
    assert pack["near_answer"]["cosine"] < RetrievalConfig().near_answer_threshold


def test_the_near_answer_is_read_in_the_asking_tenant_only(near_retriever, demo_index):
    pack = near_retriever().retrieve("alpine-treks", PARAPHRASE, as_of=AS_OF).pack
    alpine = set(demo_index["alpine-treks"])
    assert pack.get("near_answer") is None or pack["near_answer"]["doc_version_id"] in alpine
    assert {item["doc_version_id"] for item in pack["evidence"]} <= alpine
    assert pack["outcome"] == "UNKNOWN"


def test_the_database_computes_the_cosines_the_stored_vectors_give(db, minilm, real_pipeline):
    from kb_retrieval.retrieval.sentence_vectors import (
        fetch_sentence_vectors,
        nearest_stored_sentences,
    )

    versions = real_pipeline.versions
    params = {
        "tenant_id": "coastal-kayak",
        "embedding_model_id": versions.embedding_model_id,
        "chunker_version": versions.chunker_version,
    }
    queries = minilm.embed_query(question_texts("Hello. " + PARAPHRASE))
    with db.tenant("coastal-kayak") as conn:
        pks = [row[0] for row in conn.execute("SELECT id FROM chunks ORDER BY id LIMIT 12")]
        stored = fetch_sentence_vectors(conn, params, pks)
        nearest = nearest_stored_sentences(conn, params, pks, queries)
    assert stored and set(nearest) == set(stored)
    for pk, vectors in stored.items():
        sims = (vectors.astype(np.float64) @ np.asarray(queries, dtype=np.float64).T).max(axis=1)
        index, cosine = nearest[pk]
        assert cosine == pytest.approx(float(sims.max()), abs=1e-5)
        assert sims[index] == pytest.approx(float(sims.max()), abs=1e-5)
