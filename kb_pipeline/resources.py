"""Resources shared by every domain: the knowledge base (database, embedder, pipeline, retriever)."""

from __future__ import annotations

import os
from functools import lru_cache

from dagster import ConfigurableResource

from kb_retrieval.db import Database
from kb_retrieval.ingestion.pipeline import IngestionPipeline
from kb_retrieval.retrieval.retriever import Retriever
from kb_retrieval.service import KnowledgeBase, open_knowledge_base


@lru_cache(maxsize=8)
def _knowledge_base(url: str, embedder: str) -> KnowledgeBase:
    return open_knowledge_base(url=url or None, embedder=embedder)


class KnowledgeBaseResource(ConfigurableResource):
    """The tenant knowledge base in PostgreSQL plus the embedder that fills it.

    `database_url` empty means KB_DATABASE_URL or the embedded server under `KB_HOME`;
    `embedder` is `minilm` (the real model) or `fake-hash` (the test double: hashed bag of words).
    """

    database_url: str = ""
    embedder: str = "minilm"

    @classmethod
    def from_env(cls) -> KnowledgeBaseResource:
        """`KB_DATABASE_URL` (else the embedded server) and `KB_EMBEDDER` (default minilm)."""
        return cls(
            database_url=os.environ.get("KB_DATABASE_URL", ""),
            embedder=os.environ.get("KB_EMBEDDER", "minilm"),
        )

    def knowledge_base(self) -> KnowledgeBase:
        return _knowledge_base(self.database_url, self.embedder)

    def database(self) -> Database:
        return self.knowledge_base().db

    def pipeline(self) -> IngestionPipeline:
        return self.knowledge_base().pipeline

    def retriever(self) -> Retriever:
        return self.knowledge_base().retriever
