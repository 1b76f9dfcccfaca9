"""Issue 11 session 9: the snapshot's BM25 leg over text classes gives the per-chunk scorer's
hits, scores, ties and idf (rows with equal terms scored once)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kb_retrieval.retrieval.snapshot_bm25 import Bm25Scope, exhaustive_top, scope_bounds
from kb_retrieval.retrieval.snapshot_classes import text_classes
from tests.test_query_speed_bm25 import _snapshot

VOCABULARY = ["alp", "boat", "cabin", "deposit", "ferry", "glacier", "hut"]

_template = st.dictionaries(st.sampled_from(VOCABULARY), st.integers(1, 5), min_size=1, max_size=5)


def _rows(term_freqs: list[dict[str, int]], versions: list[str], extra: list[int]) -> list[tuple]:
    return [
        (100 + 3 * i, version, *([None] * 9), sum(tf.values()) + more, dict(tf))
        for i, (tf, version, more) in enumerate(zip(term_freqs, versions, extra, strict=True))
    ]


def _per_chunk(snapshot, mask, variants, k, k1, b):
    """The reference: every chunk scored on its own (`exhaustive_top`), idf from `term_idf`."""
    n = int(mask.sum())
    avgdl = float(snapshot.term_count[mask].mean()) if n else 1.0
    norm = k1 * (1 - b + b * snapshot.term_count / avgdl)
    scope = Bm25Scope(mask, norm, n, avgdl, k1, b)
    every = [t for terms in variants for t in terms]
    bounds = scope_bounds(snapshot.postings, snapshot.term_count, scope, every)
    hits = [
        (variant, int(snapshot.chunk_pk[row]), score)
        for variant, terms in enumerate(variants, start=1)
        for row, score in exhaustive_top(
            snapshot.postings, scope, bounds, terms, k, snapshot.chunk_pk
        )
    ]
    return hits, snapshot.term_idf(mask, every)[0]


@settings(max_examples=300, deadline=None)
@given(
    templates=st.lists(_template, min_size=1, max_size=5),
    picks=st.lists(
        st.tuples(st.integers(0, 4), st.sampled_from(["v0", "v1", "v2"])), min_size=1, max_size=70
    ),
    lengths=st.lists(st.sampled_from([0, 0, 0, 4]), min_size=70, max_size=70),
    eligible=st.sets(st.sampled_from(["v0", "v1", "v2"])),
    k=st.integers(1, 12),
    k1=st.sampled_from([0.0, 1.2, 2.0]),
    b=st.sampled_from([0.0, 0.75, 1.0]),
    variants=st.lists(
        st.lists(st.sampled_from([*VOCABULARY, "unseen"]), max_size=5), min_size=1, max_size=4
    ),
)
def test_class_leg_equals_the_per_chunk_scorer(
    templates, picks, lengths, eligible, k, k1, b, variants
):
    """Copies of a few templates (some with another term count: another class), in versions
    eligible or not: same hits in the same order, same scores and idf."""
    term_freqs = [templates[p % len(templates)] for p, _ in picks]
    rows = _rows(term_freqs, [v for _, v in picks], lengths[: len(picks)])
    snapshot = _snapshot(rows, ("v0", "v1", "v2"))
    mask = snapshot.chunk_mask(eligible)
    hits, idf, _avgdl = snapshot.lexical_search(mask, variants, k, k1, b)
    want_hits, want_idf = _per_chunk(snapshot, mask, variants, k, k1, b)
    assert hits == want_hits
    assert idf == want_idf


def test_copies_share_a_class_and_ties_go_to_the_lower_chunk_pk():
    term_freqs = [
        {"ferry": 2, "hut": 1},
        {"ferry": 1},
        {"ferry": 2, "hut": 1},
        {"ferry": 2, "hut": 1},
    ]
    rows = _rows(term_freqs, ["v0", "v1", "v1", "v1"], [0, 0, 0, 5])
    classes = text_classes(rows)
    assert classes.of_row.tolist() == [0, 1, 0, 2]  # the longer copy is its own class
    snapshot = _snapshot(rows, ("v0", "v1"))
    both = snapshot.chunk_mask(["v0", "v1"])
    hits, _idf, _avgdl = snapshot.lexical_search(both, [["ferry", "hut"]], 2, 1.2, 0.75)
    assert [pk for _, pk, _ in hits] == [100, 106] and hits[0][2] == hits[1][2]
    later = snapshot.chunk_mask(["v1"])  # pk 100 is not eligible: the next copy, then the rest
    hits, _idf, _avgdl = snapshot.lexical_search(later, [["ferry", "hut"]], 3, 1.2, 0.75)
    assert [pk for _, pk, _ in hits] == [106, 109, 103]


def test_classes_tied_on_the_query_interleave_by_chunk_pk():
    """Two texts differing only in a word the query does not use score the same: the top k
    takes both classes' chunks in chunk_pk order, not one class first."""
    term_freqs = [{"ferry": 1, "alp": 1}, {"ferry": 1, "boat": 1}, {"ferry": 1, "alp": 1}]
    rows = _rows(term_freqs, ["v0", "v0", "v0"], [0, 0, 0])
    assert text_classes(rows).of_row.tolist() == [0, 1, 0]
    snapshot = _snapshot(rows, ("v0",))
    mask = snapshot.chunk_mask(["v0"])
    hits, _idf, _avgdl = snapshot.lexical_search(mask, [["ferry"]], 2, 1.2, 0.75)
    assert [pk for _, pk, _ in hits] == [100, 103]
