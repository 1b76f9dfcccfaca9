"""One entry point to an open knowledge base: database, embedder, pipeline versions, retriever."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from kb_retrieval.db import Database, resolve_database_url
from kb_retrieval.embedding import Embedder, FakeHashEmbedder, MiniLMEmbedder
from kb_retrieval.ingestion.pipeline import IngestionPipeline
from kb_retrieval.releases import serving
from kb_retrieval.retrieval.config import RetrievalConfig
from kb_retrieval.retrieval.rerank import reranker_from_config
from kb_retrieval.retrieval.retriever import Retriever

EMBEDDERS = {"minilm": MiniLMEmbedder, "fake-hash": FakeHashEmbedder}


@lru_cache(maxsize=4)
def make_embedder(kind: str = "minilm") -> Embedder:
    if kind not in EMBEDDERS:
        raise ValueError(f"unknown embedder {kind!r}: choose one of {', '.join(EMBEDDERS)}")
    return EMBEDDERS[kind]()


@dataclass
class KnowledgeBase:
    db: Database
    pipeline: IngestionPipeline
    retriever: Retriever


def open_knowledge_base(
    *, url: str | None = None, embedder: str = "minilm", config: RetrievalConfig | None = None
) -> KnowledgeBase:
    db = Database(url or resolve_database_url())
    db.migrate()
    pipeline = IngestionPipeline(db, make_embedder(embedder))
    config = config or RetrievalConfig.from_env()
    served = serving(db, pipeline.embedder, pipeline.versions)
    retriever = Retriever(
        db, served.embedder, served.versions, config, reranker_from_config(config)
    )
    return KnowledgeBase(db, pipeline, retriever)
