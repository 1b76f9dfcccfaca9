"""ASGI middleware of the service: request body bound, and request counts and latency."""

from __future__ import annotations

import time
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from kb_retrieval.serving.errors import ApiError
from kb_retrieval.serving.metrics import ServiceMetrics

BODY_METHODS = {"POST", "PUT", "PATCH"}


class BodyLimitMiddleware:
    """Reads a request body up to `max_bytes` before the app sees it; 413 past that."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] not in BODY_METHODS:
            await self.app(scope, receive, send)
            return
        too_large = ApiError(
            413, "body_too_large", f"the request body exceeds {self.max_bytes} bytes", "body"
        )
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await too_large.response()(scope, receive, send)
            return
        chunks: list[bytes] = []
        size, more = 0, True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_bytes:
                await too_large.response()(scope, receive, send)
                return
            chunks.append(chunk)
            more = message.get("more_body", False)
        body = b"".join(chunks)
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


class MetricsMiddleware:
    """Counts requests by route template, method and status; observes their latency."""

    def __init__(self, app: ASGIApp, metrics: ServiceMetrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = {"code": 500}

        async def record(message: Message) -> None:
            if message["type"] == "http.response.start":
                status["code"] = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, record)
        finally:
            route = _route_label(scope)
            self.metrics.requests.labels(route, scope["method"], str(status["code"])).inc()
            self.metrics.latency.labels(route).observe(time.perf_counter() - started)


def _route_label(scope: dict[str, Any]) -> str:
    """The matched route's template (never the raw path: tenant ids stay out of labels)."""
    route = scope.get("route")
    path = getattr(route, "path", None)
    if path:
        return str(path)
    if str(scope.get("path", "")).startswith("/mcp"):
        return "/mcp"
    return "unmatched"
