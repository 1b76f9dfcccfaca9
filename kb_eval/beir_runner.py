"""`kb eval-beir`: a BEIR dataset through the project's ingestion and retrieval, beside baselines.

The corpus becomes one tenant folder (one .txt file per document, category `faq`) ingested by the
real pipeline; every test query goes through `Retriever.retrieve` and documents are ranked by their
best candidate. In the same run, on the same documents and queries: the project's SQL BM25 leg
alone, bm25s with two tokenizers, and dense MiniLM (truncated document, best or first stored
window). See docs/beir.md for the choices and the SciFact figures.
"""

from __future__ import annotations

import hashlib
import math
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import date
from functools import partial
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import yaml

from kb_eval.beir import BeirDataset, BeirDocument
from kb_eval.metrics import beir_metrics
from kb_retrieval.analyzer import analyze
from kb_retrieval.db.connection import Database
from kb_retrieval.embedding import Embedder
from kb_retrieval.ingestion.manifest import MANIFEST_NAME
from kb_retrieval.ingestion.pipeline import IngestionPipeline, PipelineVersions
from kb_retrieval.models import Category, LifecycleState
from kb_retrieval.query import build_query_plan
from kb_retrieval.retrieval import candidates as legs
from kb_retrieval.retrieval.config import RetrievalConfig
from kb_retrieval.retrieval.retriever import Retriever
from kb_retrieval.retrieval.sql import CHUNK_SCOPE

Run = dict[str, dict[str, float]]
# Neutral category: not high-precedence or sensitive (no policy nudges), not trip_itinerary (whose
# titles become query entities), not marketing (its own reason code). Ranking ignores category.
CATEGORY = Category.FAQ
# BEIR documents carry no dates, so the day changes no score; fixed for reproducible runs.
AS_OF = date(2026, 1, 1)
TOP_K = 100
EMBED_BATCH = 256
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
CHUNK_DOCS = f"SELECT c.id, c.doc_id FROM chunks c WHERE {CHUNK_SCOPE}"
STORED_WINDOWS = """
SELECT v.chunk_pk, v.window_index, v.embedding FROM chunk_vectors v
WHERE v.tenant_id = %(tenant_id)s AND v.embedding_model_id = %(embedding_model_id)s
  AND v.chunker_version = %(chunker_version)s AND v.doc_version_id = ANY(%(versions)s)
ORDER BY v.chunk_pk, v.window_index
"""


class ProgressHook(Protocol):
    """Where long stages report progress (the CLI shows a rich progress bar)."""

    def stage(self, name: str, total: int) -> None: ...

    def advance(self, count: int = 1) -> None: ...


class _Silent:
    def stage(self, name: str, total: int) -> None:
        return None

    def advance(self, count: int = 1) -> None:
        return None


@dataclass
class IngestSummary:
    tenant_id: str
    documents: int
    indexed: int
    already_indexed: int
    embedded_windows: int
    problems: list[str] = field(default_factory=list)


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


# -- dataset -> tenant folder -----------------------------------------------------------------
def select(
    dataset: BeirDataset, limit_docs: int | None = None, limit_queries: int | None = None
) -> BeirDataset:
    """The first `limit_queries` queries; the documents they judge plus the corpus's first ones
    up to `limit_docs` in all (more when the judged documents alone exceed it)."""
    qids = list(dataset.queries)[:limit_queries]
    qrels = {qid: dataset.qrels[qid] for qid in qids}
    corpus = dataset.corpus
    if limit_docs is not None:
        keep = {doc for qid in qids for doc in qrels[qid]}
        for doc_id in dataset.corpus:
            if len(keep) >= limit_docs:
                break
            keep.add(doc_id)
        corpus = {doc_id: doc for doc_id, doc in dataset.corpus.items() if doc_id in keep}
    return BeirDataset(dataset.name, corpus, {q: dataset.queries[q] for q in qids}, qrels)


def document_text(doc: BeirDocument) -> str:
    """Title, blank line, text: what the pipeline (as a .txt file) and the baselines read."""
    return "\n\n".join(part.strip() for part in (doc.title, doc.text) if part.strip())


def doc_version_id_for(doc_id: str) -> str:
    """File-name-safe, readable and unique: the id's safe characters plus a hash of the id."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", doc_id).strip("._-")[:60] or "doc"
    return f"{slug}-{hashlib.sha256(doc_id.encode()).hexdigest()[:8]}"


def tenant_id_for(dataset: BeirDataset) -> str:
    """`beir-<name>-<corpus fingerprint>`: another corpus or subset never mixes with this one."""
    digest = hashlib.sha256()
    for doc in dataset.corpus.values():
        digest.update("\0".join((doc.doc_id, doc.title, doc.text, "")).encode())
    name = re.sub(r"[^a-z0-9]+", "-", dataset.name.lower()).strip("-")[:40] or "dataset"
    return f"beir-{name}-{digest.hexdigest()[:10]}"


def _write_if_changed(path: Path, content: str) -> None:
    data = content.encode("utf-8")
    if not path.is_file() or path.read_bytes() != data:
        path.write_bytes(data)


def write_tenant_folder(dataset: BeirDataset, tenant_id: str, root: Path) -> Path:
    """`root/<tenant_id>/kb.yaml` and `docs/<doc_version_id>.txt`; unchanged files are kept."""
    folder = root / tenant_id
    (folder / "docs").mkdir(parents=True, exist_ok=True)
    documents = []
    for doc in dataset.corpus.values():
        version = doc_version_id_for(doc.doc_id)
        source = f"docs/{version}.txt"
        _write_if_changed(folder / source, document_text(doc) + "\n")
        title = " ".join((doc.title or doc.text[:80]).split()) or doc.doc_id
        documents.append(
            {
                "doc_id": doc.doc_id,
                "doc_version_id": version,
                "title": title,
                "category": CATEGORY.value,
                "source": source,
            }
        )
    manifest = {"tenant_id": tenant_id, "documents": documents}
    text = yaml.safe_dump(manifest, sort_keys=False, allow_unicode=True, width=1000)
    _write_if_changed(folder / MANIFEST_NAME, text)
    return folder


def ingest(
    pipeline: IngestionPipeline, folder: Path, progress: ProgressHook | None = None
) -> IngestSummary:
    """Register the folder and run every step for each version not indexed yet."""
    progress = progress or _Silent()
    progress.stage("register", 1)
    registration = pipeline.register(folder)
    progress.advance()
    tenant = registration.tenant_id
    summary = IngestSummary(
        tenant,
        len(registration.registered) + len(registration.problems),
        0,
        0,
        0,
        [p.message for p in registration.problems],
    )
    progress.stage("ingest", len(registration.registered))
    for version in registration.registered:
        build = pipeline.build(tenant, version)
        if build["state"] == LifecycleState.INDEXED:
            summary.already_indexed += 1
        else:
            reports = pipeline.run_all(tenant, version)
            summary.embedded_windows += sum(r.metrics.get("embedded_windows", 0) for r in reports)
            build = pipeline.build(tenant, version)
        if build["state"] == LifecycleState.INDEXED:
            summary.indexed += 1
        else:
            summary.problems.append(f"{version}: {build['state']} {build['reason_code']}")
        progress.advance()
    return summary


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
    progress = progress or _Silent()
    run: Run = {}
    for qid, text in queries.items():
        result = retriever.retrieve(tenant_id, text, as_of=AS_OF, all_windows=all_windows)
        run[qid] = _best_per_doc([(c.version.doc_id, c.rank_score) for c in result.candidates])
        progress.advance()
    return run


def _scope(conn: Any, versions: PipelineVersions, tenant_id: str) -> legs.Scope:
    base = {"tenant_id": tenant_id, **asdict(versions), "as_of": AS_OF}
    eligible = legs.load_versions(conn, base, audit=False)
    return legs.Scope(
        tenant_id,
        versions.parser_version,
        versions.chunker_version,
        versions.embedding_model_id,
        eligible,
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
    progress = progress or _Silent()
    with db.tenant(tenant_id) as conn:
        scope = _scope(conn, versions, tenant_id)
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
        scope = _scope(conn, versions, tenant_id)
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
    progress = progress or _Silent()
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


# -- everything --------------------------------------------------------------------------------
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
    progress = progress or _Silent()
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
