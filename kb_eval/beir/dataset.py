"""Reading a BEIR-format dataset folder (corpus.jsonl, queries.jsonl, qrels/<split>.tsv)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from kb_eval.metrics import beir_metrics, beir_per_query

__all__ = [
    "BeirDataset",
    "BeirDocument",
    "BeirFormatError",
    "beir_metrics",
    "beir_per_query",
    "load_beir",
    "read_qrels",
]


class BeirFormatError(ValueError):
    """A BEIR file is malformed; the message names the file and line."""


@dataclass(frozen=True)
class BeirDocument:
    doc_id: str
    title: str
    text: str


@dataclass(frozen=True)
class BeirDataset:
    """A BEIR split: the whole corpus, the queries that have judgments, and the judgments."""

    name: str
    corpus: dict[str, BeirDocument]
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]


def _json_lines(path: Path) -> Iterator[tuple[int, dict[str, object]]]:
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise BeirFormatError(f"{path}:{number}: invalid JSON: {exc.msg}") from exc
            if not isinstance(record, dict):
                raise BeirFormatError(f"{path}:{number}: expected a JSON object")
            yield number, record


def _string(record: dict[str, object], key: str, where: str, *, required: bool) -> str:
    value = record.get(key)
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value):
        raise BeirFormatError(f"{where}: field {key!r} must be a non-empty string")
    return value


def _document_id(record: dict[str, object], where: str) -> str:
    value = record.get("_id")
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return _string(record, "_id", where, required=True)


def read_corpus(path: Path) -> dict[str, BeirDocument]:
    corpus: dict[str, BeirDocument] = {}
    for number, record in _json_lines(path):
        where = f"{path}:{number}"
        doc_id = _document_id(record, where)
        if doc_id in corpus:
            raise BeirFormatError(f"{where}: duplicate _id {doc_id!r}")
        title = _string(record, "title", where, required=False)
        text = _string(record, "text", where, required=False)
        corpus[doc_id] = BeirDocument(doc_id=doc_id, title=title, text=text)
    return corpus


def read_queries(path: Path) -> dict[str, str]:
    queries: dict[str, str] = {}
    for number, record in _json_lines(path):
        where = f"{path}:{number}"
        query_id = _document_id(record, where)
        if query_id in queries:
            raise BeirFormatError(f"{where}: duplicate _id {query_id!r}")
        queries[query_id] = _string(record, "text", where, required=True)
    return queries


def read_qrels(path: Path) -> dict[str, dict[str, int]]:
    """qrels TSV with a header line: query-id, corpus-id, score."""
    qrels: dict[str, dict[str, int]] = {}
    with path.open(encoding="utf-8") as handle:
        header = handle.readline().rstrip("\r\n").split("\t")
        if [column.strip().lower() for column in header] != ["query-id", "corpus-id", "score"]:
            raise BeirFormatError(f"{path}:1: expected header 'query-id corpus-id score'")
        for number, line in enumerate(handle, start=2):
            if not line.strip():
                continue
            fields = line.rstrip("\r\n").split("\t")
            if len(fields) != 3:
                raise BeirFormatError(f"{path}:{number}: expected 3 tab-separated fields")
            query_id, doc_id, score = fields
            try:
                qrels.setdefault(query_id, {})[doc_id] = int(score)
            except ValueError as exc:
                raise BeirFormatError(
                    f"{path}:{number}: score {score!r} is not an integer"
                ) from exc
    return qrels


def load_beir(folder: Path, split: str = "test") -> BeirDataset:
    """Load a BEIR folder; only queries with judgments in `split` are kept."""
    folder = Path(folder)
    corpus = read_corpus(folder / "corpus.jsonl")
    all_queries = read_queries(folder / "queries.jsonl")
    qrels_path = folder / "qrels" / f"{split}.tsv"
    qrels = read_qrels(qrels_path)
    for query_id, judged in qrels.items():
        if query_id not in all_queries:
            raise BeirFormatError(f"{qrels_path}: query {query_id!r} is not in queries.jsonl")
        unknown = sorted(doc_id for doc_id in judged if doc_id not in corpus)
        if unknown:
            raise BeirFormatError(f"{qrels_path}: query {query_id!r} judges unknown docs {unknown}")
    queries = {query_id: all_queries[query_id] for query_id in all_queries if query_id in qrels}
    return BeirDataset(name=folder.name, corpus=corpus, queries=queries, qrels=qrels)
