"""Deterministic chunker: 500-900 token chunks with 10-15% overlap (spec 3.1-3.4).

How a document becomes chunks (all decisions depend only on the spans, the token counts and the
config, so the same input and ``ChunkerConfig.version`` give the same chunks and ids):

1. Sections. A heading span starts a section (consecutive headings stack into one heading block,
   titled by the last one); a change of ``Span.section_title`` between body spans starts a
   section titled by it; text before any heading is a section whose title is that field or None.
2. Units. Every body span is cut into sentences/lines (paragraph > sentence boundary strength);
   a sentence longer than the section's budget is cut at word boundaries, a single over-long
   "word" at character positions (last resorts).
3. Packing inside a section. A chunk is ``heading block + [overlap] + units``. When the rest of
   the section fits, it all goes in; otherwise the end is chosen among the cut points that keep
   the chunk <= max_tokens: cut points giving >= min_tokens are preferred, then the best of
   (boundary bonus - distance to a balanced size), so chunks are even and end at paragraph ends
   when one is near, at sentence ends otherwise. A balanced split never leaves a tiny tail.
4. Overlap. A chunk cut inside a section is followed by one that repeats the last sentences of
   its new text, 10-15% of max_tokens (closest to ``overlap_ratio``; if no run of whole
   sentences lands in that band, the tail words of the sentence that straddles it). A new section
   starts clean: repeating another section's sentences under a new heading would blur citations.
5. Sections never share a chunk, except: a whole document that fits in max_tokens is one chunk;
   a section that fits whole joins the previous chunk while that chunk is below min_tokens (many
   short sections); a final chunk below ~min_tokens/5 (100) that starts a section joins the
   previous chunk when the sum fits. A joined section keeps its heading inline.
6. The chunk's heading block is repeated at the top of every chunk of its section, so each chunk
   is self-contained; ``section_title`` is the section the chunk starts in; pages cover every
   span whose text is in the chunk. ``token_count`` is counted on the final text and is always
   <= max_tokens (checked; a counter that is not additive over whitespace only shortens chunks).

Steps 1-5 are `chunk_plan.py`; the config and token counters are `chunk_config.py`; step 6 and
the public names (`chunk_document`, `ChunkerConfig`, `WordPieceCounter`, ...) are here.
"""

from __future__ import annotations

from kb_retrieval.ingestion.chunk_config import (
    CHUNKER_VERSION,
    ChunkerConfig,
    TokenCounter,
    WordPieceCounter,
    count_all,
)
from kb_retrieval.ingestion.chunk_plan import Planner, Unit, raw_sections
from kb_retrieval.ingestion.locator import (
    format_source_locator,
    parse_source_locator,
    slugify_section,
    validate_doc_version_id,
)
from kb_retrieval.ingestion.policy_hint import policy_likeness_hint
from kb_retrieval.models import Chunk, ParsedDocument
from kb_retrieval.text.sentences import sentence_bounds

__all__ = [
    "CHUNKER_VERSION",
    "ChunkerConfig",
    "WordPieceCounter",
    "chunk_document",
    "format_source_locator",
    "parse_source_locator",
    "sentence_bounds",
    "slugify_section",
]

DEFAULT_CONFIG = ChunkerConfig()


def chunk_document(
    doc: ParsedDocument,
    doc_version_id: str,
    counter: TokenCounter,
    config: ChunkerConfig = DEFAULT_CONFIG,
    *,
    category: str | None = None,
) -> list[Chunk]:
    """Cut a parsed document into deterministic chunks (empty list for a document without text)."""
    validate_doc_version_id(doc_version_id)
    planner = Planner(doc.spans, counter, config)
    sections = raw_sections(doc.spans)
    if not sections:
        return []
    planner.prepare(sections)
    plans = planner.plan(sections)
    texts = [planner.render(plan.parts) for plan in plans]
    counts = count_all(counter, texts)
    if max(counts) > config.max_tokens:
        planner.strict = True
        plans = planner.plan(sections)
        texts = [planner.render(plan.parts) for plan in plans]
        counts = count_all(counter, texts)
    chunks: list[Chunk] = []
    for index, (plan, text, tokens) in enumerate(zip(plans, texts, counts, strict=True)):
        pages = [
            page
            for part in plan.parts
            if isinstance(part, Unit) and (page := doc.spans[part.span].page) is not None
        ]
        start, end = (min(pages), max(pages)) if pages else (None, None)
        chunks.append(
            Chunk(
                chunk_id=f"{doc_version_id}_{index:03d}",
                chunk_index=index,
                text=text,
                token_count=tokens,
                section_title=plan.title,
                page_start=start,
                page_end=end,
                source_locator=format_source_locator(doc_version_id, index, start, end, plan.title),
                policy_likeness_hint=policy_likeness_hint(text, category),
            )
        )
    return chunks
