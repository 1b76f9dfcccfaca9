"""One entry point to an open knowledge base: database, embedder, pipeline versions, retriever."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
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
    """The database, the pipeline that fills it, and the retriever of the active release.

    The retriever is built on first use (`kb ingest` never needs it, so a fake-embedder ingest
    never constructs the active release's query embedder); a retriever passed in is used as is.
    """

    db: Database
    pipeline: IngestionPipeline
    _retriever: Retriever | None = None
    config: RetrievalConfig | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    @property
    def retriever(self) -> Retriever:
        with self._lock:
            if self._retriever is None:
                self._retriever = serving_retriever(self.db, self.pipeline, self.config)
            return self._retriever


def serving_retriever(
    db: Database, pipeline: IngestionPipeline, config: RetrievalConfig | None = None
) -> Retriever:
    """A retriever of the active release (its versions and query embedder), else the pipeline's."""
    config = config or RetrievalConfig.from_env()
    served = serving(db, pipeline.embedder, pipeline.versions)
    return Retriever(db, served.embedder, served.versions, config, reranker_from_config(config))


def open_knowledge_base(
    *, url: str | None = None, embedder: str = "minilm", config: RetrievalConfig | None = None
) -> KnowledgeBase:
    db = Database(url or resolve_database_url())
    db.migrate()
    pipeline = IngestionPipeline(db, make_embedder(embedder))
    return KnowledgeBase(db, pipeline, config=config or RetrievalConfig.from_env())
