"""`kb eval-beir`: a BEIR dataset through the project's ingestion and retrieval, beside baselines.

The corpus becomes one tenant folder (one .txt file per document, category `faq`) ingested by the
real pipeline; every test query goes through `Retriever.retrieve` and documents are ranked by their
best candidate. In the same run, on the same documents and queries: the project's SQL BM25 leg
alone, bm25s with two tokenizers, and dense MiniLM (truncated document, best or first stored
window). See docs/beir.md for the choices and the SciFact figures.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from kb_eval.beir.dataset import BeirDataset
from kb_eval.beir.ingest import (
    CATEGORY,
    IngestSummary,
    doc_version_id_for,
    document_text,
    ingest,
    select,
    tenant_id_for,
    write_tenant_folder,
)
from kb_eval.beir.progress import ProgressHook, SilentProgress
from kb_eval.beir.runs import (
    AS_OF,
    CHUNK_DOCS,
    EMBED_BATCH,
    STORED_WINDOWS,
    TOP_K,
    Run,
    bm25s_run,
    dense_run,
    english_tokens,
    ir_config,
    kb_hybrid_run,
    kb_lexical_run,
    query_plan_counts,
    stored_windows,
    truncated_vectors,
)
from kb_eval.metrics import beir_metrics
from kb_retrieval.db.connection import Database
from kb_retrieval.embedding import Embedder
from kb_retrieval.ingestion.pipeline import IngestionPipeline
from kb_retrieval.query.plan import build_query_plan
from kb_retrieval.retrieval.config import RetrievalConfig
from kb_retrieval.retrieval.retriever import Retriever
from kb_retrieval.text.analyzer import analyze

__all__ = [
    "AS_OF",
    "CATEGORY",
    "CHUNK_DOCS",
    "EMBED_BATCH",
    "PUBLISHED",
    "RUN_LABELS",
    "STORED_WINDOWS",
    "TOP_K",
    "BeirReport",
    "IngestSummary",
    "ProgressHook",
    "Run",
    "bm25s_run",
    "dense_run",
    "doc_version_id_for",
    "document_text",
    "english_tokens",
    "ingest",
    "ir_config",
    "kb_hybrid_run",
    "kb_lexical_run",
    "query_plan_counts",
    "run_beir",
    "select",
    "stored_windows",
    "tenant_id_for",
    "truncated_vectors",
    "write_tenant_folder",
]

PUBLISHED: dict[str, dict[str, float]] = {"scifact": {"bm25": 0.665, "minilm_dense": 0.645}}
RUN_LABELS: dict[str, str] = {
    "kb_hybrid": "kb hybrid (every window)",
    "kb_hybrid_first_window": "kb hybrid, first window only",
    "kb_lexical": "kb lexical leg alone (SQL BM25)",
    "bm25s_kb_analyzer": "bm25s, kb analyzer tokens",
    "bm25s_english": "bm25s, English stopwords",
    "dense_truncated": "dense MiniLM, document truncated",
    "dense_best_window": "dense MiniLM, best stored window",
    "dense_first_window": "dense MiniLM, first stored window",
    "dense_best_window_kb_query": "dense best window, kb direct query",
}


@dataclass
class BeirReport:
    dataset: str
    tenant_id: str
    documents: int
    queries: int
    runs: dict[str, dict[str, float]]
    seconds: dict[str, float]
    ingestion: IngestSummary
    query_plans: dict[str, int]
    published: dict[str, float]

    def to_json(self) -> dict[str, Any]:
        return {
            "dataset": self.dataset,
            "documents": self.documents,
            "queries": self.queries,
            "runs": self.runs,
            "published": self.published,
            "tenant_id": self.tenant_id,
            "timings_s": self.seconds,
            "ingestion": asdict(self.ingestion),
            "query_plans": self.query_plans,
        }


def run_beir(
    db: Database,
    embedder: Embedder,
    dataset: BeirDataset,
    *,
    root: Path,
    progress: ProgressHook | None = None,
    published: Mapping[str, float] | None = None,
    config: RetrievalConfig | None = None,
) -> BeirReport:
    """Ingest the corpus as one tenant, run every kb and baseline run, compute their metrics."""
    progress = progress or SilentProgress()
    seconds: dict[str, float] = {}
    started = time.perf_counter()
    tenant_id = tenant_id_for(dataset)
    folder = write_tenant_folder(dataset, tenant_id, root)
    pipeline = IngestionPipeline(db, embedder)
    summary = ingest(pipeline, folder, progress)
    seconds["ingest"] = round(time.perf_counter() - started, 2)
    config = ir_config(config)
    retriever = Retriever(db, embedder, pipeline.versions, config, reranker=None, audit=False)
    queries, qids = dataset.queries, list(dataset.queries)
    doc_ids = list(dataset.corpus)
    texts = [document_text(dataset.corpus[d]) for d in doc_ids]
    bm25 = {"k1": config.bm25_k1, "b": config.bm25_b}
    english = dict(zip(qids, english_tokens(list(queries.values())), strict=True))
    query_vectors = embedder.embed([queries[q] for q in qids])
    gate = config.min_content_tokens
    direct = [build_query_plan(queries[q], min_content_tokens=gate).variants[0].text for q in qids]
    cache = folder / f"truncated-{re.sub(r'[^A-Za-z0-9.-]+', '_', embedder.model_id)}.npy"
    row_docs, windows, matrix = stored_windows(db, pipeline.versions, tenant_id)
    first = np.flatnonzero(windows == 0)
    kb_args = {"tenant_id": tenant_id, "queries": queries, "progress": progress}
    plan: list[tuple[str, int, Callable[[], Run]]] = [
        ("kb_hybrid", len(qids), partial(kb_hybrid_run, retriever, **kb_args)),
        (
            "kb_hybrid_first_window",
            len(qids),
            partial(kb_hybrid_run, retriever, all_windows=False, **kb_args),
        ),
        (
            "kb_lexical",
            len(qids),
            partial(kb_lexical_run, db, pipeline.versions, config=config, **kb_args),
        ),
        (
            "bm25s_kb_analyzer",
            1,
            lambda: bm25s_run(
                doc_ids, [analyze(t) for t in texts], {q: analyze(queries[q]) for q in qids}, **bm25
            ),
        ),
        ("bm25s_english", 1, lambda: bm25s_run(doc_ids, english_tokens(texts), english, **bm25)),
        (
            "dense_truncated",
            1,
            lambda: dense_run(
                qids, query_vectors, doc_ids, truncated_vectors(embedder, texts, cache, progress)
            ),
        ),
        ("dense_best_window", 1, partial(dense_run, qids, query_vectors, row_docs, matrix)),
        (
            "dense_first_window",
            1,
            lambda: dense_run(qids, query_vectors, [row_docs[i] for i in first], matrix[first]),
        ),
        (
            "dense_best_window_kb_query",
            1,
            lambda: dense_run(qids, embedder.embed(direct), row_docs, matrix),
        ),
    ]
    runs: dict[str, Run] = {}
    for name, total, make in plan:
        progress.stage(RUN_LABELS[name], total)
        start = time.perf_counter()
        runs[name] = make()
        seconds[name] = round(time.perf_counter() - start, 2)
    seconds["total"] = round(time.perf_counter() - started, 2)
    metrics = {name: beir_metrics(run, dataset.qrels) for name, run in runs.items()}
    return BeirReport(
        dataset=dataset.name,
        tenant_id=tenant_id,
        documents=len(dataset.corpus),
        queries=len(qids),
        runs={name: {k: round(v, 4) for k, v in m.items()} for name, m in metrics.items()},
        seconds=seconds,
        ingestion=summary,
        query_plans=query_plan_counts(queries, config),
        published=dict(PUBLISHED.get(dataset.name, {}) if published is None else published),
    )
