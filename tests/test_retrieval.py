"""Retrieval on the demo tenants with the real model and server: worked examples and properties."""

from __future__ import annotations

from datetime import date

import pytest

from kb_eval.drafts.grading import grade_golden_drafts
from kb_eval.golden import load_golden
from kb_eval.golden_eval import EvalRun, evaluate_cases
from kb_eval.metrics import aggregate
from kb_retrieval.models import HIGH_PRECEDENCE, Category
from kb_retrieval.retrieval.config import RetrievalConfig
from kb_retrieval.retrieval.pack import dumps_pack, validate_pack
from kb_retrieval.retrieval.retriever import Retriever
from tests.conftest import GOLDEN

AS_OF = date(2026, 11, 15)
SUPERSEDED = "docv_2026_terms_v1"
FUTURE = "docv_prices_2027_v1"


@pytest.fixture(scope="module")
def golden_run(retriever) -> EvalRun:
    """Every golden email retrieved once, through the same call `kb eval` makes."""
    return evaluate_cases(retriever, load_golden(GOLDEN), AS_OF)


@pytest.fixture(scope="module")
def golden_packs(golden_run):
    cases = {case.case_id: case for case in load_golden(GOLDEN)}
    return {case_id: (cases[case_id], pack) for case_id, pack in golden_run.packs.items()}


def test_golden_targets_of_the_issue_hold_on_the_demo_tenants(golden_run):
    metrics = golden_run.metrics
    # Measured 0.928 with the learned ordering and packs filled to 10 (docs/retrieval.md
    # section 7); 0.857 before.
    assert metrics["recall_at_10"] >= 0.90
    assert metrics["unsafe_pass_rate"] == 0.0, [
        d["case_id"] for d in golden_run.details if d["unsafe_pass"]
    ]
    assert metrics["must_not_cite_violations"] == 0
    # A regression floor under the measured 0.779 (0.717 before the case-level answerability
    # model; docs/retrieval.md section 7).
    assert metrics["outcome_accuracy"] >= 0.74


def test_golden_holdout_split_holds_on_its_own(golden_run):
    holdout = [d for d in golden_run.details if d.get("split") == "holdout"]
    metrics = aggregate(holdout)
    # Measured on the 46 holdout cases: recall@10 0.912, outcome accuracy 0.826, unsafe 0.
    assert metrics["recall_at_10"] >= 0.88
    assert metrics["unsafe_pass_rate"] == 0.0
    assert metrics["must_not_cite_violations"] == 0
    assert metrics["outcome_accuracy"] >= 0.78


def test_default_drafts_of_the_golden_packs_pass_the_release_gates(golden_run):
    graded = grade_golden_drafts(load_golden(GOLDEN), golden_run.packs)
    assert graded["policy_citation_coverage"] >= 0.95
    assert graded["unsupported_claim_rate"] <= 0.05
    assert graded["invented_policy_incidents"] == 0, [
        d for d in graded["details"] if d.get("invented")
    ]


def ask(retriever: Retriever, text: str, tenant: str = "alpine-treks", **kwargs):
    return retriever.retrieve(tenant, text, as_of=AS_OF, **kwargs).pack


def test_worked_example_1_policy_beats_brochure_and_conflict_needs_review(retriever):
    pack = ask(
        retriever,
        "Can we cancel 5 days before and still get a full refund? The brochure says 24-hour cancellation.",
    )
    categories = [e["category"] for e in pack["evidence"]]
    assert categories[0] == "structured_policy"
    assert pack["evidence"][0]["doc_version_id"] == "docv_policy_refund_v5"
    assert "terms_policy" in categories and "marketing" in categories
    assert categories.index("terms_policy") < categories.index("marketing")
    assert pack["flags"] == {
        "stale_only_evidence": False,
        "conflicting_evidence": True,
        "low_confidence": False,
    }
    assert pack["outcome"] == "NEEDS_REVIEW"
    assert {"CONFLICT_DETECTED", "SENSITIVE_TOPIC"} <= set(pack["reason_codes"])
    assert any(c["kind"] == "numeric_window" for c in pack["conflicts"])
    assert SUPERSEDED not in {e["doc_version_id"] for e in pack["evidence"]}


def test_worked_example_2_itinerary_wins_over_faq(retriever):
    pack = ask(retriever, "What time is check-in for the June 14 Patagonia departure?")
    top = pack["evidence"][0]
    assert (
        top["category"] == "trip_itinerary" and top["doc_version_id"] == "docv_patagonia_jun14_v1"
    )
    assert (
        pack["flags"]["conflicting_evidence"] is False
        and pack["flags"]["stale_only_evidence"] is False
    )
    assert pack["flags"]["low_confidence"] is False
    assert pack["outcome"] == "OK_TO_DRAFT" and pack["reason_codes"] == []
    ranks = {e["doc_version_id"]: e["rank"] for e in pack["evidence"]}
    if "docv_guest_faq_v9" in ranks:
        assert ranks["docv_patagonia_jun14_v1"] < ranks["docv_guest_faq_v9"]


def test_worked_example_3_stale_medical_needs_review(retriever):
    pack = ask(retriever, "Do I need medical clearance for this altitude trip?")
    usable = [e for e in pack["evidence"] if e["confidence_score"] >= 0.65]
    assert usable and {e["category"] for e in usable} == {"safety_medical"}
    assert all(e["stale"] for e in usable)
    assert pack["flags"]["stale_only_evidence"] is True
    assert pack["outcome"] == "NEEDS_REVIEW"
    assert {"STALE_ONLY_EVIDENCE", "SENSITIVE_TOPIC"} <= set(pack["reason_codes"])


def test_chit_chat_is_gated_without_evidence(retriever):
    pack = ask(retriever, "hey this is a test message")
    assert pack["outcome"] == "ASK_CLARIFYING_QUESTION"
    assert pack["reason_codes"] == ["QUERY_TOO_VAGUE"] and pack["evidence"] == []


def test_every_pack_validates_and_respects_size_bounds(golden_packs):
    for case, pack in golden_packs.values():
        validate_pack(pack)
        assert len(pack["evidence"]) <= 10, case.case_id
        assert [e["rank"] for e in pack["evidence"]] == list(range(1, len(pack["evidence"]) + 1))


def test_marketing_never_outranks_a_policy_tier_for_policy_questions(golden_packs):
    checked = 0
    for case, pack in golden_packs.values():
        if not pack["policy_like"]:
            continue
        tiers = [Category(e["category"]).tier for e in pack["evidence"]]
        assert tiers == sorted(tiers), (case.case_id, tiers)
        checked += 1
    assert checked >= 20


def test_superseded_future_and_other_tenant_chunks_are_never_returned(golden_packs, demo_index):
    for case, pack in golden_packs.values():
        cited = {e["doc_version_id"] for e in pack["evidence"]}
        assert SUPERSEDED not in cited and FUTURE not in cited, case.case_id
        assert cited <= set(demo_index[case.tenant_id]), (
            case.case_id,
            cited - set(demo_index[case.tenant_id]),
        )
        assert not cited & set(case.must_not_cite), case.case_id


def test_policy_questions_carry_high_precedence_evidence_when_it_exists(golden_packs):
    for case, pack in golden_packs.values():
        if (
            pack["policy_like"]
            and pack["evidence"]
            and case.expected_outcome.value == "OK_TO_DRAFT"
        ):
            assert any(
                Category(e["category"]) in HIGH_PRECEDENCE or e["category"] == "safety_medical"
                for e in pack["evidence"]
            ), case.case_id


def test_identical_input_gives_identical_bytes(db, minilm, real_pipeline, demo_index):
    fresh = Retriever(db, minilm, real_pipeline.versions, RetrievalConfig(cache_ttl_seconds=0))
    email = "Is a deposit required when booking the Patagonia trek, and when is the balance due?"
    first = dumps_pack(fresh.retrieve("alpine-treks", email, as_of=AS_OF).pack)
    second = dumps_pack(fresh.retrieve("alpine-treks", email, as_of=AS_OF).pack)
    assert first == second


def test_future_version_becomes_retrievable_on_its_effective_date(retriever):
    email = "How much does the Everest Base Camp trek cost?"
    before = {e["doc_version_id"] for e in ask(retriever, email)["evidence"]}
    after = {
        e["doc_version_id"]
        for e in retriever.retrieve("alpine-treks", email, as_of=date(2027, 1, 2)).pack["evidence"]
    }
    assert FUTURE not in before
    assert FUTURE in after and "docv_prices_2026_v4" not in after, (
        "the 2027 list supersedes 2026 once effective"
    )


def test_audit_mode_includes_superseded_versions_marked(retriever):
    email = "What is the cancellation refund window in your terms and conditions?"
    pack = ask(retriever, email, audit_mode=True)
    superseded = [e for e in pack["evidence"] if e.get("superseded")]
    assert pack["audit_mode"] is True
    assert all(e["doc_version_id"] == SUPERSEDED for e in superseded)
    assert SUPERSEDED not in {e["doc_version_id"] for e in ask(retriever, email)["evidence"]}


def test_other_tenant_cannot_see_alpine_documents(retriever):
    pack = ask(
        retriever,
        "Is a full refund still possible if we cancel 5 days before departure?",
        tenant="coastal-kayak",
    )
    assert all(e["doc_version_id"].startswith("docv_ck_") for e in pack["evidence"])


def test_each_retrieval_writes_an_audit_row_without_the_email(db, retriever):
    email = "What should I pack for the Johnstone Strait orca expedition?"
    retriever.retrieve("coastal-kayak", email, as_of=AS_OF)
    with db.tenant("coastal-kayak") as conn:
        row = conn.execute(
            "SELECT email_text, outcome, candidate_count, timings_ms FROM retrieval_audit ORDER BY id DESC LIMIT 1"
        ).fetchone()
    assert row[0] is None and row[1] in {
        "OK_TO_DRAFT",
        "NEEDS_REVIEW",
        "UNKNOWN",
        "ASK_CLARIFYING_QUESTION",
    }
    assert row[2] > 0 and "total" in row[3]


def test_a_tenant_that_was_never_registered_is_an_error_not_an_empty_pack(retriever):
    from kb_retrieval.db.connection import UnknownTenantError

    with pytest.raises(UnknownTenantError, match="kb ingest"):
        ask(retriever, "Can we cancel 5 days before?", tenant="never-registered")
