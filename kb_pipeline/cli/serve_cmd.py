"""`kb serve`, `kb mcp` and `kb token`: retrieval as a service, and its tenant tokens."""

from __future__ import annotations

import os

import typer

token_app = typer.Typer(no_args_is_help=True, help="Bearer tokens of `kb serve`, one tenant each.")
TOKEN_ENV = "KB_TOKEN"


def serve(
    host: str = typer.Option("127.0.0.1", help="Address to listen on."),
    port: int = typer.Option(8080, help="Port to listen on."),
    workers: int = typer.Option(
        None, help="Retrieval threads (default KB_SERVE_WORKERS or 2); more requests queue."
    ),
    timeout: float = typer.Option(None, help="Seconds before a request answers 504 (default 10)."),
) -> None:
    """Serve /v1/tenants/{tenant}/ask and /documents over HTTP, and the MCP tools at /mcp."""
    import uvicorn

    from kb_retrieval.serving.app import create_app
    from kb_retrieval.serving.core import ServeSettings

    settings = ServeSettings.from_env(host=host, workers=workers, timeout_s=timeout)
    app = create_app(settings=settings, embedder=os.environ.get("KB_EMBEDDER", "minilm"))
    typer.echo(f"kb serve: http://{host}:{port}  (OpenAPI /docs, MCP /mcp)", err=True)
    uvicorn.run(app, host=host, port=port, log_level="info", access_log=False)


def mcp(
    token: str = typer.Option(
        None, "--token", envvar=TOKEN_ENV, help=f"The tenant's token (or ${TOKEN_ENV})."
    ),
) -> None:
    """The `ask` and `documents` MCP tools over stdio (for an agent that starts `kb mcp`)."""
    import anyio

    from kb_retrieval.service import open_knowledge_base
    from kb_retrieval.serving.core import ServeSettings, ServingCore
    from kb_retrieval.serving.mcp_tools import build_mcp

    if not token:
        typer.echo(f"error: --token or ${TOKEN_ENV} is required", err=True)
        raise typer.Exit(2)
    kb = open_knowledge_base(embedder=os.environ.get("KB_EMBEDDER", "minilm"))
    core = ServingCore(kb, ServeSettings.from_env())
    try:
        anyio.run(build_mcp(core, stdio_token=token).run_stdio_async)
    finally:
        core.close()


@token_app.command("create")
def token_create(
    tenant: str = typer.Option(..., "--tenant", help="Tenant the token acts for."),
    label: str = typer.Option(None, help="A note saying who holds it."),
) -> None:
    """Create a token; its secret is printed once (stdout) and only its sha256 is stored."""
    from kb_retrieval.db import Database, resolve_database_url
    from kb_retrieval.serving.tokens import TokenStore

    db = Database(resolve_database_url())
    try:
        issued = TokenStore(db).create(tenant, label)
    except ValueError as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(2) from error
    if tenant not in db.tenants():
        typer.echo(f"note: tenant {tenant!r} has no documents yet (404 until ingested)", err=True)
    typer.echo(
        f"token_id {issued.token_id} for tenant {tenant} (revoke: kb token revoke ID)", err=True
    )
    typer.echo(issued.secret)


@token_app.command("revoke")
def token_revoke(token_id: str = typer.Argument(..., help="The token's id (tok_...).")) -> None:
    """Revoke a token: it answers 401 from the next request on."""
    from kb_retrieval.db import Database, resolve_database_url
    from kb_retrieval.serving.tokens import TokenStore

    try:
        changed = TokenStore(Database(resolve_database_url())).revoke(token_id)
    except KeyError as error:
        typer.echo(f"error: unknown token id {token_id!r}", err=True)
        raise typer.Exit(2) from error
    typer.echo(f"{token_id} revoked" if changed else f"{token_id} was already revoked")


@token_app.command("list")
def token_list(
    tenant: str = typer.Option(None, "--tenant", help="Only this tenant's tokens."),
) -> None:
    """Token ids, tenants, labels and state (never the secrets)."""
    from kb_retrieval.db import Database, resolve_database_url
    from kb_retrieval.serving.tokens import TokenStore

    for info in TokenStore(Database(resolve_database_url())).list(tenant):
        state = f"revoked {info.revoked_at:%Y-%m-%d}" if info.revoked_at else "active"
        typer.echo(f"{info.token_id}  {info.tenant_id}  {state}  {info.label or ''}".rstrip())
