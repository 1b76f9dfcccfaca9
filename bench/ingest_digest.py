"""Everything one ingest stores, as hashes: the check that a refactor of ingestion changed nothing.

Ingests every tenant folder under a directory into a private embedded server (bench/out): the
first, third, ... tenant as the Dagster assets do (parse and chunk each version, `embed_many`,
publish each), the others with `run_all`, then every version again (all skipped) and
`embed_many` once more. Prints the row count and sha256 of the chunks, window vectors, sentence
vectors, embedding cache rows and builds, and the sha256 of every step report. Two checkouts
giving the same digest stored the same rows and reported the same steps.
`python -m bench.ingest_digest [--tenants DIR] [--embedder minilm|fake-hash]`.
"""

from __future__ import annotations

import argparse
import hashlib
import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from bench.common import bench_home

# Every stored column that ingestion decides (no serial ids, no timestamps), in a stable order.
TABLES = {
    "chunks": """SELECT tenant_id, doc_version_id, chunk_id, chunk_index, section_title,
        page_start, page_end, source_locator, token_count, text_hash, policy_likeness_hint,
        term_count, term_freqs::text, tsv::text FROM chunks ORDER BY doc_version_id, chunk_index""",
    "window_vectors": """SELECT tenant_id, doc_version_id, chunk_id, window_index, embedding::text
        FROM chunk_vectors ORDER BY doc_version_id, chunk_id, window_index""",
    "sentence_vectors": """SELECT tenant_id, doc_version_id, chunk_id, sentence_index,
        units_version, embedding::text FROM chunk_sentence_vectors
        ORDER BY doc_version_id, chunk_id, sentence_index""",
    "embedding_cache": "SELECT text_hash, embedding::text FROM embedding_cache ORDER BY 1",
    "builds": """SELECT tenant_id, doc_version_id, state, reason_code, message, chunk_count,
        window_count, embedded_count, stats::text FROM doc_builds ORDER BY doc_version_id""",
}


def sha(value: Any) -> str:
    return hashlib.sha256(repr(value).encode("utf-8")).hexdigest()


def ingest(pipeline: Any, tenants: Path) -> list[Any]:
    """Every tenant folder through both paths, then again; the step reports in order."""
    reports: list[Any] = []
    for index, folder in enumerate(sorted(p.parent for p in tenants.glob("*/kb.yaml"))):
        registration = pipeline.register(folder)
        tenant, versions = registration.tenant_id, registration.registered
        if index % 2 == 0:
            for version in versions:
                reports += [pipeline.parse(tenant, version), pipeline.chunk(tenant, version)]
            reports += pipeline.embed_many(tenant, versions)
            reports += [pipeline.publish(tenant, version) for version in versions]
        else:
            for version in versions:
                reports += pipeline.run_all(tenant, version)
        for version in versions:
            reports += pipeline.run_all(tenant, version)
        reports += pipeline.embed_many(tenant, versions)
    return reports


def digest(db: Any, embedder: str, tenants: Path) -> dict[str, Any]:
    """Ingest every tenant folder under `tenants` into `db` (migrated, empty) with `embedder`;
    the row counts and sha256 of what it stored and of its step reports."""
    from kb_retrieval.ingestion.pipeline import IngestionPipeline
    from kb_retrieval.service import make_embedder

    reports = ingest(IngestionPipeline(db, make_embedder(embedder)), tenants)
    result: dict[str, Any] = {
        "tenants": str(tenants),
        "embedder": embedder,
        "reports": [len(reports), sha([asdict(r) for r in reports])],
    }
    with db.admin() as conn:
        for name, query in TABLES.items():
            rows = conn.execute(query).fetchall()
            result[name] = [len(rows), sha(rows)]
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tenants", type=Path, default=Path("data/tenants"))
    parser.add_argument("--embedder", default="minilm", choices=("minilm", "fake-hash"))
    args = parser.parse_args()
    with bench_home("ingest_digest") as home:
        from kb_retrieval.db import Database

        db = Database(home.url)
        db.migrate()
        result = digest(db, args.embedder, args.tenants)
    print(json.dumps(result, indent=2, sort_keys=True))


if __name__ == "__main__":
    main()
