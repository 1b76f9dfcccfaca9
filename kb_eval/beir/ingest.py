"""A BEIR dataset as one tenant folder (one .txt file per document), ingested by the pipeline."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from kb_eval.beir.dataset import BeirDataset, BeirDocument
from kb_eval.beir.progress import ProgressHook, SilentProgress
from kb_retrieval.ingestion.manifest import MANIFEST_NAME
from kb_retrieval.ingestion.pipeline import IngestionPipeline
from kb_retrieval.models import Category, LifecycleState

# Neutral category: not high-precedence or sensitive (no policy nudges), not trip_itinerary (whose
# titles become query entities), not marketing (its own reason code). Ranking ignores category.
CATEGORY = Category.FAQ


@dataclass
class IngestSummary:
    tenant_id: str
    documents: int
    indexed: int
    already_indexed: int
    embedded_windows: int
    problems: list[str] = field(default_factory=list)


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
    progress = progress or SilentProgress()
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
        build = pipeline.build_state(tenant, version)
        if build.state == LifecycleState.INDEXED:
            summary.already_indexed += 1
        else:
            reports = pipeline.run_all(tenant, version)
            summary.embedded_windows += sum(r.metrics.get("embedded_windows", 0) for r in reports)
            build = pipeline.build_state(tenant, version)
        if build.state == LifecycleState.INDEXED:
            summary.indexed += 1
        else:
            summary.problems.append(f"{version}: {build.state} {build.reason_code}")
        progress.advance()
    return summary
