"""In-memory search snapshots against the SQL legs, on the real server and the real model."""

from __future__ import annotations

import json
from datetime import date

import pytest

from kb_retrieval.models import Category
from kb_retrieval.query.plan import build_query_plan
from kb_retrieval.retrieval import candidates as legs
from kb_retrieval.retrieval import sql
from kb_retrieval.retrieval.config import RetrievalConfig
from kb_retrieval.retrieval.retriever import Retriever
from kb_retrieval.retrieval.snapshot import SnapshotKey
from kb_retrieval.retrieval.snapshot_store import SNAPSHOTS, load_snapshot, read_generation
from kb_retrieval.text.analyzer import analyze
from tests.conftest import EVAL_AS_OF, GOLDEN, copy_tenant

AS_OF = date.fromisoformat(EVAL_AS_OF)
DATES = [date(2025, 1, 1), AS_OF, date(2027, 6, 1)]


def _cases(limit_per_tenant: int = 12) -> list[dict]:
    cases = [json.loads(line) for line in GOLDEN.read_text().splitlines() if line.strip()]
    picked: dict[str, list[dict]] = {}
    for case in cases:
        if isinstance(case["email"], str):
            picked.setdefault(case["tenant_id"], []).append(case)
    return [c for tenant in sorted(picked) for c in picked[tenant][:limit_per_tenant]]


def _key(real_pipeline, tenant_id: str) -> SnapshotKey:
    v = real_pipeline.versions
    return SnapshotKey(tenant_id, v.parser_version, v.chunker_version, v.embedding_model_id)


def _snapshot(db, real_pipeline, tenant_id: str):
    with db.tenant(tenant_id) as conn:
        generation = read_generation(conn, tenant_id)
        return load_snapshot(conn, _key(real_pipeline, tenant_id), generation, 10**9)


def _scope(real_pipeline, tenant_id: str) -> legs.Scope:
    v = real_pipeline.versions
    return legs.Scope(
        tenant_id, v.parser_version, v.chunker_version, v.embedding_model_id, as_of=AS_OF
    )


@pytest.mark.parametrize("tenant_id", ["alpine-treks", "coastal-kayak"])
def test_eligible_versions_match_the_sql_rule(db, real_pipeline, demo_index, tenant_id):
    snapshot = _snapshot(db, real_pipeline, tenant_id)
    key = _key(real_pipeline, tenant_id)
    for as_of in DATES:
        for audit in (False, True):
            with db.tenant(tenant_id) as conn:
                expected = legs.load_versions(conn, {**key.params(), "as_of": as_of}, audit=audit)
            assert snapshot.eligible_versions(as_of, audit=audit) == expected, (as_of, audit)


def test_both_legs_and_term_statistics_match_the_sql_legs(db, minilm, real_pipeline, demo_index):
    config = RetrievalConfig(exact_scan_max_vectors=10**9)
    snapshots = {t: _snapshot(db, real_pipeline, t) for t in demo_index}
    compared = 0
    for case in _cases():
        tenant_id = case["tenant_id"]
        snapshot = snapshots[tenant_id]
        plan = build_query_plan(case["email"], trip_context=case.get("trip_context"))
        if not plan.quality_ok:
            continue
        vectors = minilm.embed([v.text for v in plan.variants])
        terms = [analyze(v.text) for v in plan.variants]
        versions = snapshot.eligible_versions(AS_OF, audit=False)
        mask = snapshot.chunk_mask(versions)
        scope = _scope(real_pipeline, tenant_id)
        with db.tenant(tenant_id) as conn:
            conn.execute(sql.FORCE_CUSTOM_PLANS)
            sql_vector, sql_lexical, _ = legs.search_legs(conn, scope, vectors, terms, config)
            sql_idf, sql_avgdl = legs.term_idf(conn, scope, terms[0])
        mem_vector = snapshot.vector_leg(mask, vectors, config.k_vector)
        mem_lexical = snapshot.lexical_leg(
            mask, terms, config.k_lexical, config.bm25_k1, config.bm25_b
        )
        _assert_same_hits(sql_vector, mem_vector, tolerance=1e-5)
        _assert_same_hits(sql_lexical, mem_lexical, tolerance=1e-9)
        mem_idf, mem_avgdl = snapshot.term_idf(mask, terms[0])
        assert mem_avgdl == pytest.approx(sql_avgdl, rel=1e-12)
        assert mem_idf == pytest.approx(sql_idf, rel=1e-12)
        compared += 1
    assert compared >= 20


def _assert_same_hits(expected, got, tolerance: float) -> None:
    """Per variant: the same scores in the same order, and the same chunks above the cut-off
    (only chunks tied within float precision at the k-th score may be swapped)."""
    assert sorted({h[0] for h in expected}) == sorted({h[0] for h in got})
    for vidx in {h[0] for h in expected}:
        a = sorted(((pk, s) for v, pk, s in expected if v == vidx), key=lambda r: (-r[1], r[0]))
        b = [(pk, s) for v, pk, s in got if v == vidx]
        assert [s for _, s in b] == pytest.approx([s for _, s in a], abs=tolerance)
        cut = a[-1][1] + tolerance
        assert {pk for pk, s in a if s > cut} == {pk for pk, s in b if s > cut}


def test_candidate_cosines_match_pgvector(db, minilm, real_pipeline, demo_index):
    snapshot = _snapshot(db, real_pipeline, "alpine-treks")
    vectors = minilm.embed(["cancel five days before a full refund", "altitude medical clearance"])
    versions = snapshot.eligible_versions(AS_OF, audit=False)
    pks = [pk for _, pk, _ in snapshot.vector_leg(snapshot.chunk_mask(versions), vectors, 10)]
    scope = _scope(real_pipeline, "alpine-treks")
    with db.tenant("alpine-treks") as conn:
        expected = legs.fetch_candidates(conn, scope, pks, vectors)
    got = snapshot.candidate_sims(pks, vectors)
    assert set(got) == set(expected) and len(got) >= 10
    for pk, candidate in expected.items():
        assert got[pk] == pytest.approx(candidate.sims, abs=1e-6)
    from_memory = snapshot.candidates(pks, versions)
    for pk, candidate in expected.items():
        candidate.sims = []
        assert from_memory[pk] == candidate, "the snapshot's rows are the database's rows"


def test_in_memory_and_database_paths_give_the_same_packs(db, minilm, real_pipeline, demo_index):
    memory = Retriever(db, minilm, real_pipeline.versions, RetrievalConfig(), audit=False)
    database = Retriever(
        db,
        minilm,
        real_pipeline.versions,
        RetrievalConfig(in_memory_max_vectors=0, exact_scan_max_vectors=10**9),
        audit=False,
    )
    same = 0
    for case in _cases(limit_per_tenant=8):
        kwargs = {"as_of": AS_OF, "trip_context": case.get("trip_context")}
        a = memory.retrieve(case["tenant_id"], case["email"], **kwargs).pack
        b = database.retrieve(case["tenant_id"], case["email"], **kwargs).pack
        a.pop("config_version"), b.pop("config_version")
        _assert_same_pack(a, b, case["case_id"])
        same += 1
    assert same >= 16


def _assert_same_pack(a, b, where: str) -> None:
    """Equal packs, except scores may differ in the last rounded digit: the in-memory path
    computes cosines with numpy, the database path with pgvector (both from the same floats)."""
    if isinstance(a, float) or isinstance(b, float):
        assert a == pytest.approx(b, abs=2e-4), where
    elif isinstance(a, dict):
        assert sorted(a) == sorted(b), where
        for key in a:
            _assert_same_pack(a[key], b[key], f"{where}.{key}")
    elif isinstance(a, list):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _assert_same_pack(x, y, f"{where}[{i}]")
    else:
        assert a == b, where


def test_snapshot_holds_only_its_tenant_rows(db, real_pipeline, demo_index):
    snapshot = _snapshot(db, real_pipeline, "coastal-kayak")
    with db.admin() as conn:
        rows = conn.execute(
            "SELECT id, tenant_id FROM chunks WHERE id = ANY(%s)", (list(snapshot.chunk_pk),)
        ).fetchall()
    assert rows and {tenant for _, tenant in rows} == {"coastal-kayak"}
    assert len(rows) == len(snapshot.chunk_pk)
    assert all(v.startswith("docv_ck") for v in snapshot.version_ids)


def test_publishing_a_version_moves_the_generation_and_reloads(
    db, minilm, real_pipeline, demo_index, tmp_path
):
    folder = copy_tenant(tmp_path, "coastal-kayak", "snapshot-gen")
    registration = real_pipeline.register(folder)
    first, rest = registration.registered[:1], registration.registered[1:]
    for version in first:
        real_pipeline.run_all(registration.tenant_id, version)
    retriever = Retriever(db, minilm, real_pipeline.versions, RetrievalConfig(cache_ttl_seconds=0))
    email = "Will we see orcas on the Johnstone Strait trip?"
    before = retriever.retrieve("snapshot-gen", email, as_of=AS_OF).pack
    loads = SNAPSHOTS.loads
    retriever.retrieve("snapshot-gen", email, as_of=AS_OF)
    assert SNAPSHOTS.loads == loads  # same generation: no reload
    with db.tenant("snapshot-gen") as conn:
        generation = read_generation(conn, "snapshot-gen")
    for version in rest:
        real_pipeline.run_all(registration.tenant_id, version)
    with db.tenant("snapshot-gen") as conn:
        assert read_generation(conn, "snapshot-gen") > generation
    after = retriever.retrieve("snapshot-gen", email, as_of=AS_OF).pack
    assert SNAPSHOTS.loads == loads + 1
    cited_before = {e["doc_version_id"] for e in before["evidence"]}
    cited_after = {e["doc_version_id"] for e in after["evidence"]}
    assert cited_before <= set(first)
    assert cited_after - set(first)
    key = _key(real_pipeline, "snapshot-gen")
    with db.tenant("snapshot-gen") as conn:
        generation = read_generation(conn, "snapshot-gen")
        reloaded = SNAPSHOTS.get(
            conn, db.url, key, generation, max_vectors=RetrievalConfig().in_memory_max_vectors
        )
        scratch = load_snapshot(conn, key, generation, 10**9)
    assert SNAPSHOTS.loads == loads + 1, "the cached snapshot was returned"
    indexed = {v for v in rest if real_pipeline.build_state("snapshot-gen", v).state == "indexed"}
    assert set(reloaded.fetched_versions) == indexed, "only the new versions were read"
    assert_same_snapshot(reloaded, scratch)


def assert_same_snapshot(a, b) -> None:
    """Two snapshots hold the same rows, vectors (to the bit) and postings."""
    assert a.version_ids == b.version_ids
    assert a.chunk_pk.tolist() == b.chunk_pk.tolist()
    assert [a.row(pk) for pk in a.chunk_pk] == [b.row(pk) for pk in b.chunk_pk]
    assert a.window_chunk.tolist() == b.window_chunk.tolist()
    assert a.window_index.tolist() == b.window_index.tolist()
    assert a.vectors.tobytes() == b.vectors.tobytes()
    assert sorted(a.postings) == sorted(b.postings)
    for term, (rows, tfs) in a.postings.items():
        assert rows.tolist() == b.postings[term][0].tolist()
        assert tfs.tolist() == b.postings[term][1].tolist()


def test_a_tenant_above_the_memory_bound_is_searched_in_postgres(
    db, minilm, real_pipeline, demo_index
):
    config = RetrievalConfig(in_memory_max_vectors=1, cache_ttl_seconds=0)
    with db.tenant("alpine-treks") as conn:
        generation = read_generation(conn, "alpine-treks")
        assert load_snapshot(conn, _key(real_pipeline, "alpine-treks"), generation, 1) is None
    retriever = Retriever(db, minilm, real_pipeline.versions, config, audit=False)
    pack = retriever.retrieve(
        "alpine-treks", "Can I get a refund if I cancel 5 days before?", as_of=AS_OF
    ).pack
    assert pack["evidence"]


def test_a_snapshot_without_vectors_searches_lexically_only():
    from kb_retrieval.retrieval.snapshot import TenantSnapshot, VersionFacts

    info = legs.VersionInfo("v1", "d1", "T", Category.FAQ, 0, None, None, None, False)
    key = SnapshotKey("t-empty", "p", "c", "m")
    snapshot = TenantSnapshot(
        key, 1, {"v1": VersionFacts(info, ())}, [chunk_row(7, "v1", "kayak kayak trip")], [], []
    )
    versions, mask = snapshot.scope(AS_OF, audit=False)
    assert list(versions) == ["v1"] and mask.tolist() == [True]
    assert snapshot.vector_leg(mask, [[1.0, 0.0]], 5) == []
    assert [(v, pk) for v, pk, _ in snapshot.lexical_leg(mask, [["kayak"]], 5, 0.9, 0.4)] == [
        (1, 7)
    ]
    assert snapshot.candidate_sims([7], [[1.0, 0.0]]) == {}
    [found] = snapshot.candidates([7, 8], versions).values()
    assert (found.chunk_id, found.text, found.term_freqs) == (
        "v1_007",
        "kayak kayak trip",
        {"kayak": 2, "trip": 1},
    )
    assert snapshot.candidates([7], {}) == {}, "an ineligible version's chunk is not a candidate"


def chunk_row(pk: int, version: str, text: str) -> tuple:
    """A SNAPSHOT_CHUNKS row (term_freqs as JSON text)."""
    words = text.split()
    freqs = json.dumps({w: words.count(w) for w in sorted(set(words))})
    locator = f"docv:{version}#chunk:{pk:03d}"
    return (
        pk,
        version,
        f"{version}_{pk:03d}",
        0,
        None,
        None,
        None,
        locator,
        3,
        text,
        "Low",
        3,
        freqs,
    )


def test_concurrent_retrievals_share_one_snapshot_and_agree(db, minilm, real_pipeline, demo_index):
    from concurrent.futures import ThreadPoolExecutor

    retriever = Retriever(
        db, minilm, real_pipeline.versions, RetrievalConfig(cache_ttl_seconds=0), audit=False
    )
    cases = _cases(limit_per_tenant=4)

    def ask(case: dict) -> str:
        pack = retriever.retrieve(case["tenant_id"], case["email"], as_of=AS_OF).pack
        return json.dumps(pack, sort_keys=True)

    sequential = [ask(case) for case in cases]
    SNAPSHOTS.clear()
    with ThreadPoolExecutor(max_workers=4) as pool:
        concurrent = list(pool.map(ask, cases * 2))
    assert concurrent == sequential * 2
