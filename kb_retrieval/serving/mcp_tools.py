"""The same `ask` and `documents` as MCP tools (official `mcp` SDK): stdio or streamable HTTP."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from datetime import date
from typing import Any, TypeVar

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import ValidationError

from kb_retrieval.serving.core import ServingCore
from kb_retrieval.serving.errors import ApiError
from kb_retrieval.serving.models import AskRequest, EmailThread, Sensitivity, TripContext

T = TypeVar("T")
INSTRUCTIONS = (
    "Grounding for a tour operator's email assistant. Call `ask` with the guest's email to get "
    "an evidence pack: cited chunks of the operator's own documents and a verdict "
    "(OK_TO_DRAFT, ASK_CLARIFYING_QUESTION, NEEDS_REVIEW, UNKNOWN). Draft only from the evidence "
    "and cite its source_locator; on any other verdict, do not answer the policy question. "
    "`documents` lists the tenant's document versions and their state. The token decides the "
    "tenant."
)


def bearer_secret(headers: Mapping[str, str] | None) -> str | None:
    """The token of an `Authorization: Bearer ...` header, if any."""
    value = (headers or {}).get("authorization", "")
    scheme, _, secret = value.partition(" ")
    return (secret.strip() or None) if scheme.lower() == "bearer" else None


async def _authorized(
    core: ServingCore, secret: str | None, tenant: str, fn: Callable[..., T], *args: Any
) -> T:
    """`fn(principal, *args)` in the pool once the token is found valid for `tenant`."""
    principal = await core.run(core.authorize, secret, tenant)
    return await core.run(fn, principal, *args)


def build_mcp(core: ServingCore, stdio_token: str | None = None) -> MCPServer:
    """MCP server whose tools go through `core` (same auth, pool and timeout as HTTP).

    Over stdio the token comes from `stdio_token`; over HTTP from the request's bearer header.
    """
    server = MCPServer("kb-grounding", instructions=INSTRUCTIONS)

    def secret_of(ctx: Context) -> str | None:
        return stdio_token if stdio_token is not None else bearer_secret(ctx.headers)

    async def answer(tool: str, work: Awaitable[T]) -> T:
        try:
            out = await work
        except ApiError as error:
            core.metrics.tool_calls.labels(tool, error.code).inc()
            where = f" (field {error.field})" if error.field else ""
            raise ToolError(f"{error.code}{where}: {error.message}") from error
        core.metrics.tool_calls.labels(tool, "ok").inc()
        return out

    @server.tool(
        name="ask",
        description="Evidence pack (spec 7) for one guest email or thread.",
    )
    async def ask(
        tenant: str,
        email: str | EmailThread,
        ctx: Context,
        trip_context: TripContext | None = None,
        as_of: date | None = None,
        sensitivity: list[Sensitivity] | None = None,
        audit: bool = False,
    ) -> dict[str, Any]:
        try:
            request = AskRequest(
                email=email,
                trip_context=trip_context,
                as_of=as_of,
                sensitivity=sensitivity,
                audit=audit,
            )
        except ValidationError as error:
            first = error.errors()[0]
            field = ".".join(str(p) for p in first["loc"]) or "arguments"
            raise ToolError(f"invalid_request (field {field}): {first['msg']}") from error
        return await answer("ask", _authorized(core, secret_of(ctx), tenant, core.ask, request))

    @server.tool(
        name="documents",
        description="The tenant's document versions with state, reason code and chunk count.",
    )
    async def documents(tenant: str, ctx: Context) -> dict[str, Any]:
        work = _authorized(core, secret_of(ctx), tenant, core.documents)
        return {"tenant_id": tenant, "documents": await answer("documents", work)}

    return server
