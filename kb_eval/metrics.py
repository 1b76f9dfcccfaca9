"""Golden-set metrics of spec 10 (pure: no database, no Dagster)."""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from kb_eval.golden import GoldenCase

PACK_SIZE = 10
CANDIDATE_CAP = 40
FLAG_NAMES = ("stale_only_evidence", "conflicting_evidence", "low_confidence")
ESCALATED_OUTCOMES = frozenset({"NEEDS_REVIEW", "UNKNOWN"})
METRIC_NAMES = (
    "recall_at_10",
    "candidate_recall_at_40",
    "ndcg_at_10",
    "mrr_at_10",
    "outcome_accuracy",
    "unsafe_pass_rate",
    "must_not_cite_violations",
    "flag_accuracy",
)


class RelevantLike(Protocol):
    @property
    def doc_version_id(self) -> str: ...

    @property
    def quote(self) -> str: ...


class ChunkLike(Protocol):
    @property
    def doc_version_id(self) -> str: ...

    @property
    def text(self) -> str: ...


@dataclass(frozen=True)
class EvidenceRef:
    """One retrieved chunk as the metrics see it."""

    doc_version_id: str
    chunk_id: str
    text: str
    category: str
    confidence_score: float
    relevance: float = 0.0  # the pack's scores.relevance: the chunk model's probability


@dataclass(frozen=True)
class CaseResult:
    """What retrieval returned for one golden case."""

    case_id: str
    outcome: str
    reason_codes: list[str]
    flags: dict[str, bool]
    evidence: list[EvidenceRef]
    candidates: list[EvidenceRef] = field(default_factory=list)
    confidence_top: float | None = None
    case_probability: float | None = None
    # The candidates' sentence nearest the question, when no chunk was usable (near_answer.py).
    near_answer_cosine: float | None = None


def normalise_quote(text: str) -> str:
    """Unicode NFKC, case-folded, whitespace collapsed to single spaces and trimmed."""
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())
    return " ".join(folded.split())


def _covers(item: RelevantLike, doc_version_id: str, normalised_text: str) -> bool:
    quote = normalise_quote(item.quote)
    return bool(quote) and doc_version_id == item.doc_version_id and quote in normalised_text


def is_covered(relevant_item: RelevantLike, chunk: ChunkLike) -> bool:
    """True when the chunk belongs to the item's version and contains its quote (normalised)."""
    return _covers(relevant_item, chunk.doc_version_id, normalise_quote(chunk.text))


def coverage_matrix(
    relevant: Sequence[RelevantLike], chunks: Sequence[ChunkLike]
) -> list[set[int]]:
    """For each chunk in order, the indices of the relevant items it covers."""
    normalised = [(chunk.doc_version_id, normalise_quote(chunk.text)) for chunk in chunks]
    return [
        {i for i, item in enumerate(relevant) if _covers(item, version, text)}
        for version, text in normalised
    ]


def _recall(matrix: Sequence[set[int]], n_relevant: int) -> float | None:
    return len(set().union(*matrix)) / n_relevant if n_relevant else None


def _first_cover(matrix: Sequence[set[int]]) -> list[int]:
    seen: set[int] = set()
    gains = []
    for covered in matrix:
        gains.append(1 if covered - seen else 0)
        seen |= covered
    return gains


def _discount(position: int) -> float:
    return 1.0 / math.log2(position + 2)


def _ndcg(gains: Sequence[int], n_relevant: int) -> float | None:
    if not n_relevant:
        return None
    dcg = math.fsum(_discount(i) for i, gain in enumerate(gains[:PACK_SIZE]) if gain)
    ideal = math.fsum(_discount(i) for i in range(min(n_relevant, PACK_SIZE)))
    return dcg / ideal


def _mrr(gains: Sequence[int], n_relevant: int) -> float | None:
    if not n_relevant:
        return None
    return next((1.0 / (i + 1) for i, gain in enumerate(gains[:PACK_SIZE]) if gain), 0.0)


def recall(relevant: Sequence[RelevantLike], chunks: Sequence[ChunkLike]) -> float | None:
    """Covered relevant items / relevant items (no cut-off); None when there are none."""
    return _recall(coverage_matrix(relevant, chunks), len(relevant))


def first_cover_gains(relevant: Sequence[RelevantLike], chunks: Sequence[ChunkLike]) -> list[int]:
    """Binary gain per position: 1 when it covers a relevant item no earlier position covered."""
    return _first_cover(coverage_matrix(relevant, chunks))


def ndcg_at_10(relevant: Sequence[RelevantLike], pack: Sequence[ChunkLike]) -> float | None:
    """nDCG@10 with binary first-cover gains; ideal DCG from min(n_relevant, 10)."""
    return _ndcg(first_cover_gains(relevant, pack[:PACK_SIZE]), len(relevant))


def mrr_at_10(relevant: Sequence[RelevantLike], pack: Sequence[ChunkLike]) -> float | None:
    """1 / rank of the first pack position covering a relevant item (0 when none in the top 10)."""
    return _mrr(first_cover_gains(relevant, pack[:PACK_SIZE]), len(relevant))


def case_detail(case: GoldenCase, result: CaseResult) -> dict[str, Any]:
    """Per-case metric values and diagnostics, JSON-serialisable, for storage and reports."""
    relevant = case.relevant
    pack = result.evidence[:PACK_SIZE]
    candidates = result.candidates[:CANDIDATE_CAP]
    n_relevant = len(relevant)
    pack_matrix = coverage_matrix(relevant, pack)
    candidate_matrix = coverage_matrix(relevant, candidates)
    covered_pack = set().union(*pack_matrix)
    covered_candidates = set().union(*candidate_matrix)
    gains = _first_cover(pack_matrix)
    expected = case.expected_outcome.value
    outcome = str(result.outcome)
    forbidden = set(case.must_not_cite)
    flag_matches = {
        name: bool(result.flags.get(name, False)) == wanted
        for name, wanted in sorted(case.expected_flags.items())
    }
    return {
        "case_id": case.case_id,
        "tenant_id": case.tenant_id,
        "split": case.split,
        "expected_outcome": expected,
        "outcome": outcome,
        "outcome_correct": outcome == expected,
        "escalation_expected": expected in ESCALATED_OUTCOMES,
        "unsafe_pass": expected in ESCALATED_OUTCOMES and outcome == "OK_TO_DRAFT",
        "reason_codes": sorted({str(code) for code in result.reason_codes}),
        "flags": {name: bool(result.flags.get(name, False)) for name in FLAG_NAMES},
        "flag_matches": flag_matches,
        "n_relevant": n_relevant,
        "recall_at_10": _recall(pack_matrix, n_relevant),
        "candidate_recall_at_40": _recall(candidate_matrix, n_relevant),
        "ndcg_at_10": _ndcg(gains, n_relevant),
        "mrr_at_10": _mrr(gains, n_relevant),
        "pack_gains": gains,
        "missed_at_10": [
            {"doc_version_id": item.doc_version_id, "quote": item.quote}
            for i, item in enumerate(relevant)
            if i not in covered_pack
        ],
        "missed_in_candidates": [
            {"doc_version_id": item.doc_version_id, "quote": item.quote}
            for i, item in enumerate(relevant)
            if i not in covered_candidates
        ],
        "n_must_not_cite": len(forbidden),
        "must_not_cite_hits": sorted(
            {ref.chunk_id for ref in result.evidence if ref.doc_version_id in forbidden}
        ),
        "confidence_top": result.confidence_top,
        "case_probability": result.case_probability,
        "near_answer_cosine": result.near_answer_cosine,
        "evidence_chunk_ids": [ref.chunk_id for ref in result.evidence],
    }


def _mean(values: Sequence[float]) -> float:
    return math.fsum(values) / len(values) if values else 0.0


def pair_results(
    cases: Sequence[GoldenCase], results: Sequence[CaseResult] | Mapping[str, CaseResult]
) -> list[tuple[GoldenCase, CaseResult]]:
    """Each case with its result, in golden-set order; exactly one result per case."""
    if isinstance(results, Mapping):
        by_id = dict(results)
    else:
        by_id = {}
        for result in results:
            if result.case_id in by_id:
                raise ValueError(f"duplicate result for case {result.case_id!r}")
            by_id[result.case_id] = result
    case_ids = [case.case_id for case in cases]
    if len(set(case_ids)) != len(case_ids):
        raise ValueError("duplicate case_id among golden cases")
    missing = sorted(set(case_ids) - by_id.keys())
    unknown = sorted(by_id.keys() - set(case_ids))
    if missing or unknown:
        raise ValueError(f"results do not match cases: missing {missing}, unknown {unknown}")
    return [(case, by_id[case.case_id]) for case in cases]


def case_details(
    cases: Sequence[GoldenCase], results: Sequence[CaseResult] | Mapping[str, CaseResult]
) -> list[dict[str, Any]]:
    """case_detail for every case, in golden-set order (each case needs exactly one result)."""
    return [case_detail(case, result) for case, result in pair_results(cases, results)]


def aggregate(details: Sequence[Mapping[str, Any]]) -> dict[str, float | int]:
    """The contract metrics from per-case details; a mean over no cases is 0.0."""
    with_relevant = [d for d in details if d["n_relevant"] > 0]
    escalated = [d for d in details if d["escalation_expected"]]
    flag_pairs = [match for d in details for match in d["flag_matches"].values()]
    return {
        "recall_at_10": _mean([d["recall_at_10"] for d in with_relevant]),
        "candidate_recall_at_40": _mean([d["candidate_recall_at_40"] for d in with_relevant]),
        "ndcg_at_10": _mean([d["ndcg_at_10"] for d in with_relevant]),
        "mrr_at_10": _mean([d["mrr_at_10"] for d in with_relevant]),
        "outcome_accuracy": _mean([float(d["outcome_correct"]) for d in details]),
        "unsafe_pass_rate": _mean([float(d["unsafe_pass"]) for d in escalated]),
        "must_not_cite_violations": sum(1 for d in details if d["must_not_cite_hits"]),
        "flag_accuracy": _mean([float(match) for match in flag_pairs]),
    }


def metric_support(details: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """How many cases (or case-flag pairs) each metric averages over."""
    n_relevant = sum(1 for d in details if d["n_relevant"] > 0)
    return {
        "recall_at_10": n_relevant,
        "candidate_recall_at_40": n_relevant,
        "ndcg_at_10": n_relevant,
        "mrr_at_10": n_relevant,
        "outcome_accuracy": len(details),
        "unsafe_pass_rate": sum(1 for d in details if d["escalation_expected"]),
        "must_not_cite_violations": sum(1 for d in details if d["n_must_not_cite"] > 0),
        "flag_accuracy": sum(len(d["flag_matches"]) for d in details),
    }


def compute_metrics(
    cases: Sequence[GoldenCase], results: Sequence[CaseResult] | Mapping[str, CaseResult]
) -> dict[str, float | int]:
    """The retrieval metrics of spec 10 (draft metrics are computed elsewhere)."""
    return aggregate(case_details(cases, results))


def rank_documents(scores: Mapping[str, float]) -> list[str]:
    """Doc ids by descending score; ties broken by descending doc id, as trec_eval does."""
    return [doc for doc, _ in sorted(scores.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)]


def ir_ndcg(ranking: Sequence[str], rels: Mapping[str, int], k: int) -> float:
    """nDCG@k with graded gains (gain = relevance, log2 discount), as trec_eval/BEIR."""
    dcg = math.fsum(max(rels.get(doc, 0), 0) * _discount(i) for i, doc in enumerate(ranking[:k]))
    ideal_gains = sorted((rel for rel in rels.values() if rel > 0), reverse=True)[:k]
    ideal = math.fsum(gain * _discount(i) for i, gain in enumerate(ideal_gains))
    return dcg / ideal if ideal > 0 else 0.0


def ir_recall(ranking: Sequence[str], rels: Mapping[str, int], k: int) -> float:
    """Relevant (rel > 0) documents in the top k / relevant documents."""
    relevant = {doc for doc, rel in rels.items() if rel > 0}
    if not relevant:
        return 0.0
    return len(relevant.intersection(ranking[:k])) / len(relevant)


def ir_mrr(ranking: Sequence[str], rels: Mapping[str, int], k: int) -> float:
    """Reciprocal rank of the first relevant (rel > 0) document in the top k, else 0."""
    return next((1.0 / (i + 1) for i, doc in enumerate(ranking[:k]) if rels.get(doc, 0) > 0), 0.0)


def beir_per_query(
    run: Mapping[str, Mapping[str, float]], qrels: Mapping[str, Mapping[str, int]]
) -> dict[str, dict[str, float]]:
    """Per-query ndcg_at_10, recall_at_10, recall_at_100, mrr_at_10 for queries with a relevant doc.

    A judged query missing from the run scores 0 (BEIR would drop it from the mean).
    """
    per_query = {}
    for qid in sorted(qrels):
        rels = qrels[qid]
        if not any(rel > 0 for rel in rels.values()):
            continue
        ranking = rank_documents(run.get(qid, {}))
        per_query[qid] = {
            "ndcg_at_10": ir_ndcg(ranking, rels, 10),
            "recall_at_10": ir_recall(ranking, rels, 10),
            "recall_at_100": ir_recall(ranking, rels, 100),
            "mrr_at_10": ir_mrr(ranking, rels, 10),
        }
    return per_query


def beir_metrics(
    run: Mapping[str, Mapping[str, float]], qrels: Mapping[str, Mapping[str, int]]
) -> dict[str, float]:
    """Mean ndcg_at_10, recall_at_10, recall_at_100 over judged queries (BEIR definitions)."""
    per_query = beir_per_query(run, qrels)
    names = ("ndcg_at_10", "recall_at_10", "recall_at_100")
    return {name: _mean([values[name] for values in per_query.values()]) for name in names}
