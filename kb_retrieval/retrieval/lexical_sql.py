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


# MaxScore's split (sql.LEXICAL_BM25_PRUNED): per variant, the terms of least bound whose bounds
# sum to at most this share of the variant's total are read only for the chunks of the others.
# At the 100k-chunk bench tenant the 16th best score was 80-95% of the total (docs/benchmarks.md,
# session 9), so the bound held at 0.5.
PRUNE_SHARE = 0.5


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
    extra = {"n": stats[0], "avgdl": stats[1], "unique_terms": unique, "share": PRUNE_SHARE}
    return LexicalStatement(sql.LEXICAL_BM25_PRUNED, {**params, **extra}, stats)


def split_rows(
    rows: Sequence[Sequence[Any]],
) -> tuple[list[tuple[int, int, float]], dict[str, int]]:
    """The hits (variant index from 1, chunk_pk, BM25) and the df rows (variant 0: df, term)
    of a lexical statement's result (the pruned statement's check rows left out)."""
    hits = [(row[0], row[1], row[2]) for row in rows if row[0] > 0]
    df = {row[3]: int(row[2]) for row in rows if row[0] == 0}
    return hits, df


def complete(rows: Sequence[Sequence[Any]]) -> bool:
    """Whether a lexical result is the exhaustive one: every check row of the pruned statement
    held (the other statements have none)."""
    return all(row[2] == 1 for row in rows if row[0] < 0)


def finish(conn: Any, lexical: LexicalStatement, rows: list[Any]) -> list[Any]:
    """`rows` of `lexical`, or, when a pruned variant's bound did not hold, the exhaustive
    statement's rows for the same parameters."""
    if complete(rows):
        return rows
    return conn.execute(sql.LEXICAL_BM25_POSTINGS, lexical.params).fetchall()


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
