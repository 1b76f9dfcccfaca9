"""The runs compared on a BEIR dataset: the kb retriever and its BM25 leg, bm25s, dense MiniLM."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from datetime import date
from pathlib import Path

import numpy as np

from kb_eval.beir.progress import ProgressHook, SilentProgress
from kb_retrieval.db.connection import Database
from kb_retrieval.embedding import Embedder
from kb_retrieval.models import PipelineVersions
from kb_retrieval.query.plan import build_query_plan
from kb_retrieval.retrieval import candidates as legs
from kb_retrieval.retrieval.config import RetrievalConfig
from kb_retrieval.retrieval.retriever import Retriever
from kb_retrieval.retrieval.sql import CHUNK_ELIGIBLE, eligible
from kb_retrieval.text.analyzer import analyze

Run = dict[str, dict[str, float]]
# BEIR documents carry no dates, so the day changes no score; fixed for reproducible runs.
AS_OF = date(2026, 1, 1)
TOP_K = 100
EMBED_BATCH = 256
CHUNK_DOCS = (
    f"SELECT c.id, c.doc_id FROM chunks c WHERE c.tenant_id = %(tenant_id)s AND {CHUNK_ELIGIBLE}"
)
STORED_WINDOWS = f"""
SELECT v.chunk_pk, v.window_index, v.embedding FROM chunk_vectors v
WHERE v.tenant_id = %(tenant_id)s AND v.embedding_model_id = %(embedding_model_id)s
  AND v.chunker_version = %(chunker_version)s AND {eligible("v")}
ORDER BY v.chunk_pk, v.window_index
"""


# -- kb runs ------------------------------------------------------------------------------------
def ir_config(base: RetrievalConfig | None = None) -> RetrievalConfig:
    """Candidate depth for IR metrics; the cap keeps every hit of every variant (nothing cut)."""
    base = base or RetrievalConfig.from_env()
    k = TOP_K
    cap = 2 * k + 3 * (base.expansion_quota_vector + base.expansion_quota_lexical)
    overrides = {
        "k_vector": k,
        "k_lexical": k,
        "candidate_cap": cap,
        "cache_ttl_seconds": 0.0,
        "min_content_tokens": 1,
    }
    return RetrievalConfig(**{**base.model_dump(), **overrides})


def _best_per_doc(pairs: Sequence[tuple[str, float]]) -> dict[str, float]:
    scores: dict[str, float] = {}
    for doc_id, score in pairs:
        if score > scores.get(doc_id, -math.inf):
            scores[doc_id] = score
    return scores


def kb_hybrid_run(
    retriever: Retriever,
    tenant_id: str,
    queries: Mapping[str, str],
    *,
    all_windows: bool = True,
    progress: ProgressHook | None = None,
) -> Run:
    """Each query through `Retriever.retrieve`; a document scores its best candidate's rank_score."""
    progress = progress or SilentProgress()
    run: Run = {}
    for qid, text in queries.items():
        result = retriever.retrieve(tenant_id, text, as_of=AS_OF, all_windows=all_windows)
        run[qid] = _best_per_doc([(c.version.doc_id, c.rank_score) for c in result.candidates])
        progress.advance()
    return run


def _scope(versions: PipelineVersions, tenant_id: str) -> legs.Scope:
    return legs.Scope(
        tenant_id,
        versions.parser_version,
        versions.chunker_version,
        versions.embedding_model_id,
        as_of=AS_OF,
    )


def kb_lexical_run(
    db: Database,
    versions: PipelineVersions,
    tenant_id: str,
    queries: Mapping[str, str],
    config: RetrievalConfig,
    progress: ProgressHook | None = None,
) -> Run:
    """The retriever's BM25 leg alone (`candidates.lexical_leg`) on each query's direct variant."""
    progress = progress or SilentProgress()
    with db.tenant(tenant_id) as conn:
        scope = _scope(versions, tenant_id)
        chunk_doc = dict(conn.execute(CHUNK_DOCS, scope.params()).fetchall())
    run: Run = {}
    for qid, text in queries.items():
        plan = build_query_plan(text, min_content_tokens=config.min_content_tokens)
        with db.tenant(tenant_id) as conn:
            hits = legs.lexical_leg(conn, scope, [analyze(plan.variants[0].text)], config)
        run[qid] = _best_per_doc([(chunk_doc[pk], score) for _v, pk, score in hits])
        progress.advance()
    return run


def query_plan_counts(queries: Mapping[str, str], config: RetrievalConfig) -> dict[str, int]:
    """What the query planner makes of the queries: gate rejections and extra variants."""
    default_gate = RetrievalConfig().min_content_tokens
    counts = {
        f"gated_at_min_content_tokens_{default_gate}": 0,
        f"gated_at_min_content_tokens_{config.min_content_tokens}": 0,
        "policy_expansion": 0,
        "trip_specific": 0,
        "exact_term": 0,
    }
    for text in queries.values():
        strict = build_query_plan(text, min_content_tokens=default_gate)
        plan = build_query_plan(text, min_content_tokens=config.min_content_tokens)
        counts[f"gated_at_min_content_tokens_{default_gate}"] += not strict.quality_ok
        counts[f"gated_at_min_content_tokens_{config.min_content_tokens}"] += not plan.quality_ok
        for variant in plan.variants[1:]:
            counts[variant.kind] += 1
    return counts


# -- baselines ----------------------------------------------------------------------------------
def bm25s_run(
    doc_ids: Sequence[str],
    doc_tokens: list[list[str]],
    queries: Mapping[str, list[str]],
    *,
    k1: float,
    b: float,
    k: int = TOP_K,
) -> Run:
    """bm25s (Lucene BM25) over pre-tokenized documents; documents scoring 0 are left out."""
    import bm25s

    model = bm25s.BM25(k1=k1, b=b)
    model.index(doc_tokens, show_progress=False)
    tokens = [terms or [""] for terms in queries.values()]
    found, scores = model.retrieve(tokens, k=min(k, len(doc_ids)), show_progress=False)
    return {
        qid: {doc_ids[d]: float(s) for d, s in zip(found[i], scores[i], strict=True) if s > 0}
        for i, qid in enumerate(queries)
    }


def english_tokens(texts: Sequence[str]) -> list[list[str]]:
    """bm25s's default tokenizer: lower case, \\w\\w+ tokens, English stopwords, no stemming."""
    import bm25s

    return bm25s.tokenize(list(texts), stopwords="en", return_ids=False, show_progress=False)


def dense_run(
    query_ids: Sequence[str],
    query_vectors: np.ndarray,
    row_docs: Sequence[str],
    matrix: np.ndarray,
    k: int = TOP_K,
) -> Run:
    """Cosine of unit vectors; a document scores its best row (window); top k per query."""
    if not row_docs:
        return {qid: {} for qid in query_ids}
    docs = sorted(set(row_docs))
    position = {d: i for i, d in enumerate(docs)}
    index = np.array([position[d] for d in row_docs], dtype=np.int64)
    order = np.argsort(index, kind="stable")
    starts = np.flatnonzero(np.r_[True, np.diff(index[order]) != 0])
    sims = query_vectors @ matrix[order].T
    best = np.maximum.reduceat(sims, starts, axis=1)
    run: Run = {}
    for row, qid in enumerate(query_ids):
        top = np.argsort(-best[row], kind="stable")[:k]
        run[qid] = {docs[i]: float(best[row, i]) for i in top}
    return run


def stored_windows(
    db: Database, versions: PipelineVersions, tenant_id: str
) -> tuple[list[str], np.ndarray, np.ndarray]:
    """The pipeline's window vectors: document of each row, window index, matrix."""
    with db.tenant(tenant_id) as conn:
        scope = _scope(versions, tenant_id)
        chunk_doc = dict(conn.execute(CHUNK_DOCS, scope.params()).fetchall())
        rows = conn.execute(STORED_WINDOWS, scope.params()).fetchall()
    row_docs = [chunk_doc[pk] for pk, _w, _v in rows]
    windows = np.array([w for _pk, w, _v in rows], dtype=np.int64)
    matrix = np.vstack([v.to_numpy() for _pk, _w, v in rows]).astype(np.float32)
    return row_docs, windows, matrix


def truncated_vectors(
    embedder: Embedder, texts: Sequence[str], cache: Path, progress: ProgressHook | None = None
) -> np.ndarray:
    """One vector per whole text (the model truncates it); cached in `cache` (a .npy file)."""
    progress = progress or SilentProgress()
    if cache.is_file():
        stored = np.load(cache)
        if stored.shape == (len(texts), embedder.dimensions):
            return stored
    progress.stage("dense baseline: embed truncated documents", len(texts))
    parts = []
    for start in range(0, len(texts), EMBED_BATCH):
        batch = texts[start : start + EMBED_BATCH]
        parts.append(embedder.embed(batch))
        progress.advance(len(batch))
    matrix = np.vstack(parts) if parts else np.zeros((0, embedder.dimensions), np.float32)
    partial = cache.with_suffix(".partial.npy")
    np.save(partial, matrix)
    partial.replace(cache)
    return matrix
