"""The PostgreSQL path's lexical statements: from the postings table when every eligible version
has its postings (migration 0010; `kb index postings` backfills older chunks), else from the
chunks (the statements of issue 11 session 7). Both give the same BM25 top k, df, N and avgdl
(tests/test_postings.py)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kb_retrieval.retrieval import sql


def any_term_query(terms: Sequence[str]) -> str:
    """The terms OR-ed into one tsquery (each quoted as tsquery input quotes a lexeme)."""
    quoted = ("'" + t.replace("\\", "\\\\").replace("'", "''") + "'" for t in sorted(set(terms)))
    return " | ".join(quoted)


def postings_scope(conn: Any, params: dict[str, Any]) -> tuple[float, float] | None:
    """N and avgdl of the eligible chunks from their builds; None when a build lacks postings."""
    n, avgdl, missing = conn.execute(sql.POSTINGS_SCOPE, params).fetchone()
    return None if missing else (float(n), float(avgdl))


@dataclass(frozen=True)
class LexicalStatement:
    """The BM25 statement and its parameters; with the postings, N and avgdl of the scope (the
    statement then also returns each term's df, `split_rows`)."""

    statement: str
    params: dict[str, Any]
    stats: tuple[float, float] | None


def lexical_statement(conn: Any, params: dict[str, Any]) -> LexicalStatement:
    """The BM25 statement for `params` (candidates._lexical_params)."""
    stats = postings_scope(conn, params)
    if stats is None:
        return LexicalStatement(sql.LEXICAL_BM25, params, None)
    unique = sorted(set(params["terms"]))
    extra = {"n": stats[0], "avgdl": stats[1], "unique_terms": unique}
    return LexicalStatement(sql.LEXICAL_BM25_POSTINGS, {**params, **extra}, stats)


def split_rows(
    rows: Sequence[Sequence[Any]],
) -> tuple[list[tuple[int, int, float]], dict[str, int]]:
    """The hits (variant index from 1, chunk_pk, BM25) and the df rows (variant 0: df, term)
    of a lexical statement's result."""
    hits = [(row[0], row[1], row[2]) for row in rows if row[0] != 0]
    df = {row[3]: int(row[2]) for row in rows if row[0] == 0}
    return hits, df


def term_stats(
    conn: Any, params: dict[str, Any], terms: Sequence[str]
) -> tuple[float, float, list[tuple[str, int]]]:
    """N, avgdl and (term, df) of each distinct term over the eligible chunks."""
    unique = sorted(set(terms))
    stats = postings_scope(conn, params)
    if stats is None:
        params = {**params, "terms": unique, "any_term": any_term_query(unique)}
        n, avgdl = conn.execute(sql.COUNT_SCOPE, params).fetchone()
        return n, avgdl, conn.execute(sql.TERM_STATS, params).fetchall()
    rows = conn.execute(sql.TERM_STATS_POSTINGS, {**params, "unique_terms": unique}).fetchall()
    return stats[0], stats[1], rows
