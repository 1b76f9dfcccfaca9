"""A plain candidate of a given category and text, for tests of pool scoring (no database)."""

from __future__ import annotations

from kb_retrieval.models import Category
from kb_retrieval.retrieval.candidates import Candidate, VersionInfo
from kb_retrieval.text.analyzer import analyze


def plain_candidate(key: str, category: Category, text: str) -> Candidate:
    """Chunk 0 of version `{key}_v1`, cosine 0.5 for the direct variant, no sentence vectors."""
    version = VersionInfo(f"{key}_v1", key, f"{key} doc", category, 0, None, None, None, False)
    words = text.split()
    cand = Candidate(
        chunk_pk=sum(map(ord, key)),
        version=version,
        chunk_id=f"{key}_v1_000",
        chunk_index=0,
        section_title=None,
        page_start=None,
        page_end=None,
        source_locator=f"docv:{key}_v1#chunk:000|p:-|sec:-",
        token_count=len(words),
        text=text,
        policy_likeness_hint="Low",
        term_count=len(words),
        term_freqs={term: 1 for term in analyze(text)},
    )
    cand.sims = [0.5]
    cand.sentence_sims = []
    cand.vector = 0.5
    return cand
