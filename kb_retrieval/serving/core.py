"""What HTTP and MCP share: the open knowledge base, the bounded worker pool, auth, ask, documents."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import date
from functools import lru_cache
from typing import Any, TypeVar

import jsonschema

from kb_retrieval.db.connection import TENANT_ID_PATTERN, UnknownTenantError
from kb_retrieval.heap import freeze_heap
from kb_retrieval.retrieval.pack import pack_schema
from kb_retrieval.retrieval.snapshot import SnapshotKey
from kb_retrieval.retrieval.snapshot_store import SNAPSHOTS, read_generation
from kb_retrieval.service import KnowledgeBase
from kb_retrieval.serving.documents import list_documents
from kb_retrieval.serving.errors import ApiError
from kb_retrieval.serving.metrics import ServiceMetrics
from kb_retrieval.serving.models import AskRequest
from kb_retrieval.serving.tokens import Principal, TokenStore

T = TypeVar("T")
ENV_PREFIX = "KB_SERVE_"
PING = "SELECT 1"


@dataclass(frozen=True)
class ServeSettings:
    """Limits of one service process (env `KB_SERVE_<FIELD>` overrides the defaults)."""

    workers: int = 2
    queue_limit: int = 64
    timeout_s: float = 10.0
    max_body_bytes: int = 64 * 1024
    host: str = "127.0.0.1"

    @classmethod
    def from_env(cls, **overrides: Any) -> ServeSettings:
        values: dict[str, Any] = {}
        for name, field in cls.__dataclass_fields__.items():
            raw = os.environ.get(ENV_PREFIX + name.upper())
            if raw is not None:
                try:
                    values[name] = type(field.default)(raw)
                except ValueError as error:
                    raise ValueError(f"{ENV_PREFIX}{name.upper()}={raw!r} is not valid") from error
        values.update({k: v for k, v in overrides.items() if v is not None})
        settings = cls(**values)
        if settings.workers < 1 or settings.queue_limit < 0 or settings.timeout_s <= 0:
            raise ValueError("workers >= 1, queue_limit >= 0 and timeout_s > 0 are required")
        return settings


@lru_cache(maxsize=1)
def pack_validator() -> jsonschema.Draft202012Validator:
    """The evidence pack schema compiled once (every answer is checked against it)."""
    return jsonschema.Draft202012Validator(pack_schema(), format_checker=jsonschema.FormatChecker())


class ServingCore:
    """Model, snapshots and retriever loaded once; retrieval runs in a bounded thread pool."""

    def __init__(
        self, kb: KnowledgeBase, settings: ServeSettings, metrics: ServiceMetrics | None = None
    ) -> None:
        self.kb = kb
        self.settings = settings
        self.metrics = metrics or ServiceMetrics()
        self.tokens = TokenStore(kb.db)
        self.pool = ThreadPoolExecutor(settings.workers, thread_name_prefix="kb-serve")
        self.ready = False
        self._in_flight = 0

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        """`fn(*args)` in the pool: 503 when the pool and its queue are full, 504 past the
        timeout (the job still finishes in its thread and keeps its slot until then)."""
        if self._in_flight >= self.settings.workers + self.settings.queue_limit:
            raise ApiError(503, "overloaded", "too many requests in flight; retry shortly")
        self._in_flight += 1
        self.metrics.in_flight.set(self._in_flight)
        future = asyncio.get_running_loop().run_in_executor(self.pool, fn, *args)
        future.add_done_callback(self._release)
        try:
            return await asyncio.wait_for(asyncio.shield(future), self.settings.timeout_s)
        except TimeoutError as error:
            raise ApiError(
                504, "timeout", f"no answer within {self.settings.timeout_s:g} s"
            ) from error

    def _release(self, _: Any) -> None:
        self._in_flight -= 1
        self.metrics.in_flight.set(self._in_flight)

    def authorize(self, secret: str | None, tenant_id: str) -> Principal:
        """The token's principal if it may act for `tenant_id`: 401 without a valid token,
        403 for a token of another tenant (whether or not that tenant exists)."""
        principal = self.tokens.resolve(secret)
        if principal is None:
            message = "a bearer token is required" if not secret else "unknown or revoked token"
            raise ApiError(401, "unauthorized", message, "authorization")
        if principal.tenant_id != tenant_id:
            raise ApiError(403, "forbidden", "this token is not valid for this tenant", "tenant")
        return principal

    def ask(self, principal: Principal, request: AskRequest) -> dict[str, Any]:
        """The evidence pack for the principal's tenant, checked against the published schema."""
        trip = request.trip_context.as_dict() if request.trip_context else None
        try:
            result = self.kb.retriever.retrieve(
                principal.tenant_id,
                request.email_value(),
                as_of=request.as_of or date.today(),
                trip_context=trip,
                sensitivity=request.sensitivity,
                audit_mode=request.audit,
            )
        except UnknownTenantError as error:
            raise ApiError(404, "unknown_tenant", str(error), "tenant") from error
        except ValueError as error:
            raise ApiError(422, "invalid_request", str(error), "email") from error
        if result.cache_hit:
            self.metrics.result_cache_hits.inc()
        pack_validator().validate(result.pack)
        return result.pack

    def documents(self, principal: Principal) -> list[dict[str, Any]]:
        try:
            return list_documents(self.kb.db, principal.tenant_id, self.kb.retriever.versions)
        except UnknownTenantError as error:
            raise ApiError(404, "unknown_tenant", str(error), "tenant") from error

    def warm_up(self) -> dict[str, int]:
        """Load the model and every registered tenant's snapshot, freeze what is loaded out of
        the garbage collector's scans (`heap.py`); then the service is ready."""
        retriever = self.kb.retriever
        retriever.embedder.embed_query(["warm-up"])
        versions, config = retriever.versions, retriever.config
        loaded: dict[str, int] = {}
        for tenant_id in self.kb.db.tenants():
            if not TENANT_ID_PATTERN.match(tenant_id):
                continue
            key = SnapshotKey(
                tenant_id,
                versions.parser_version,
                versions.chunker_version,
                versions.embedding_model_id,
            )
            with self.kb.db.tenant(tenant_id) as conn:
                generation = read_generation(conn, tenant_id)
                SNAPSHOTS.get(
                    conn,
                    self.kb.db.url,
                    key,
                    generation,
                    max_vectors=config.in_memory_max_vectors,
                    max_bytes=config.snapshot_cache_mb * 1024**2,
                )
            loaded[tenant_id] = generation
        freeze_heap()
        self.ready = True
        return loaded

    def database_ok(self) -> bool:
        with self.kb.db.admin() as conn:
            return conn.execute(PING).fetchone()[0] == 1

    def close(self) -> None:
        self.pool.shutdown(wait=False, cancel_futures=True)
