"""Materialisation metadata built from the ingestion step reports."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from dagster import MetadataValue

from kb_pipeline.ingest.partitions import split_partition_key
from kb_pipeline.table_metadata import table
from kb_retrieval.ingestion.build_steps import StepReport

SUMMED = (
    "spans",
    "pages",
    "chunks",
    "tokens_total",
    "embedded_chunks",
    "embedded_windows",
    "windows",
    "cached_windows",
)
PROBLEM_COLUMNS = ("doc_version_id", "state", "reason_code", "message")


def step_metadata(reports: Sequence[StepReport], seconds: float) -> dict[str, Any]:
    """Counts, token statistics, states and timings for one asset's partitions in a run."""
    states = Counter(r.state for r in reports)
    metadata: dict[str, Any] = {
        "documents": len(reports),
        "skipped_unchanged": sum(r.skipped for r in reports),
        "states": MetadataValue.json(dict(sorted(states.items()))),
        "seconds": round(seconds, 3),
    }
    for name in SUMMED:
        values = [r.metrics[name] for r in reports if isinstance(r.metrics.get(name), int)]
        if values:
            metadata[name] = sum(values)
    for name in ("tokens_min", "tokens_median", "tokens_max"):
        values = [r.metrics[name] for r in reports if name in r.metrics]
        if values:
            metadata[name] = (min if name == "tokens_min" else max)(values)
    problems = [
        {
            "doc_version_id": r.doc_version_id,
            "state": r.state,
            "reason_code": r.reason_code,
            "message": r.message or "",
        }
        for r in reports
        if r.reason_code
    ]
    if problems:
        metadata["problems"] = table(problems, PROBLEM_COLUMNS)
    if len(reports) == 1:
        metadata["state"] = reports[0].state
        metadata["reason_code"] = reports[0].reason_code or ""
    return metadata


def chunk_table(reports: Sequence[StepReport], limit: int = 10) -> MetadataValue | None:
    """The first chunks of a run by id, token count and text hash (never their text)."""
    rows = [row for report in reports for row in report.metrics.get("chunk_refs", [])][:limit]
    if not rows:
        return None
    return table(rows, ("chunk_id", "tokens", "text_hash"))


def run_step(
    partition_keys: Sequence[str], step: Callable[[str, str], StepReport]
) -> tuple[list[StepReport], dict[str, Any]]:
    """Run one pipeline step for every partition of a run; its reports and their metadata."""
    started = time.perf_counter()
    reports = [step(*split_partition_key(key)) for key in partition_keys]
    return reports, step_metadata(reports, time.perf_counter() - started)


def run_batched_step(
    partition_keys: Sequence[str], step: Callable[[str, Sequence[str]], list[StepReport]]
) -> tuple[list[StepReport], dict[str, Any]]:
    """Run a step that takes all of a tenant's versions at once (e.g. `embed_many`), tenant by
    tenant in the order the keys come; its reports and their metadata."""
    started = time.perf_counter()
    by_tenant: dict[str, list[str]] = {}
    for key in partition_keys:
        tenant_id, doc_version_id = split_partition_key(key)
        by_tenant.setdefault(tenant_id, []).append(doc_version_id)
    reports = [r for tenant_id, versions in by_tenant.items() for r in step(tenant_id, versions)]
    return reports, step_metadata(reports, time.perf_counter() - started)
