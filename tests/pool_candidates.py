"""Candidates built in memory for tests of pool scoring and features (no database)."""

from __future__ import annotations

from collections import Counter
from datetime import date

from kb_retrieval.models import Category
from kb_retrieval.retrieval.candidates import Candidate, VersionInfo
from kb_retrieval.text.analyzer import analyze


def built_candidate(
    pk: int,
    chunk_id: str,
    version_id: str,
    doc_id: str,
    category: Category,
    text: str,
    *,
    hint: str = "Medium",
    title: str | None = None,
    reviewed: date | None = None,
    term_freqs: dict[str, int] | None = None,
    term_count: int | None = None,
    token_count: int | None = None,
) -> Candidate:
    """Chunk `chunk_id` of version `version_id`; term and token counts from the analyzer unless
    given."""
    terms = analyze(text)
    term_count = len(terms) if term_count is None else term_count
    return Candidate(
        chunk_pk=pk,
        version=VersionInfo(
            version_id, doc_id, title or f"Doc {doc_id}", category, 0, None, reviewed, None, False
        ),
        chunk_id=chunk_id,
        chunk_index=0,
        section_title=None,
        page_start=None,
        page_end=None,
        source_locator=f"docv:{version_id}#chunk:000|p:-|sec:-",
        token_count=term_count if token_count is None else token_count,
        text=text,
        policy_likeness_hint=hint,
        term_count=term_count,
        term_freqs=dict(Counter(terms)) if term_freqs is None else term_freqs,
    )


def plain_candidate(key: str, category: Category, text: str) -> Candidate:
    """Chunk 0 of version `{key}_v1`, cosine 0.5 for the direct variant, no sentence vectors."""
    cand = built_candidate(
        sum(map(ord, key)),
        f"{key}_v1_000",
        f"{key}_v1",
        key,
        category,
        text,
        hint="Low",
        term_freqs={term: 1 for term in analyze(text)},
        term_count=len(text.split()),
    )
    cand.sims = [0.5]
    cand.sentence_sims = []
    cand.vector = 0.5
    return cand
