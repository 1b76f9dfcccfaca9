"""Write data/golden/golden.jsonl from the hand-written cases in data/tools/sources/.

Usage: .venv/bin/python data/tools/build_golden.py

Each case gets a "split" ("tune" or "holdout"), assigned deterministically and stratified by
(expected_outcome, tenant_id): inside every stratum, in file order, positions 1 and 3 of each
run of five go to holdout (about 40%).
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

TOOLS = Path(__file__).resolve().parent
sys.path.insert(0, str(TOOLS / "sources"))

import golden_alpine  # noqa: E402
import golden_coastal  # noqa: E402

GOLDEN = TOOLS.parent / "golden" / "golden.jsonl"
HOLDOUT_POSITIONS = frozenset({1, 3})


def all_cases() -> list[dict[str, Any]]:
    return [*golden_alpine.CASES, *golden_coastal.CASES]


def assign_splits(cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Return copies of the cases with a stratified "split" field."""
    seen: dict[tuple[str, str], int] = defaultdict(int)
    result: list[dict[str, Any]] = []
    for case in cases:
        key = (case["expected_outcome"], case["tenant_id"])
        position = seen[key] % 5
        seen[key] += 1
        split = "holdout" if position in HOLDOUT_POSITIONS else "tune"
        result.append({**case, "split": split})
    return result


def main() -> int:
    cases = assign_splits(all_cases())
    GOLDEN.parent.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps(case, ensure_ascii=False) for case in cases]
    GOLDEN.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {len(cases)} cases to {GOLDEN.relative_to(TOOLS.parent.parent)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
