"""The labelled candidates of every golden case, with what a pair feature reads (issue 12 item 3).

`collect(kb, sets)` retrieves every case once, as `bench/answerability_separation.py` does
(`collect_rows`: every candidate one row, its stored features and its label), and keeps for each
case what the question-and-chunk features of `kb_eval/pair_features.py` need: the direct query
variant's text, its analyzed terms with the tenant's idf, and the text of the first `TOP`
candidates in the retrieval's own order. Saved as JSON so that the features can be studied
without retrieving again.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from kb_eval.answerability_fit import Row, collect_rows
from kb_eval.cross_validation import CaseSet
from kb_retrieval.retrieval import retriever as retriever_module
from kb_retrieval.retrieval.candidates import Candidate
from kb_retrieval.retrieval.config import RetrievalConfig
from kb_retrieval.retrieval.pool_features import set_pool_features

TOP = 3


class _Recorder:
    """A retriever that remembers, per retrieval, the direct query and the first candidates."""

    def __init__(self, retriever: Any) -> None:
        self.retriever = retriever
        self.cases: list[dict[str, Any]] = []
        self._idf: dict[str, float] = {}

    def pool_features(
        self,
        pool: Sequence[Candidate],
        plan: Any,
        variant_terms: Sequence[Sequence[str]],
        idf: dict[str, float],
        avgdl: float,
        config: RetrievalConfig,
    ) -> None:
        set_pool_features(pool, plan, variant_terms, idf, avgdl, config)
        self._idf = dict(idf)

    def retrieve(self, tenant_id: str, email: Any, **kwargs: Any) -> Any:
        self._idf = {}
        result = self.retriever.retrieve(tenant_id, email, **kwargs)
        plan = result.plan
        question = plan.variants[0].text if plan.variants else plan.normalized_text
        self.cases.append(
            {
                "tenant_id": tenant_id,
                "question": question,
                "idf": self._idf,
                "texts": [c.text for c in result.candidates[:TOP]],
            }
        )
        return result


def collect(kb: Any, sets: Sequence[CaseSet]) -> dict[str, Any]:
    """Rows and per-case pair inputs of every case of `sets` (retrieved at each set's as-of)."""
    recorder = _Recorder(kb.retriever)
    original = retriever_module.set_pool_features
    retriever_module.set_pool_features = recorder.pool_features
    try:
        cases = [(c, s.as_of) for s in sets for c in s.cases]
        rows = collect_rows(recorder, cases)  # type: ignore[arg-type]
    finally:
        retriever_module.set_pool_features = original
    inputs = {}
    for (case, _), recorded in zip(cases, recorder.cases, strict=True):
        inputs[case.case_id] = {**recorded, "expected": case.expected_outcome.value}
    return {"rows": [asdict(r) for r in rows], "cases": inputs}


def save(data: dict[str, Any], path: Path) -> None:
    path.write_text(json.dumps(data, sort_keys=True), encoding="utf-8")


def load(path: Path) -> tuple[list[Row], dict[str, dict[str, Any]]]:
    """Rows and per-case inputs written by `save`."""
    data = json.loads(path.read_text(encoding="utf-8"))
    return [Row(**r) for r in data["rows"]], data["cases"]
