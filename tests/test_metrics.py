"""Golden-set metrics on hand-computed examples, plus cross-checks against ranx."""

from __future__ import annotations

import math
import random
import warnings
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kb_eval.golden import GoldenCase, RelevantItem
from kb_eval.metrics import (
    METRIC_NAMES,
    CaseResult,
    EvidenceRef,
    case_details,
    compute_metrics,
    first_cover_gains,
    is_covered,
    metric_support,
    mrr_at_10,
    ndcg_at_10,
    normalise_quote,
    recall,
)

L2, L3, L4, L5 = (math.log2(n) for n in (2, 3, 4, 5))


def case(case_id: str = "c", **fields: Any) -> GoldenCase:
    data = {
        "case_id": case_id,
        "tenant_id": "alpine-treks",
        "email": "question",
        "relevant": [],
        "expected_outcome": "OK_TO_DRAFT",
    }
    return GoldenCase.model_validate(data | fields)


def item(version: str, quote: str) -> RelevantItem:
    return RelevantItem(doc_version_id=version, quote=quote)


def ref(version: str, text: str, chunk: str | None = None, score: float = 0.9) -> EvidenceRef:
    return EvidenceRef(version, chunk or f"{version}:{text[:8]}", text, "faq", score)


def result(
    case_id: str = "c",
    outcome: str = "OK_TO_DRAFT",
    evidence: list[EvidenceRef] | None = None,
    candidates: list[EvidenceRef] | None = None,
    flags: dict[str, bool] | None = None,
) -> CaseResult:
    return CaseResult(case_id, outcome, [], flags or {}, evidence or [], candidates or [], None)


NOISE = ref("other", "nothing useful here")


def test_normalise_quote_nfkc_casefold_whitespace() -> None:
    assert normalise_quote("  Ｃａｎｃｅｌ\u00a0 within\n7\tDAYS ") == "cancel within 7 days"
    assert normalise_quote("STRASSE") == normalise_quote("Straße") == "strasse"
    assert normalise_quote("ﬁnal ½ refund") == "final 1⁄2 refund"
    assert normalise_quote(" \n\t ") == ""


@given(st.text())
def test_normalise_quote_is_idempotent(text: str) -> None:
    once = normalise_quote(text)
    assert normalise_quote(once) == once
    assert "  " not in once and once == once.strip()


def test_is_covered_needs_same_version_and_contained_quote() -> None:
    rel = item("v5", "Within 7 calendar days")
    assert is_covered(rel, ref("v5", "Cancellations within 7\ncalendar  DAYS of departure."))
    assert not is_covered(rel, ref("v4", "Cancellations within 7 calendar days of departure."))
    assert not is_covered(rel, ref("v5", "Cancellations within 7 days of departure."))
    assert is_covered(item("v5", "ﬁve-day"), ref("v5", "the FIVE-DAY rule"))
    blank = SimpleNamespace(doc_version_id="v5", quote="\u00a0 ")
    assert not is_covered(blank, ref("v5", "anything"))


def test_recall_counts_each_item_once_and_ignores_duplicates() -> None:
    relevant = [item("a", "alpha"), item("b", "beta"), item("c", "gamma")]
    chunks = [ref("a", "alpha one"), ref("a", "ALPHA again"), ref("b", "beta"), NOISE]
    assert recall(relevant, chunks) == pytest.approx(2 / 3)
    assert recall([], chunks) is None
    assert recall(relevant, []) == 0.0


def test_ndcg_and_mrr_first_cover_gains() -> None:
    relevant = [item("a", "alpha"), item("b", "beta")]
    pack = [NOISE, ref("a", "alpha"), ref("a", "alpha too"), ref("b", "beta")]
    assert first_cover_gains(relevant, pack) == [0, 1, 0, 1]
    expected = (1 / L3 + 1 / L5) / (1 / L2 + 1 / L3)
    assert ndcg_at_10(relevant, pack) == pytest.approx(expected, abs=1e-12)
    assert mrr_at_10(relevant, pack) == 0.5


def test_one_chunk_covering_two_items_gains_once() -> None:
    relevant = [item("a", "alpha"), item("a", "beta")]
    pack = [ref("a", "alpha and beta"), ref("a", "beta")]
    assert first_cover_gains(relevant, pack) == [1, 0]
    assert ndcg_at_10(relevant, pack) == pytest.approx(1 / (1 + 1 / L3), abs=1e-12)
    assert mrr_at_10(relevant, pack) == 1.0


def test_ideal_dcg_is_capped_at_ten_positions() -> None:
    relevant = [item("v", f"fact {i:02d}") for i in range(12)]
    pack = [ref("v", f"fact {i:02d}") for i in range(12)]
    assert ndcg_at_10(relevant, pack) == pytest.approx(1.0, abs=1e-12)
    assert recall(relevant, pack[:10]) == pytest.approx(10 / 12)


def test_pack_longer_than_ten_is_cut() -> None:
    golden = case(relevant=[item("a", "alpha")])
    late = [NOISE] * 10 + [ref("a", "alpha")]
    detail = case_details([golden], [result(evidence=late, candidates=late)])[0]
    assert detail["recall_at_10"] == 0.0
    assert detail["ndcg_at_10"] == 0.0
    assert detail["mrr_at_10"] == 0.0
    assert detail["candidate_recall_at_40"] == 1.0
    assert detail["missed_at_10"] == [{"doc_version_id": "a", "quote": "alpha"}]
    assert detail["missed_in_candidates"] == []


def test_candidates_are_capped_at_forty() -> None:
    golden = case(relevant=[item("a", "alpha")])
    candidates = [NOISE] * 40 + [ref("a", "alpha")]
    detail = case_details([golden], [result(candidates=candidates)])[0]
    assert detail["candidate_recall_at_40"] == 0.0


def _scenario() -> tuple[list[GoldenCase], list[CaseResult]]:
    cases = [
        case(
            "refund",
            relevant=[item("pol", "7 calendar days"), item("terms", "non-refundable")],
            must_not_cite=["terms_v1"],
            expected_outcome="NEEDS_REVIEW",
            expected_flags={"conflicting_evidence": True, "low_confidence": False},
        ),
        case(
            "boots",
            relevant=[item("pack", "hiking boots")],
            expected_outcome="OK_TO_DRAFT",
            expected_flags={"stale_only_evidence": True},
        ),
        case("nothing", relevant=[], expected_outcome="UNKNOWN", must_not_cite=["old"]),
        case("vague", relevant=[item("faq", "meeting point")], expected_outcome="UNKNOWN"),
    ]
    results = [
        result(
            "refund",
            "OK_TO_DRAFT",
            evidence=[ref("terms_v1", "24 hours"), ref("pol", "within 7 calendar days")],
            candidates=[ref("pol", "within 7 calendar days"), ref("terms", "Non-Refundable")],
            flags={"conflicting_evidence": True, "low_confidence": True},
        ),
        result(
            "boots",
            "OK_TO_DRAFT",
            evidence=[ref("pack", "Bring Hiking  Boots")],
            candidates=[ref("pack", "Bring Hiking  Boots")],
        ),
        result(
            "nothing",
            "UNKNOWN",
            evidence=[ref("old", "a"), ref("old", "b")],
            candidates=[ref("old", "a")],
        ),
        result("vague", "NEEDS_REVIEW", candidates=[ref("faq", "the meeting point is")]),
    ]
    return cases, results


def test_compute_metrics_on_a_hand_computed_scenario() -> None:
    cases, results = _scenario()
    metrics = compute_metrics(cases, results)
    assert list(metrics) == list(METRIC_NAMES)
    # refund: recall 1/2, pack [miss, hit] -> dcg 1/log2(3), idcg 1 + 1/log2(3), rr 1/2;
    # boots: 1, 1, 1; vague: 0, 0, 0 (only in candidates); "nothing" has no labels.
    assert metrics["recall_at_10"] == pytest.approx((0.5 + 1 + 0) / 3)
    assert metrics["candidate_recall_at_40"] == pytest.approx((1 + 1 + 1) / 3)
    refund_ndcg = (1 / L3) / (1 + 1 / L3)
    assert metrics["ndcg_at_10"] == pytest.approx((refund_ndcg + 1 + 0) / 3, abs=1e-12)
    assert metrics["mrr_at_10"] == pytest.approx((0.5 + 1 + 0) / 3)
    assert metrics["outcome_accuracy"] == pytest.approx(2 / 4)
    # expected NEEDS_REVIEW/UNKNOWN: refund (-> OK_TO_DRAFT, unsafe), nothing, vague.
    assert metrics["unsafe_pass_rate"] == pytest.approx(1 / 3)
    # refund cites terms_v1, "nothing" returns two chunks of "old": two cases.
    assert metrics["must_not_cite_violations"] == 2
    # pairs: refund conflicting ok, refund low_confidence wrong, boots stale missing -> wrong.
    assert metrics["flag_accuracy"] == pytest.approx(1 / 3)
    assert isinstance(metrics["must_not_cite_violations"], int)
    support = metric_support(case_details(cases, results))
    assert support["recall_at_10"] == 3 and support["unsafe_pass_rate"] == 3
    assert support["flag_accuracy"] == 3 and support["must_not_cite_violations"] == 2


def test_details_are_ordered_and_diagnostic() -> None:
    cases, results = _scenario()
    details = case_details(cases, list(reversed(results)))
    assert [d["case_id"] for d in details] == ["refund", "boots", "nothing", "vague"]
    refund = details[0]
    assert refund["tenant_id"] == "alpine-treks" and refund["split"] is None
    assert refund["unsafe_pass"] is True and refund["outcome_correct"] is False
    assert refund["must_not_cite_hits"] == ["terms_v1:24 hours"]
    assert refund["flag_matches"] == {"conflicting_evidence": True, "low_confidence": False}
    assert refund["missed_at_10"] == [{"doc_version_id": "terms", "quote": "non-refundable"}]
    assert details[2]["recall_at_10"] is None and details[2]["ndcg_at_10"] is None


def test_edge_cases_without_denominators() -> None:
    only_ok = [case("a", expected_outcome="OK_TO_DRAFT")]
    metrics = compute_metrics(only_ok, [result("a", "OK_TO_DRAFT")])
    assert metrics["unsafe_pass_rate"] == 0.0
    assert metrics["recall_at_10"] == 0.0 and metrics["flag_accuracy"] == 0.0
    assert metrics["outcome_accuracy"] == 1.0
    assert compute_metrics([], [])["must_not_cite_violations"] == 0


def test_results_may_be_a_mapping_and_must_match_cases() -> None:
    cases, results = _scenario()
    by_id = {r.case_id: r for r in results}
    assert compute_metrics(cases, by_id) == compute_metrics(cases, results)
    with pytest.raises(ValueError, match="missing \\['vague'\\]"):
        compute_metrics(cases, results[:3])
    with pytest.raises(ValueError, match="unknown \\['extra'\\]"):
        compute_metrics(cases, [*results, result("extra")])
    with pytest.raises(ValueError, match="duplicate result"):
        compute_metrics(cases, [*results, results[0]])


def _ranx_means(qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]]) -> dict:
    from ranx import Qrels, Run, evaluate

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return evaluate(Qrels(qrels), Run(run), ["ndcg@10", "mrr@10", "recall@10"])


def test_case_ndcg_mrr_recall_agree_with_ranx_when_chunks_map_to_items() -> None:
    rng = random.Random(7)
    cases, results, qrels, run = [], [], {}, {}
    for n in range(60):
        case_id = f"q{n}"
        n_items = rng.randint(1, 14)
        relevant = [item("v", f"fact number {i:03d}") for i in range(n_items)]
        pack = []
        docs = [f"item{i}" for i in range(n_items)] + [f"noise{j}" for j in range(15)]
        for doc in rng.sample(docs, rng.randint(1, 14)):
            if doc.startswith("item"):
                pack.append(ref("v", f"text fact number {int(doc[4:]):03d} end", doc))
            else:
                pack.append(ref("v", f"unrelated {doc}", doc))
        cases.append(case(case_id, relevant=relevant))
        results.append(result(case_id, evidence=pack))
        qrels[case_id] = {f"item{i}": 1 for i in range(n_items)}
        run[case_id] = {r.chunk_id: 100.0 - rank for rank, r in enumerate(pack)}
    ours = compute_metrics(cases, results)
    theirs = _ranx_means(qrels, run)
    assert ours["ndcg_at_10"] == pytest.approx(float(theirs["ndcg@10"]), abs=1e-9)
    assert ours["mrr_at_10"] == pytest.approx(float(theirs["mrr@10"]), abs=1e-9)
    assert ours["recall_at_10"] == pytest.approx(float(theirs["recall@10"]), abs=1e-9)
