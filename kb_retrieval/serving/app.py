"""The FastAPI application of `kb serve`: HTTP endpoints, MCP mounted at /mcp, metrics."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Header, Path, Request
from fastapi.responses import JSONResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from kb_retrieval.retrieval.pack import dumps_pack, pack_schema
from kb_retrieval.service import KnowledgeBase, open_knowledge_base
from kb_retrieval.serving.core import ServeSettings, ServingCore
from kb_retrieval.serving.errors import ApiError, install_error_handlers
from kb_retrieval.serving.mcp_tools import bearer_secret, build_mcp
from kb_retrieval.serving.metrics import ServiceMetrics
from kb_retrieval.serving.middleware import BodyLimitMiddleware, MetricsMiddleware
from kb_retrieval.serving.models import AskRequest
from kb_retrieval.serving.tokens import Principal

LOG = logging.getLogger("kb_retrieval.serving")
MCP_PATH = "/mcp"
TenantPath = Annotated[str, Path(description="Tenant id (the token's tenant).", max_length=63)]
Authorization = Annotated[str | None, Header(description="Bearer <token>")]
ERRORS: dict[int | str, dict[str, Any]] = {
    status: {"description": text}
    for status, text in (
        (400, "body is not UTF-8 JSON"),
        (401, "no valid bearer token"),
        (403, "token of another tenant"),
        (404, "tenant never ingested"),
        (413, "body over 64 KiB"),
        (422, "invalid body: the error names the field"),
        (503, "worker pool full"),
        (504, "timeout"),
    )
}


async def caller(
    request: Request, tenant: TenantPath, authorization: Authorization = None
) -> Principal:
    """The token's principal, checked before the body is read: 401, then 403."""
    core: ServingCore = request.app.state.core
    secret = bearer_secret({"authorization": authorization or ""})
    return await core.run(core.authorize, secret, tenant)


Caller = Annotated[Principal, Depends(caller)]


def _openapi_pack_schema() -> dict[str, Any]:
    return {k: v for k, v in pack_schema().items() if not k.startswith("$")}


class McpAuthGate:
    """Serves /mcp only; 401 without a valid bearer token (the tools check the tenant)."""

    def __init__(self, app: ASGIApp, core: ServingCore) -> None:
        self.app = app
        self.core = core

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"].rstrip("/") != MCP_PATH:
            await ApiError(404, "not_found", "no such endpoint", "path").response()(
                scope, receive, send
            )
            return
        if scope["type"] == "http":
            headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
            principal = await self.core.run(self.core.tokens.resolve, bearer_secret(headers))
            if principal is None:
                error = ApiError(
                    401, "unauthorized", "a valid bearer token is required", "authorization"
                )
                await error.response()(scope, receive, send)
                return
        await self.app(scope, receive, send)


def _report_warm_up(future: asyncio.Future[dict[str, int]]) -> None:
    """Log the warm-up's outcome (a failure leaves /readyz at 503)."""
    if future.cancelled():
        return
    if future.exception() is not None:
        LOG.error("warm-up failed; /readyz stays 503", exc_info=future.exception())
    else:
        LOG.info("warm: model and snapshots of %d tenant(s) loaded", len(future.result()))


def create_app(
    kb: KnowledgeBase | None = None,
    settings: ServeSettings | None = None,
    *,
    embedder: str = "minilm",
) -> FastAPI:
    """The service; `kb` defaults to `open_knowledge_base()` (model and database opened once)."""
    settings = settings or ServeSettings.from_env()
    metrics = ServiceMetrics()
    core = ServingCore(kb or open_knowledge_base(embedder=embedder), settings, metrics)
    mcp = build_mcp(core)
    mcp_app = mcp.streamable_http_app(
        streamable_http_path=MCP_PATH, stateless_http=True, json_response=True, host=settings.host
    )

    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        warm = asyncio.get_running_loop().run_in_executor(core.pool, core.warm_up)
        warm.add_done_callback(_report_warm_up)
        async with mcp.session_manager.run():
            yield
        warm.cancel()
        core.close()

    app = FastAPI(
        title="kb serve",
        summary="Evidence packs for tour operators' email assistants, per tenant, with citations.",
        version="1",
        lifespan=lifespan,
    )
    app.state.core = core
    install_error_handlers(app)

    @app.post(
        "/v1/tenants/{tenant}/ask",
        responses={
            200: {
                "description": "The evidence pack (spec 7).",
                "content": {"application/json": {"schema": _openapi_pack_schema()}},
            },
            **ERRORS,
        },
        response_class=Response,
    )
    async def ask(caller: Caller, body: AskRequest) -> Response:
        """Retrieve cited evidence and a verdict for one guest email or thread."""
        pack = await core.run(core.ask, caller, body)
        return Response(dumps_pack(pack), media_type="application/json")

    @app.get("/v1/tenants/{tenant}/documents", responses=ERRORS)
    async def documents(caller: Caller) -> dict[str, Any]:
        """The tenant's document versions with state, reason code and chunk count."""
        return {"tenant_id": caller.tenant_id, "documents": await core.run(core.documents, caller)}

    @app.get("/healthz")
    async def healthz() -> dict[str, str]:
        """The process answers."""
        return {"status": "ok"}

    @app.get("/readyz", responses={503: {"description": "warming up or database unreachable"}})
    async def readyz() -> JSONResponse:
        """Model and snapshots loaded, database reachable."""
        database = False
        with contextlib.suppress(Exception):
            database = await core.run(core.database_ok)
        ready = core.ready and database
        body = {
            "status": "ready" if ready else "not_ready",
            "warm": core.ready,
            "database": database,
        }
        return JSONResponse(body, status_code=200 if ready else 503)

    @app.get("/metrics", response_class=Response)
    async def prometheus() -> Response:
        """Prometheus text: requests, latency, snapshot cache hits and reloads, pool."""
        return Response(metrics.render(), media_type="text/plain; version=0.0.4")

    app.mount("/", McpAuthGate(mcp_app, core))
    app.add_middleware(BodyLimitMiddleware, max_bytes=settings.max_body_bytes)
    app.add_middleware(MetricsMiddleware, metrics=metrics)
    return app
