"""The golden set's evidence packs as one hash: the check that a refactor changed no behaviour.

Ingests the demo tenants with the real model into a private embedded server (bench/out), runs
`data/golden/golden.jsonl` through the same `retrieve` call as `kb eval`, and prints the sha256 of
every case's pack bytes (in case-id order) with the metrics. Two checkouts giving the same hash
give byte-identical packs. `python -m bench.pack_hash [--as-of 2026-11-15] [--packs FILE]`.
"""

from __future__ import annotations

import argparse
import hashlib
import json
from datetime import date

from bench.common import bench_home
from bench.retrieval_scale import ingest_demo

GOLDEN = "data/golden/golden.jsonl"


def packs_sha256(packs: dict[str, dict]) -> str:
    """sha256 over (case id, pack bytes) of every pack, in case-id order."""
    from kb_retrieval.retrieval.pack import dumps_pack

    digest = hashlib.sha256()
    for case_id in sorted(packs):
        digest.update(case_id.encode())
        digest.update(dumps_pack(packs[case_id]).encode())
    return digest.hexdigest()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--as-of", default="2026-11-15")
    parser.add_argument("--packs", help="also write every pack (JSON lines, case-id order) here")
    args = parser.parse_args()
    with bench_home("pack_hash") as home:
        from kb_eval.golden import load_golden
        from kb_eval.golden_eval import evaluate_cases
        from kb_retrieval.service import open_knowledge_base

        kb = open_knowledge_base(url=home.url)
        ingest_demo(kb.db, kb.pipeline)
        run = evaluate_cases(kb.retriever, load_golden(GOLDEN), date.fromisoformat(args.as_of))
        if args.packs:
            with open(args.packs, "w", encoding="utf-8") as out:
                for case_id in sorted(run.packs):
                    out.write(json.dumps({"case_id": case_id, "pack": run.packs[case_id]}) + "\n")
        result = {
            "packs_sha256": packs_sha256(run.packs),
            "cases": len(run.packs),
            "config_version": kb.retriever.config.config_version,
            "metrics": run.metrics,
        }
    print(json.dumps(result, indent=2, sort_keys=True, default=str))


if __name__ == "__main__":
    main()
