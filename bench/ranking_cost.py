"""Ranking-stage cost of the answerability features: this tree against a baseline tree, same run.

    KB_HOME=... python bench/ranking_cost.py --baseline-root /path/to/export/of/b69018c [--json]

Every golden case of `--golden` (PATH@AS_OF, repeatable) is retrieved twice per round through
`Retriever.retrieve` (TTL cache off, audit off; the second pass is timed), in a subprocess per
tree, alternating trees for `--rounds` rounds, against the index under KB_HOME. KB_RETRIEVAL_*
variables configure both trees (`RetrievalConfig.from_env`; a tree ignores a field it lacks). Reports p50/p95
of `timings_ms["ranking"]` and `["total"]` per tree and this tree's ratio to the baseline.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_GOLDEN = [
    f"{REPO}/data/golden/golden.jsonl@2026-11-15",
    "/work/shared/data/devset/golden.jsonl@2026-11-22",
]
CHILD = """
import json, sys
from datetime import date
from kb_eval.golden import load_golden
from kb_eval.golden_eval import _email_payload
from kb_retrieval.retrieval.config import RetrievalConfig
from kb_retrieval.service import open_knowledge_base
kb = open_knowledge_base(config=RetrievalConfig.from_env().model_copy(update={"cache_ttl_seconds": 0}))
kb.retriever.audit = False
cases = []
for spec in sys.argv[1:]:
    path, day = spec.rsplit("@", 1)
    cases += [(c, date.fromisoformat(day)) for c in load_golden(path)]
out = {"ranking": [], "total": []}
for rep in range(2):
    for case, day in cases:
        result = kb.retriever.retrieve(case.tenant_id, _email_payload(case), as_of=day)
        if rep == 1 and "ranking" in result.timings_ms:
            out["ranking"].append(result.timings_ms["ranking"])
            out["total"].append(result.timings_ms["total"])
print(json.dumps(out))
"""


def measure(root: Path, golden: list[str]) -> dict[str, list[float]]:
    env = {**os.environ, "PYTHONPATH": str(root), "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(
        [sys.executable, "-c", CHILD, *golden],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def stats(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {"p50": statistics.median(ordered), "p95": ordered[int(0.95 * (len(ordered) - 1))]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline-root", type=Path, required=True)
    parser.add_argument("--golden", action="append", default=None)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    golden = args.golden or DEFAULT_GOLDEN
    series: dict[str, dict[str, list[float]]] = {
        "baseline": {"ranking": [], "total": []},
        "this": {"ranking": [], "total": []},
    }
    for _ in range(args.rounds):
        for name, root in (("baseline", args.baseline_root), ("this", REPO)):
            for key, values in measure(root, golden).items():
                series[name][key].extend(values)
    report = {name: {k: stats(v) for k, v in s.items()} for name, s in series.items()}
    report["ratio_p50"] = {
        k: report["this"][k]["p50"] / report["baseline"][k]["p50"] for k in ("ranking", "total")
    }
    report["load"] = [round(x, 2) for x in os.getloadavg()]
    print(json.dumps(report, indent=2 if not args.json else None, sort_keys=True))


if __name__ == "__main__":
    main()
