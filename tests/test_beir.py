"""BEIR loading (SciFact and malformed folders) and BEIR IR metrics, cross-checked with ranx."""

from __future__ import annotations

import json
import math
import random
import time
import warnings
from pathlib import Path

import pytest

from kb_eval.beir.dataset import BeirFormatError, load_beir, read_qrels
from kb_eval.metrics import beir_metrics, beir_per_query, rank_documents

SCIFACT = Path(__file__).resolve().parents[2] / "shared" / "data" / "scifact"


def test_scifact_loads_fast_with_test_queries_only() -> None:
    start = time.perf_counter()
    data = load_beir(SCIFACT)
    elapsed = time.perf_counter() - start
    assert elapsed < 5.0
    assert data.name == "scifact"
    assert len(data.corpus) == 5183
    assert len(data.queries) == 300
    assert set(data.queries) == set(data.qrels)
    assert sum(len(docs) for docs in data.qrels.values()) == 339
    assert data.qrels["1"] == {"31715818": 1}
    assert data.queries["1"] == "0-dimensional biomaterials show inductive properties."
    doc = data.corpus["31715818"]
    assert doc.doc_id == "31715818" and doc.title and doc.text
    assert all(doc_id in data.corpus for docs in data.qrels.values() for doc_id in docs)


def test_scifact_perfect_and_empty_runs() -> None:
    data = load_beir(SCIFACT)
    perfect = {qid: {doc: 1.0 for doc in docs} for qid, docs in data.qrels.items()}
    assert beir_metrics(perfect, data.qrels) == {
        "ndcg_at_10": 1.0,
        "recall_at_10": 1.0,
        "recall_at_100": 1.0,
    }
    assert beir_metrics({}, data.qrels) == {
        "ndcg_at_10": 0.0,
        "recall_at_10": 0.0,
        "recall_at_100": 0.0,
    }


def _folder(tmp_path: Path, corpus: list[str], queries: list[str], qrels: str) -> Path:
    (tmp_path / "qrels").mkdir()
    (tmp_path / "corpus.jsonl").write_text("\n".join(corpus) + "\n", encoding="utf-8")
    (tmp_path / "queries.jsonl").write_text("\n".join(queries) + "\n", encoding="utf-8")
    (tmp_path / "qrels" / "test.tsv").write_text(qrels, encoding="utf-8")
    return tmp_path


DOCS = [json.dumps({"_id": "d1", "title": "T", "text": "one"}), json.dumps({"_id": 2, "text": "x"})]
QUERIES = [json.dumps({"_id": "q1", "text": "first"}), json.dumps({"_id": "q2", "text": "second"})]


def test_small_folder_keeps_only_judged_queries(tmp_path: Path) -> None:
    folder = _folder(tmp_path, DOCS, QUERIES, "query-id\tcorpus-id\tscore\nq2\td1\t2\nq2\t2\t0\n")
    data = load_beir(folder)
    assert data.queries == {"q2": "second"}
    assert data.qrels == {"q2": {"d1": 2, "2": 0}}
    assert data.corpus["2"].title == ""


@pytest.mark.parametrize(
    ("corpus", "queries", "qrels", "message"),
    [
        (
            [*DOCS, "{bad"],
            QUERIES,
            "query-id\tcorpus-id\tscore\n",
            r"corpus\.jsonl:3: invalid JSON",
        ),
        ([*DOCS, DOCS[0]], QUERIES, "query-id\tcorpus-id\tscore\n", "corpus.jsonl:3: duplicate"),
        (DOCS, ['{"_id": "q1"}'], "query-id\tcorpus-id\tscore\n", "queries.jsonl:1: field 'text'"),
        (DOCS, QUERIES, "q1\td1\t1\n", "test.tsv:1: expected header"),
        (DOCS, QUERIES, "query-id\tcorpus-id\tscore\nq1\td1\tx\n", "test.tsv:2: score 'x'"),
        (DOCS, QUERIES, "query-id\tcorpus-id\tscore\nq1 d1 1\n", "test.tsv:2: expected 3"),
        (DOCS, QUERIES, "query-id\tcorpus-id\tscore\nq9\td1\t1\n", "query 'q9' is not in"),
        (DOCS, QUERIES, "query-id\tcorpus-id\tscore\nq1\td7\t1\n", r"unknown docs \['d7'\]"),
    ],
)
def test_malformed_folders_are_reported_with_location(
    tmp_path: Path, corpus: list[str], queries: list[str], qrels: str, message: str
) -> None:
    with pytest.raises(BeirFormatError, match=message):
        load_beir(_folder(tmp_path, corpus, queries, qrels))


def test_read_qrels_accepts_crlf(tmp_path: Path) -> None:
    path = tmp_path / "test.tsv"
    path.write_bytes(b"query-id\tcorpus-id\tscore\r\nq1\td1\t1\r\n")
    assert read_qrels(path) == {"q1": {"d1": 1}}


def test_graded_metrics_by_hand() -> None:
    qrels = {"q1": {"d1": 1, "d2": 0, "d3": 2}, "q2": {"d9": 1}, "q3": {"d4": 0}}
    run = {"q1": {"d1": 0.5, "d2": 0.9, "d3": 0.1, "d4": 0.3}, "q2": {"d1": 0.3}}
    per_query = beir_per_query(run, qrels)
    assert sorted(per_query) == ["q1", "q2"]
    # q1 ranking d2 d1 d4 d3: DCG = 1/log2(3) + 2/log2(5); ideal 2/log2(2) + 1/log2(3).
    expected = (1 / math.log2(3) + 2 / math.log2(5)) / (2 + 1 / math.log2(3))
    assert per_query["q1"]["ndcg_at_10"] == pytest.approx(expected, abs=1e-12)
    assert per_query["q1"]["recall_at_10"] == 1.0
    assert per_query["q1"]["mrr_at_10"] == 0.5
    assert per_query["q2"] == {
        "ndcg_at_10": 0.0,
        "recall_at_10": 0.0,
        "recall_at_100": 0.0,
        "mrr_at_10": 0.0,
    }
    assert beir_metrics(run, qrels)["ndcg_at_10"] == pytest.approx(expected / 2, abs=1e-12)


def test_cutoffs_and_ties() -> None:
    assert rank_documents({"a": 1.0, "c": 1.0, "b": 2.0}) == ["b", "c", "a"]
    qrels = {"q": {"rel": 1}}
    run = {"q": {f"n{i:03d}": 1.0 - i / 1000 for i in range(50)} | {"rel": 0.5}}
    values = beir_per_query(run, qrels)["q"]
    assert values["recall_at_10"] == 0.0 and values["recall_at_100"] == 1.0
    assert values["ndcg_at_10"] == 0.0 and values["mrr_at_10"] == 0.0


def _random_qrels_and_run(
    rng: random.Random,
) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for n in range(80):
        qid = f"q{n}"
        pool = [f"d{i}" for i in range(rng.randint(5, 220))]
        judged = rng.sample(pool, rng.randint(1, min(len(pool), 25)))
        rels = {doc: rng.choice([0, 1, 1, 2, 3]) for doc in judged}
        rels[judged[0]] = rng.randint(1, 3)
        qrels[qid] = rels
        retrieved = rng.sample(pool, rng.randint(1, len(pool)))
        run[qid] = {doc: rng.random() for doc in retrieved}
    return qrels, run


def test_beir_metrics_agree_with_ranx() -> None:
    from ranx import Qrels, Run, evaluate

    qrels, run = _random_qrels_and_run(random.Random(1234))
    names = {"ndcg@10": "ndcg_at_10", "recall@10": "recall_at_10", "recall@100": "recall_at_100"}
    names["mrr@10"] = "mrr_at_10"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = evaluate(Qrels(qrels), Run(run), list(names), return_mean=False)
    ours = beir_per_query(run, qrels)
    qids = sorted(qrels)
    assert sorted(ours) == qids
    ranx_order = list(Qrels(qrels).keys())
    for ranx_name, our_name in names.items():
        by_qid = dict(zip(ranx_order, theirs[ranx_name].tolist(), strict=True))
        for qid in qids:
            assert ours[qid][our_name] == pytest.approx(by_qid[qid], abs=1e-9), (qid, our_name)
    means = beir_metrics(run, qrels)
    for ranx_name, our_name in names.items():
        if our_name in means:
            expected = math.fsum(theirs[ranx_name].tolist()) / len(qids)
            assert means[our_name] == pytest.approx(expected, abs=1e-9)
