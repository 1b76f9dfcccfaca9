"""Extractive drafter and the OpenAI-compatible adapter (mocked transport, no network)."""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from typing import Any

import pytest

from kb_eval.drafts.drafters import (
    ASK_MORE_DETAIL,
    ASK_TRIP_DATE,
    MAX_SENTENCES,
    Draft,
    ExtractiveDrafter,
    draft_reply,
)
from kb_eval.drafts.llm import (
    LLMConfig,
    LLMError,
    OpenAICompatibleDrafter,
    drafter_from_env,
)
from kb_eval.drafts.metrics import DraftRecord, grade_drafts
from kb_eval.judge.claims import is_policy_like, split_claims

GUEST = "Can we cancel 5 days before departure and still get a full refund? What is the deposit?"


def item(rank: int, category: str, chunk_id: str, text: str) -> dict[str, Any]:
    return {
        "rank": rank,
        "doc_title": f"Doc {chunk_id}",
        "doc_id": chunk_id.rsplit("_", 1)[0],
        "doc_version_id": f"docv_{chunk_id.rsplit('_', 1)[0]}",
        "category": category,
        "chunk_id": chunk_id,
        "source_locator": f"docv:docv_{chunk_id}#chunk:000|p:-|sec:S",
        "section_title": "S",
        "page_range": None,
        "snippet": text[:240],
        "text": text,
        "confidence_score": 0.9 - rank / 100,
        "stale": False,
        "scores": {"fused": 0.9},
    }


EVIDENCE = [
    item(
        1,
        "marketing",
        "brochure_000",
        "Book with confidence: free cancellation up to 24 hours before every adventure! "
        "Our guides love sharing the wild beauty of Patagonia with you.",
    ),
    item(
        2,
        "structured_policy",
        "refund_000",
        "Refund Window: Cancellations within 7 calendar days of departure are non-refundable.",
    ),
    item(
        3,
        "terms_policy",
        "terms_012",
        "Cancellations and Refunds\n\nCancellations made 60 days or more before departure "
        "receive a full refund less an administration fee of USD 100. Bookings are confirmed on "
        "receipt of a 20% deposit. " + "The deposit secures your place on the trip. " * 1,
    ),
    item(
        4,
        "faq",
        "faq_003",
        "Can I get a refund? A full refund is given when you cancel 24 hours before departure.",
    ),
    item(
        5,
        "operations_internal",
        "ops_001",
        "Internal: refund exceptions for cancellations need approval from the finance desk.",
    ),
]


def pack(outcome: str, reasons: list[str] | None = None, **extra: Any) -> dict[str, Any]:
    return {
        "tenant_id": "alpine-treks",
        "outcome": outcome,
        "reason_codes": reasons or [],
        "flags": {"stale_only_evidence": False, "conflicting_evidence": False},
        "policy_like": True,
        "evidence": copy.deepcopy(EVIDENCE),
        **extra,
    }


def evidence_texts(p: Mapping[str, Any]) -> list[str]:
    return [str(e["text"]) for e in p["evidence"]]


def test_unknown_gives_no_draft() -> None:
    draft = draft_reply(pack("UNKNOWN", ["NO_EVIDENCE"]), GUEST)
    assert (draft.status, draft.text, draft.sentences, draft.citations) == ("no_draft", "", [], [])


@pytest.mark.parametrize(
    ("reason", "question"),
    [("AMBIGUOUS_CONTEXT", ASK_TRIP_DATE), ("QUERY_TOO_VAGUE", ASK_MORE_DETAIL)],
)
def test_clarifying_question_only(reason: str, question: str) -> None:
    draft = draft_reply(pack("ASK_CLARIFYING_QUESTION", [reason]), GUEST, "c1")
    assert draft.status == "clarifying_question"
    assert draft.case_id == "c1"
    assert [s.text for s in draft.sentences] == [question]
    assert draft.citations == []
    assert split_claims(draft.text) == [question]
    assert not any(is_policy_like(claim) for claim in split_claims(draft.text))
    assert ("departure date" in question) == (reason == "AMBIGUOUS_CONTEXT")


@pytest.mark.parametrize(
    ("outcome", "status"), [("OK_TO_DRAFT", "draft"), ("NEEDS_REVIEW", "needs_review")]
)
def test_draft_is_copied_from_the_pack_and_cited(outcome: str, status: str) -> None:
    p = pack(outcome, ["SENSITIVE_TOPIC"] if outcome == "NEEDS_REVIEW" else [])
    draft = draft_reply(p, GUEST, "refund-5-days")
    assert draft.status == status
    assert 1 <= len(draft.sentences) <= MAX_SENTENCES
    texts = evidence_texts(p)
    cited = {c.chunk_id: c for c in draft.citations}
    for sentence in draft.sentences:
        assert any(sentence.text in text for text in texts)
        assert sentence.policy_like == is_policy_like(sentence.text)
        if sentence.policy_like:
            assert sentence.citations
        for chunk_id in sentence.citations:
            source = next(e for e in p["evidence"] if e["chunk_id"] == chunk_id)
            assert sentence.text in source["text"]
            assert chunk_id in cited
    assert split_claims(draft.text) == [s.text for s in draft.sentences]
    assert "Cancellations within 7 calendar days of departure are non-refundable." in draft.text


def test_a_list_item_glued_to_a_sentence_is_not_copied() -> None:
    glued = item(
        1,
        "safety_medical",
        "health_002",
        "Please declare:\n\nheart conditions\n\nasthma If anything changes after you send the "
        "health form, you must write to us before the trip starts. Guests with asthma must carry "
        "their inhaler on every walk.",
    )
    p = pack("NEEDS_REVIEW", ["LOW_CONFIDENCE"], evidence=[glued])
    draft = draft_reply(p, "My son has asthma, what should we tell you before the trip?")
    texts = [s.text for s in draft.sentences]
    assert "Guests with asthma must carry their inhaler on every walk." in texts
    assert not any(t.startswith("asthma") for t in texts)
    assert split_claims(draft.text) == texts


def test_citation_objects_and_guest_text() -> None:
    draft = draft_reply(pack("OK_TO_DRAFT"), GUEST)
    assert draft.citations
    for citation in draft.citations:
        assert citation.doc_version_id.startswith("docv_")
        assert citation.source_locator.startswith("docv:")
        assert citation.category and citation.doc_title
        assert 0 < len(citation.snippet) <= 240
        assert 0.0 <= citation.confidence_score <= 1.0
        assert citation.chunk_id not in draft.text
        assert citation.source_locator not in draft.text
    assert "[" not in draft.text
    assert draft.text.startswith("Hello,") and draft.text.endswith("Best regards,")


def test_precedence_marketing_and_internal_documents() -> None:
    draft = draft_reply(pack("OK_TO_DRAFT"), GUEST)
    used = {chunk_id for s in draft.sentences for chunk_id in s.citations}
    assert "ops_001" not in used
    assert "free cancellation" not in draft.text
    order = [
        next(e["category"] for e in EVIDENCE if e["chunk_id"] == s.citations[0])
        for s in draft.sentences
    ]
    assert order == sorted(order, key=["structured_policy", "terms_policy", "faq"].index)


def test_marketing_policy_is_used_only_without_higher_tier_evidence() -> None:
    only_marketing = pack("NEEDS_REVIEW", ["MARKETING_ONLY_EVIDENCE"])
    only_marketing["evidence"] = only_marketing["evidence"][:1]
    draft = draft_reply(only_marketing, "Is cancellation free?")
    assert draft.status == "needs_review"
    assert any("free cancellation" in s.text for s in draft.sentences)


def test_outranked_side_of_a_conflict_is_not_drafted() -> None:
    conflict = {
        "kind": "numeric_window",
        "values": ["24 hours", "7 days"],
        "chunk_ids": ["faq_003", "refund_000"],
    }
    with_conflict = draft_reply(
        pack("NEEDS_REVIEW", ["CONFLICT_DETECTED"], conflicts=[conflict]), GUEST
    )
    without = draft_reply(pack("NEEDS_REVIEW", ["CONFLICT_DETECTED"]), GUEST)
    assert any("faq_003" in s.citations for s in without.sentences)
    assert not any("faq_003" in s.citations for s in with_conflict.sentences)
    assert any("refund_000" in s.citations for s in with_conflict.sentences)


def test_deterministic_bytes() -> None:
    first = json.dumps(draft_reply(pack("OK_TO_DRAFT"), GUEST, "x").to_dict(), sort_keys=True)
    again = json.dumps(
        ExtractiveDrafter().draft(pack("OK_TO_DRAFT"), GUEST, "x").to_dict(), sort_keys=True
    )
    assert first.encode() == again.encode()


def test_drafts_grade_clean_with_the_draft_metrics() -> None:
    p = pack("OK_TO_DRAFT")
    draft = draft_reply(p, GUEST, "c1")
    record = draft.to_record()
    texts = {e["chunk_id"]: e["text"] for e in p["evidence"]}
    result = grade_drafts(
        [DraftRecord(record["case_id"], record["text"], tuple(record["citations"]))],
        lambda case_id, chunk_id: texts.get(chunk_id),
        lambda case_id: list(texts.values()),
    )
    assert result["policy_claims"] >= 1
    assert result["policy_citation_coverage"] == 1.0
    assert result["unsupported_claim_rate"] == 0.0
    assert result["invented_policy_incidents"] == 0


class FakeTransport:
    def __init__(self, content: str | None = None, raw: bytes | None = None) -> None:
        answer = {"choices": [{"message": {"role": "assistant", "content": content}}]}
        self.raw = raw if raw is not None else json.dumps(answer).encode()
        self.calls: list[tuple[str, dict[str, str], dict[str, Any], float]] = []

    def __call__(self, url: str, headers: Mapping[str, str], body: bytes, timeout: float) -> bytes:
        self.calls.append((url, dict(headers), json.loads(body), timeout))
        return self.raw


CONFIG = LLMConfig("http://llm.test/v1/", "test-model", api_key="secret")


def test_env_switch_is_off_by_default() -> None:
    assert isinstance(drafter_from_env({}), ExtractiveDrafter)
    assert isinstance(drafter_from_env({"KB_LLM_BASE_URL": "http://x/v1"}), ExtractiveDrafter)
    drafter = drafter_from_env({"KB_LLM_BASE_URL": "http://x/v1", "KB_LLM_MODEL": "m"})
    assert isinstance(drafter, OpenAICompatibleDrafter)
    assert drafter.config.api_key is None


def test_llm_request_shape_and_citation_parsing() -> None:
    content = (
        "Cancellations within 7 calendar days of departure are non-refundable [2]. "
        "Bookings are confirmed on receipt of a 20% deposit. [3, 9] "
        "Our team will be happy to help."
    )
    transport = FakeTransport(content)
    draft = OpenAICompatibleDrafter(CONFIG, transport).draft(pack("OK_TO_DRAFT"), GUEST, "c9")
    ((url, headers, payload, timeout),) = transport.calls
    assert url == "http://llm.test/v1/chat/completions"
    assert headers["Authorization"] == "Bearer secret"
    assert headers["Content-Type"] == "application/json"
    assert payload["model"] == "test-model" and payload["temperature"] == 0
    assert [m["role"] for m in payload["messages"]] == ["system", "user"]
    assert "[n]" in payload["messages"][0]["content"] or "[2]" in payload["messages"][0]["content"]
    user = payload["messages"][1]["content"]
    assert GUEST in user and "[1] Doc brochure_000" in user and "[5] Doc ops_001" in user
    assert timeout == CONFIG.timeout
    assert [s.citations for s in draft.sentences] == [("refund_000",), ("terms_012",), ()]
    assert draft.sentences[1].text == "Bookings are confirmed on receipt of a 20% deposit."
    assert [c.chunk_id for c in draft.citations] == ["refund_000", "terms_012"]
    assert "[" not in draft.text and draft.status == "draft" and draft.case_id == "c9"


def test_llm_uncited_or_unsupported_policy_goes_to_review() -> None:
    uncited = FakeTransport("Cancellations within 7 days of departure are non-refundable.")
    draft = OpenAICompatibleDrafter(CONFIG, uncited).draft(pack("OK_TO_DRAFT"), GUEST)
    assert draft.status == "needs_review"
    wrong = FakeTransport("Cancellations within 3 days of departure are non-refundable [2].")
    draft = OpenAICompatibleDrafter(CONFIG, wrong).draft(pack("OK_TO_DRAFT"), GUEST)
    assert draft.status == "needs_review"


def test_llm_is_not_called_without_a_draftable_outcome() -> None:
    transport = FakeTransport("anything")
    drafter = OpenAICompatibleDrafter(CONFIG, transport)
    assert drafter.draft(pack("UNKNOWN"), GUEST).status == "no_draft"
    clarifying = drafter.draft(pack("ASK_CLARIFYING_QUESTION", ["AMBIGUOUS_CONTEXT"]), GUEST)
    assert clarifying.status == "clarifying_question"
    assert transport.calls == []


def test_llm_bad_answer_raises() -> None:
    drafter = OpenAICompatibleDrafter(CONFIG, FakeTransport(raw=b"<html>502</html>"))
    with pytest.raises(LLMError):
        drafter.draft(pack("OK_TO_DRAFT"), GUEST)


def test_draft_type_round_trip() -> None:
    draft = draft_reply(pack("OK_TO_DRAFT"), GUEST, "c1")
    assert isinstance(draft, Draft)
    data = draft.to_dict()
    assert set(data) >= {"case_id", "text", "sentences", "citations", "status"}
    assert json.loads(json.dumps(data)) == data
