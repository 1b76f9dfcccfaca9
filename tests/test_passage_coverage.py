"""Passage coverage: the query's idf mass found together in one passage of a chunk."""

from __future__ import annotations

from kb_retrieval.retrieval.scoring import passage_coverage
from kb_retrieval.text.analyzer import analyze

FILLER = " ".join(f"filler{i} word{i} text{i}" for i in range(40))


def _terms(text: str) -> list[str]:
    return analyze(text)


def test_terms_together_cover_everything() -> None:
    text = f"{FILLER}. The refugios in the park are heated at night. {FILLER}."
    terms = _terms("refugios heated night")
    idf = dict.fromkeys(terms, 1.0)
    assert passage_coverage(text, terms, idf, window=10) == 1.0


def test_scattered_terms_count_only_what_one_passage_holds() -> None:
    text = f"The refugios are simple. {FILLER} Dinner is heated. {FILLER} We walk at night."
    terms = _terms("refugios heated night")
    idf = dict.fromkeys(terms, 1.0)
    assert passage_coverage(text, terms, idf, window=10) == 1 / 3
    assert passage_coverage(text, terms, idf, window=10_000) == 1.0


def test_weighted_by_idf_and_zero_without_query_mass() -> None:
    text = f"refugios {FILLER} heated"
    terms = _terms("refugios heated")
    idf = {terms[0]: 3.0, terms[1]: 1.0}
    assert passage_coverage(text, terms, idf, window=5) == 0.75
    assert passage_coverage(text, terms, {}, window=5) == 0.0
    assert passage_coverage(text, [], idf, window=5) == 0.0
