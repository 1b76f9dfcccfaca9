"""The heap of a long-lived process after its warm-up: frozen out of the collector's scans.

A serving process holds ~650k tracked objects once the model, the libraries and the tenants'
snapshots are loaded (torch, Dagster, psycopg and pydantic modules; the snapshots themselves are
mostly arrays). A full collection scans them all (333 ms CPU measured at the 100k-chunk tenant,
docs/benchmarks.md, issue 11 session 7) and lands in whichever request triggered it. After
`gc.freeze()` those objects sit in the permanent generation: collections scan only what was
made later. Reference counting still frees frozen objects; only cyclic garbage among them is
never reclaimed, which is why this runs once, after warm-up, not after every snapshot reload.
"""

from __future__ import annotations

import gc


def freeze_heap() -> int:
    """Collect once, then exempt every object alive now from later collections (`gc.freeze`);
    returns how many objects are frozen."""
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()
