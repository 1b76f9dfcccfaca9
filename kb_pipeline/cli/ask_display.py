"""What `kb ask` prints beside the pack: the sentence that answers, and who says what in a conflict."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kb_retrieval.text.analyzer import analyze
from kb_retrieval.text.quantities import extract_quantities
from kb_retrieval.text.sentences import sentence_bounds


def query_terms(email: str, variants: Iterable[Mapping[str, Any]]) -> set[str]:
    """The analysed terms of the email and of every query variant of the pack."""
    terms = set(analyze(email))
    for variant in variants:
        terms.update(analyze(str(variant.get("text", ""))))
    return terms


def best_sentence(text: str, terms: set[str], section_title: str | None = None) -> str:
    """The sentence of `text` sharing the most distinct query terms (the first on ties); the
    section heading is never chosen while another sentence exists."""
    sentences = [" ".join(text[s:e].split()) for s, e in sentence_bounds(text)]
    sentences = [s for s in sentences if s] or [" ".join(text.split())]
    body = [s for s in sentences if s != (section_title or "").strip()] or sentences
    scores = [len(terms & set(analyze(sentence))) for sentence in body]
    return body[scores.index(max(scores))]


def _values_in(text: str, values: Iterable[str]) -> list[str]:
    """The conflict values that the chunk states (by canonical quantity label, else verbatim)."""
    labels = {q.label for q in extract_quantities(text)}
    lowered = text.lower()
    return [v for v in values if v in labels or v.lower() in lowered]


def conflict_lines(pack: Mapping[str, Any]) -> list[str]:
    """One line per conflict naming each source (title and locator) and the value it states."""
    by_chunk = {item["chunk_id"]: item for item in pack["evidence"]}
    lines = []
    for conflict in pack["conflicts"]:
        parts = []
        for chunk_id in conflict["chunk_ids"]:
            item = by_chunk.get(chunk_id)
            if item is None:
                parts.append(f"{chunk_id} (not in the evidence shown)")
                continue
            stated = _values_in(item["text"], conflict["values"]) or ["(value not located)"]
            parts.append(
                f"{item['doc_title']} [{item['source_locator']}] says {' / '.join(stated)}"
            )
        lines.append(f"conflict {conflict['kind']}: " + "; ".join(parts))
    return lines


def near_answer_line(pack: Mapping[str, Any]) -> str | None:
    """The nearest sentence of a pack with no usable chunk, with its cosine and source."""
    near = pack.get("near_answer")
    if not near:
        return None
    return f"nearest sentence ({near['cosine']:.2f}, {near['chunk_id']}): {near['sentence']}"
