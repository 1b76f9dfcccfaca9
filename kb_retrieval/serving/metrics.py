"""Prometheus metrics of one service instance (its own registry, exposed at /metrics)."""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily
from prometheus_client.registry import Collector

from kb_retrieval.retrieval.snapshot_store import SNAPSHOTS, SnapshotStore

LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


class SnapshotCollector(Collector):
    """Counters kept by the process-wide snapshot store, read at scrape time."""

    def __init__(self, store: SnapshotStore) -> None:
        self.store = store

    def collect(self) -> Iterator[CounterMetricFamily]:
        for name, help_text, value in (
            ("kb_snapshot_cache_hits", "retrievals answered by a loaded snapshot", self.store.hits),
            (
                "kb_snapshot_reloads",
                "snapshot loads (first load or new generation)",
                self.store.loads,
            ),
            (
                "kb_snapshot_stale_served",
                "retrievals answered by the older snapshot while a reload ran",
                self.store.stale_served,
            ),
        ):
            yield CounterMetricFamily(name, help_text, value=value)


class ServiceMetrics:
    def __init__(self, store: SnapshotStore = SNAPSHOTS) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "kb_http_requests",
            "HTTP requests by route, method and status",
            ["route", "method", "status"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "kb_http_request_seconds",
            "HTTP request latency by route",
            ["route"],
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.result_cache_hits = Counter(
            "kb_retrieval_result_cache_hits",
            "asks answered from the retriever's result cache",
            registry=self.registry,
        )
        self.tool_calls = Counter(
            "kb_mcp_tool_calls",
            "MCP tool calls by tool and outcome",
            ["tool", "outcome"],
            registry=self.registry,
        )
        self.in_flight = Gauge(
            "kb_pool_in_flight", "jobs running or queued in the worker pool", registry=self.registry
        )
        self.registry.register(SnapshotCollector(store))

    def render(self) -> bytes:
        return generate_latest(self.registry)
