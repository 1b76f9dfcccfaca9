"""MaxScore on the PostgreSQL path's lexical leg (issue 11 session 9): the pruned statement gives
the exhaustive statement's top k, scores and df whenever its bound holds, says so when it does
not, and the leg then answers with the exhaustive statement."""

from __future__ import annotations

from datetime import date
from typing import Any

import numpy as np
import pytest

from kb_retrieval.ingestion.postings_backfill import backfill_postings
from kb_retrieval.retrieval import candidates as legs
from kb_retrieval.retrieval import lexical_sql, sql
from kb_retrieval.retrieval.config import RetrievalConfig
from kb_retrieval.text.analyzer import analyze

AS_OF = date(2026, 11, 15)
# Fresh questions, each read as the variants of one query.
QUESTIONS = [
    ["Can two of us share a tent on the ridge nights, or is it one per person?", "tent sharing"],
    ["What happens to our money if the ferry to the island is cancelled by the weather?"],
    ["Are walking poles provided or should we pack our own?", "equipment list poles"],
    ["How early must the balance be settled before departure?", "final payment"],
    ["Is the sunset paddle suitable for someone who has never held a paddle?"],
    ["kayak kayak kayak", "guide", "rain jacket wetsuit"],
]


@pytest.fixture
def demo_postings(db, demo_index):
    for tenant_id in demo_index:
        backfill_postings(db, tenant_id)
    return demo_index


def _scope(pipeline: Any, tenant_id: str, as_of: date) -> legs.Scope:
    v = pipeline.versions
    return legs.Scope(
        tenant_id, v.parser_version, v.chunker_version, v.embedding_model_id, as_of=as_of
    )


def _rows(conn: Any, statement: str, params: dict[str, Any]) -> tuple[list, dict, list]:
    rows = conn.execute(statement, params).fetchall()
    hits, df = lexical_sql.split_rows(rows)
    checks = sorted((-row[0], row[2]) for row in rows if row[0] < 0)
    return sorted(hits), df, checks


@pytest.mark.parametrize("share", [0.0, 0.5])
def test_the_pruned_statement_gives_the_exhaustive_ranking_when_its_bound_holds(
    db, real_pipeline, demo_postings, share
):
    held = 0
    for tenant_id in demo_postings:
        for as_of in (date(2026, 3, 1), AS_OF):
            scope = _scope(real_pipeline, tenant_id, as_of)
            with db.tenant(tenant_id) as conn:
                conn.execute(sql.FORCE_CUSTOM_PLANS)
                for question in QUESTIONS:
                    variants = [analyze(text) for text in question]
                    params = legs._lexical_params(scope, variants, RetrievalConfig())
                    lexical = lexical_sql.lexical_statement(conn, params)
                    assert lexical.statement is sql.LEXICAL_BM25_PRUNED
                    pruned_params = {**lexical.params, "share": share}
                    hits, df, checks = _rows(conn, sql.LEXICAL_BM25_PRUNED, pruned_params)
                    full, full_df, _ = _rows(conn, sql.LEXICAL_BM25_POSTINGS, lexical.params)
                    assert df == full_df, question
                    if share == 0.0:
                        assert all(ok == 1 for _, ok in checks), question
                    for variant, ok in checks:
                        if ok == 1:
                            held += 1
                            mine = [h for h in hits if h[0] == variant]
                            theirs = [h for h in full if h[0] == variant]
                            assert mine == theirs, (tenant_id, question, variant)
    # The demo tenants are small: where fewer than k chunks hold an essential term the bound
    # cannot be proven (the leg then runs the exhaustive statement, tested below).
    assert held > (20 if share == 0.0 else 0)


def test_the_leg_falls_back_to_the_exhaustive_statement(
    db, real_pipeline, demo_postings, monkeypatch
):
    """With every term outside the scored set the bound cannot hold: the leg's hits and idf are
    the exhaustive statement's."""
    scope = _scope(real_pipeline, "alpine-treks", AS_OF)
    variants = [analyze(text) for text in QUESTIONS[0]]
    config = RetrievalConfig()
    with db.tenant("alpine-treks") as conn:
        conn.execute(sql.FORCE_CUSTOM_PLANS)
        params = legs._lexical_params(scope, variants, config)
        lexical = lexical_sql.lexical_statement(conn, params)
        full, _, _ = _rows(conn, sql.LEXICAL_BM25_POSTINGS, lexical.params)
        monkeypatch.setattr(lexical_sql, "PRUNE_SHARE", 2.0)
        forced = lexical_sql.lexical_statement(conn, params)
        rows = conn.execute(forced.statement, forced.params).fetchall()
        served = legs.lexical_leg(conn, scope, variants, config)
        _, _, (idf, avgdl) = legs.search_legs(
            conn, scope, np.eye(1, 384, dtype=np.float32), variants, config
        )
        expected_idf = legs.term_idf(conn, scope, sorted({t for v in variants for t in v}))
    assert not lexical_sql.complete(rows)
    assert full and sorted(served) == full
    assert (idf, avgdl) == expected_idf
