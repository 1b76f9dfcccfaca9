"""Where the answering chunks go between the 40 candidates and the pack (issue 12), leave one
operator out.

    KB_HOME=... python -m bench.pack_misses [GOLDEN@AS_OF ...] [--variant NAME:FIELD=VALUE,...]

For each held-out operator the answerability model is fitted on the five others exactly as
`kb eval --cv tenant` fits it, and each held-out case is retrieved once with that model. For
every relevant item the pack's first 10 chunks miss, the report gives the best-ranked candidate
holding its quote (rank among the candidates, relevance, floors, tier, document) and the step
that lost it, found by re-running `select_pack` on the same candidates with one step undone:

- `not_in_candidates`: no candidate holds the quote;
- `admit_conflicting`: chosen, then replaced by a chunk a reported conflict cites;
- `vector_floor`, `relevance_floor`, `max_per_document`, `near_duplicate`, `mmr`, `tier`: the
  first step (in that order) whose undoing alone puts it in the pack (vector floor off;
  `relevance_floor` 0; per-document cap off; near-duplicate penalty 0; `mmr_lambda` 1; untiered);
- `ordering`: none of these: ten chosen candidates rank above it even so (`pack_fill`).
`under_floor` says which floor it fails anyway ("vector", "relevance", "score" or "").

`--nested REPORT...` chooses, for each held-out operator, the variant (of any report) with the
best recall@10 on the other five operators, and gives the held-out figures of those choices.

Each `--variant` re-runs the retrieval's last step (`Retriever._finish`: selection, verdict,
pack) on the same candidates with pack/selection fields changed, and reports the LOO figures
(pooled and per operator) and the misses again; `baseline` is the configuration as loaded.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

from bench.verdict_calibration import CapturingRetriever
from kb_eval.answerability_fit import collect_rows, fit_answerability
from kb_eval.cross_validation import clone_retriever, load_case_sets, parse_golden_spec
from kb_eval.golden import GoldenCase
from kb_eval.golden_eval import case_result, retrieve_case
from kb_eval.metrics import CaseResult, aggregate, case_details, is_covered
from kb_retrieval.retrieval.candidates import Candidate
from kb_retrieval.retrieval.config import RetrievalConfig
from kb_retrieval.retrieval.retriever import Retriever
from kb_retrieval.retrieval.selection import passes_minimal_floor, passes_vector_floor, select_pack
from kb_retrieval.service import open_knowledge_base

PACK_SIZE = 10
GOLDEN = [
    "data/golden/golden.jsonl@2026-11-15",
    "/work/shared/data/devset/golden.jsonl@2026-11-22",
]
# The steps undone one at a time, in the order a miss is attributed to them.
UNDO: tuple[tuple[str, dict[str, Any], bool], ...] = (
    ("vector_floor", {"vector_floor": -1.0}, True),
    ("relevance_floor", {"relevance_floor": 0.0}, True),
    ("max_per_document", {"max_per_document": 1000}, True),
    ("near_duplicate", {"near_duplicate_penalty": 0.0}, True),
    ("mmr", {"mmr_lambda": 1.0, "near_duplicate_penalty": 0.0}, True),
    ("tier", {}, False),
)


@dataclass
class _Held:
    case: GoldenCase
    fold: CapturingRetriever
    args: tuple[Any, ...]
    case_probability: float | None


@dataclass(frozen=True)
class _Chunk:
    doc_version_id: str
    text: str


def _chunk(cand: Candidate) -> _Chunk:
    return _Chunk(cand.version.doc_version_id, cand.text)


def capture(retriever: Retriever, specs: Sequence[tuple[Any, date]]) -> list[_Held]:
    """Every case retrieved once by its fold (model fitted without its operator)."""
    sets = load_case_sets(specs)
    base = retriever.config.model_copy(update={"cache_ttl_seconds": 0.0})
    dated = [(case, s.as_of) for s in sets for case in s.cases]
    rows = collect_rows(clone_retriever(retriever, base), dated)
    held: list[_Held] = []
    for tenant in sorted({case.tenant_id for case, _ in dated}):
        train = [r for r in rows if r.tenant_id != tenant]
        model = fit_answerability(train, fitted_on=f"all but {tenant}", ranker=base.learned_ranker)
        config = base.model_copy(update={"answerability": model})
        fold: CapturingRetriever = clone_retriever(retriever, config, CapturingRetriever)  # type: ignore[assignment]
        for case, as_of in dated:
            if case.tenant_id != tenant:
                continue
            retrieve_case(fold, case, as_of)
            pool = fold.last[2]
            q = config.answerability.case_probability([c.features for c in pool])
            held.append(_Held(case, fold, fold.last, q))
    return held


def _finish(held: _Held, config: RetrievalConfig) -> tuple[CaseResult, dict[str, Any]]:
    """The retrieval's last step again, with `config` (pack/selection fields changed)."""
    fold = clone_retriever(held.fold, config)
    args = list(held.args)
    args[7] = dict(args[7])
    outcome = Retriever._finish(fold, *args)
    return case_result(held.case, outcome, held.case_probability), outcome.pack


def _chosen_ids(pool: Sequence[Candidate], config: RetrievalConfig, tiered: bool) -> set[str]:
    chosen, _ = select_pack(pool, config, tiered=tiered)
    return {c.chunk_id for c in chosen[:PACK_SIZE]}


def _mechanism(
    cand: Candidate, held: _Held, config: RetrievalConfig, pack_ids: set[str]
) -> tuple[str, list[str]]:
    """The step that kept `cand` out of the pack, and every single step whose undoing admits it."""
    pool = held.args[2]
    tiered = held.args[1].policy_like
    if cand.chunk_id in _chosen_ids(pool, config, tiered):
        return "admit_conflicting", []
    admitted = []
    for name, update, keep_tiers in UNDO:
        changed = config.model_copy(update=update)
        if cand.chunk_id in _chosen_ids(pool, changed, tiered and keep_tiers):
            admitted.append(name)
    return (admitted[0] if admitted else "ordering"), admitted


def _under_floor(cand: Candidate, config: RetrievalConfig) -> str:
    if not passes_vector_floor(cand, config):
        return "vector"
    if not passes_minimal_floor(cand, config):
        return "relevance"
    return "score" if cand.relevance < config.score_floor else ""


def trace_misses(held: Sequence[_Held], config_of: Any) -> list[dict[str, Any]]:
    """One row per relevant item the pack's first 10 chunks miss (see the module docstring)."""
    rows = []
    for h in held:
        config = config_of(h)
        _, pack = _finish(h, config)
        evidence = pack["evidence"][:PACK_SIZE]
        pack_chunks = [_Chunk(e["doc_version_id"], e["text"]) for e in evidence]
        pack_ids = {e["chunk_id"] for e in evidence}
        pool: list[Candidate] = h.args[2]
        eligible = [c for c in pool if passes_minimal_floor(c, config)]
        for item in h.case.relevant:
            if any(is_covered(item, chunk) for chunk in pack_chunks):
                continue
            ranks = [i for i, c in enumerate(pool) if is_covered(item, _chunk(c))]
            row: dict[str, Any] = {
                "case_id": h.case.case_id,
                "tenant_id": h.case.tenant_id,
                "expected_outcome": h.case.expected_outcome.value,
                "doc_version_id": item.doc_version_id,
                "pack_size": len(evidence),
                "policy_like": h.args[1].policy_like,
            }
            if not ranks:
                rows.append({**row, "mechanism": "not_in_candidates", "undone_by": []})
                continue
            cand = pool[ranks[0]]
            mechanism, undone = _mechanism(cand, h, config, pack_ids)
            same_doc = [e["chunk_id"] for e in evidence if e["doc_id"] == cand.version.doc_id]
            rows.append(
                {
                    **row,
                    "mechanism": mechanism,
                    "undone_by": undone,
                    "rank": ranks[0] + 1,
                    "relevance_rank": 1
                    + sum(1 for c in pool if (-c.relevance, c.key) < (-cand.relevance, cand.key)),
                    "eligible_rank": next(
                        (i + 1 for i, c in enumerate(eligible) if c is cand), None
                    ),
                    "chunk_id": cand.chunk_id,
                    "section_title": cand.section_title,
                    "category": cand.version.category.value,
                    "relevance": round(cand.relevance, 4),
                    "confidence": round(cand.confidence, 4),
                    "rank_score": round(cand.rank_score, 4),
                    "pack_last_rank_score": round(
                        min((c.rank_score for c in pool if c.chunk_id in pack_ids), default=0.0),
                        4,
                    ),
                    "same_document_in_pack": len(same_doc),
                    "under_floor": _under_floor(cand, config),
                }
            )
    return rows


def first_chunks(held: Sequence[_Held], config_of: Any) -> dict[str, int]:
    """Answerable cases (expecting OK_TO_DRAFT) whose first chunk holds a quote: in the pack, by
    rank_score, by relevance, by confidence; and why the pack's first is not the best-ranked."""
    counts: Counter[str] = Counter()
    for h in held:
        if h.case.expected_outcome.value != "OK_TO_DRAFT" or not h.case.relevant:
            continue
        pool: list[Candidate] = h.args[2]
        if not pool:
            continue

        def holds(cand: Candidate, relevant: Sequence[Any] = h.case.relevant) -> bool:
            return any(is_covered(item, _chunk(cand)) for item in relevant)

        _, pack = _finish(h, config_of(h))
        first = pack["evidence"][:1]
        counts["cases"] += 1
        in_pack = bool(first) and any(
            is_covered(item, _Chunk(first[0]["doc_version_id"], first[0]["text"]))
            for item in h.case.relevant
        )
        counts["pack_first"] += in_pack
        by_score = min(pool, key=lambda c: (-c.rank_score, c.key))
        counts["by_rank_score"] += holds(by_score)
        counts["by_relevance"] += holds(min(pool, key=lambda c: (-c.relevance, c.key)))
        counts["by_confidence"] += holds(min(pool, key=lambda c: (-c.confidence, c.key)))
        counts["any_candidate"] += any(holds(c) for c in pool)
        if holds(by_score) and not in_pack:
            tiered = h.args[1].policy_like
            counts["lost_first_to_tier" if tiered else "lost_first_other"] += 1
    return dict(sorted(counts.items()))


def figures(held: Sequence[_Held], results: dict[str, CaseResult]) -> dict[str, Any]:
    """Outcome, recall@10, unsafe passes, must-not-cite and the answerable cases' fate."""
    cases = [h.case for h in held]
    details = case_details(cases, results)
    metrics = aggregate(details)
    answerable = [d for d in details if d["expected_outcome"] == "OK_TO_DRAFT"]
    return {
        "cases": len(details),
        "correct": sum(1 for d in details if d["outcome_correct"]),
        "outcome_accuracy": round(metrics["outcome_accuracy"], 4),
        "recall_at_10": round(metrics["recall_at_10"], 4),
        "recall_cases": sum(1 for d in details if d["n_relevant"] > 0),
        "flag_accuracy": round(metrics["flag_accuracy"], 4),
        "unsafe": sorted(d["case_id"] for d in details if d["unsafe_pass"]),
        "must_not_cite": sorted(d["case_id"] for d in details if d["must_not_cite_hits"]),
        "answerable_unknown": sum(1 for d in answerable if d["outcome"] == "UNKNOWN"),
        "best_chunk_quote": sum(1 for d in answerable if d["pack_gains"][:1] == [1]),
        "outcomes": {d["case_id"]: d["outcome"] for d in details},
    }


def _parse_variant(spec: str) -> tuple[str, dict[str, str]]:
    """`NAME:FIELD=VALUE,FIELD=VALUE` (pack/selection fields of RetrievalConfig)."""
    name, _, body = spec.partition(":")
    update = {}
    for part in filter(None, body.split(",")):
        field, sep, value = part.partition("=")
        if not sep or field not in RetrievalConfig.model_fields:
            raise SystemExit(f"--variant {spec!r}: {part!r} is not FIELD=VALUE of RetrievalConfig")
        update[field] = value
    return name, update


def measure(
    retriever: Retriever, specs: Sequence[tuple[Any, date]], variants: dict[str, dict[str, str]]
) -> dict[str, Any]:
    held = capture(retriever, specs)
    report: dict[str, Any] = {"variants": {}}
    for name, update in {"baseline": {}, **variants}.items():

        def config_of(h: _Held, update: dict[str, str] = update) -> RetrievalConfig:
            values = {**h.fold.config.model_dump(), **update}
            values["answerability"] = h.fold.config.answerability
            return RetrievalConfig.model_validate(values)

        results = {h.case.case_id: _finish(h, config_of(h))[0] for h in held}
        per_operator = {}
        for tenant in sorted({h.case.tenant_id for h in held}):
            mine = [h for h in held if h.case.tenant_id == tenant]
            per_operator[tenant] = figures(
                mine, {h.case.case_id: results[h.case.case_id] for h in mine}
            )
        misses = trace_misses(held, config_of)
        report["variants"][name] = {
            "update": update,
            "pooled": figures(held, results),
            "per_operator": per_operator,
            "mechanisms": dict(sorted(Counter(m["mechanism"] for m in misses).items())),
            "first_chunk": first_chunks(held, config_of),
            "misses": misses,
        }
    return report


def _training(per_operator: dict[str, dict[str, Any]], held_out: str) -> tuple[float, int]:
    """(recall@10 over the other operators' cases with relevant items, their correct outcomes)."""
    others = [f for tenant, f in per_operator.items() if tenant != held_out]
    weighted = sum(f["recall_at_10"] * f["recall_cases"] for f in others)
    return weighted / max(1, sum(f["recall_cases"] for f in others)), sum(
        f["correct"] for f in others
    )


def nested_choice(candidates: dict[str, dict[str, dict[str, Any]]]) -> dict[str, Any]:
    """For each operator, the setting (name -> per-operator figures) with the highest recall@10
    on the five others, ties to more correct outcomes there, then to the earlier name; and the
    figures of each operator under the setting chosen without it."""
    names = list(candidates)
    tenants = sorted(candidates[names[0]])
    chosen, held = {}, {}
    for tenant in tenants:
        best = max(
            names,
            key=lambda n: (*_training(candidates[n], tenant), -names.index(n)),
        )
        chosen[tenant] = best
        held[tenant] = candidates[best][tenant]
    cases = sum(f["recall_cases"] for f in held.values())
    return {
        "chosen": chosen,
        "correct": sum(f["correct"] for f in held.values()),
        "cases": sum(f["cases"] for f in held.values()),
        "recall_at_10": round(
            sum(f["recall_at_10"] * f["recall_cases"] for f in held.values()) / max(1, cases), 4
        ),
        "unsafe": sorted(c for f in held.values() for c in f["unsafe"]),
        "must_not_cite": sorted(c for f in held.values() for c in f["must_not_cite"]),
        "per_operator": {
            t: {"correct": f["correct"], "recall_at_10": f["recall_at_10"]} for t, f in held.items()
        },
    }


def _nested_from_files(paths: Sequence[str]) -> dict[str, Any]:
    """`nested_choice` over every variant of every report file (named FILE-STEM/VARIANT)."""
    candidates = {}
    for path in paths:
        with open(path, encoding="utf-8") as handle:
            report = json.load(handle)
        stem = path.rsplit("/", 1)[-1].removesuffix(".json")
        for name, variant in report["variants"].items():
            candidates[f"{stem}/{name}"] = variant["per_operator"]
    return nested_choice(candidates)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("golden", nargs="*", default=GOLDEN)
    parser.add_argument("--variant", action="append", default=[], help="NAME:FIELD=VALUE,...")
    parser.add_argument(
        "--nested",
        nargs="+",
        metavar="REPORT",
        help="no retrieval: choose among the variants of these reports per held-out operator "
        "on the other five (nested_choice); the first variant of the first file is the default",
    )
    args = parser.parse_args(argv)
    if args.nested:
        print(json.dumps(_nested_from_files(args.nested), indent=1, sort_keys=True))
        return
    variants = dict(_parse_variant(spec) for spec in args.variant)
    specs = [parse_golden_spec(spec, date(2026, 11, 15)) for spec in args.golden]
    kb = open_knowledge_base(config=RetrievalConfig.from_env())
    kb.retriever.audit = False
    print(json.dumps(measure(kb.retriever, specs, variants), indent=1, sort_keys=True))


if __name__ == "__main__":
    main()
