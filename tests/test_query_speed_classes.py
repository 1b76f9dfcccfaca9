"""Issue 11 session 9: the snapshot's BM25 leg over text classes gives the per-chunk scorer's
hits, scores, ties and idf (rows with equal terms scored once)."""

from __future__ import annotations

import math
from datetime import date

from hypothesis import given, settings
from hypothesis import strategies as st

from kb_retrieval.retrieval.candidates import PipelineKey, VersionInfo
from kb_retrieval.retrieval.snapshot import TenantSnapshot, VersionFacts
from kb_retrieval.retrieval.snapshot_classes import text_classes

VOCABULARY = ["alp", "boat", "cabin", "deposit", "ferry", "glacier", "hut"]

_template = st.dictionaries(st.sampled_from(VOCABULARY), st.integers(1, 5), min_size=1, max_size=5)


def _rows(term_freqs: list[dict[str, int]], versions: list[str], extra: list[int]) -> list[tuple]:
    return [
        (100 + 3 * i, version, *([None] * 9), sum(tf.values()) + more, dict(tf))
        for i, (tf, version, more) in enumerate(zip(term_freqs, versions, extra, strict=True))
    ]


def _snapshot(rows: list[tuple], versions: tuple[str, ...]) -> TenantSnapshot:
    def facts(vid: str) -> VersionFacts:
        info = VersionInfo(
            vid, "doc-" + vid, "T", "general", 1, date(2026, 1, 1), None, None, False
        )
        return VersionFacts(info, ())

    key = PipelineKey("tenant-a", "p1", "c1", "m1")
    return TenantSnapshot(key, 1, {v: facts(v) for v in versions}, rows, [], [])


def _per_chunk(snapshot, tfs, mask, variants, k, k1, b):
    """The reference: every eligible chunk (`tfs`: each row's term frequencies, in chunk_pk
    order) scored on its own, its terms' weights added in sorted
    term order from 0.0 (the leg's arithmetic), best first, ties by chunk_pk; idf from
    `term_idf`."""
    rows = [int(r) for r in mask.nonzero()[0]]
    n = len(rows)
    avgdl = float(snapshot.term_count[mask].mean()) if n else 1.0
    norm = k1 * (1 - b + b * snapshot.term_count / avgdl)
    every = [t for terms in variants for t in terms]
    df = {t: sum(1 for r in rows if t in tfs[r]) for t in set(every)}
    idf = {t: math.log(1 + (n - d + 0.5) / (d + 0.5)) for t, d in df.items() if d}
    hits = []
    for variant, terms in enumerate(variants, start=1):
        used = sorted(t for t in set(terms) if t in idf)
        scored = []
        for r in rows:
            if not any(t in tfs[r] for t in used):
                continue
            score = 0.0
            for t in used:
                if t in tfs[r]:
                    tf = float(tfs[r][t])
                    score += idf[t] * tf * (k1 + 1) / (tf + float(norm[r]))
            scored.append((-score, int(snapshot.chunk_pk[r]), score))
        hits += [(variant, pk, score) for _, pk, score in sorted(scored)[:k]]
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
    want_hits, want_idf = _per_chunk(snapshot, term_freqs, mask, variants, k, k1, b)
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
