"""`kb index build | status | drop | postings`: a large tenant's PostgreSQL-path indexes.

`build` creates the tenant's IVFFlat vector index (kb_retrieval/retrieval/vector_index.py, on
the owner role); `postings` backfills the BM25 postings of chunks stored before migration 0010
(kb_retrieval/ingestion/postings_backfill.py, resumable); `status` reports both per tenant.
"""

from __future__ import annotations

import json
from typing import Any

import typer

index_app = typer.Typer(
    no_args_is_help=True,
    help="Per-tenant indexes of the PostgreSQL path: IVFFlat vector index, BM25 postings.",
)

TENANT_HELP = "Tenant id (as in its kb.yaml)."


def _database() -> Any:
    from kb_retrieval.db import Database, resolve_database_url

    return Database(resolve_database_url())


def _known(db: Any, tenant: str) -> None:
    """Exit 2 naming the tenant when it is not registered."""
    if tenant not in db.tenants():
        typer.echo(f"error: unknown tenant {tenant!r}: no row in tenants", err=True)
        raise typer.Exit(2)


@index_app.command("build")
def build(
    tenant: str = typer.Option(..., "--tenant", help=TENANT_HELP),
    lists: int = typer.Option(None, min=1, help="IVFFlat lists (default: window vectors/1000)."),
    maintenance_work_mem: str = typer.Option("512MB", help="Memory for the build (SET LOCAL)."),
) -> None:
    """Create the tenant's IVFFlat vector index if it has none (idempotent)."""
    from kb_retrieval.retrieval.vector_index import create_tenant_vector_index

    db = _database()
    _known(db, tenant)
    with db.admin() as conn:
        conn.execute("SELECT set_config('maintenance_work_mem', %s, true)", (maintenance_work_mem,))
        info = create_tenant_vector_index(conn, tenant, lists)
    verb = "created" if info.created else "exists"
    typer.echo(f"{verb}: {info.name} on {tenant} (lists {info.lists}, {info.vectors} vectors)")


@index_app.command("drop")
def drop(tenant: str = typer.Option(..., "--tenant", help=TENANT_HELP)) -> None:
    """Drop the tenant's IVFFlat vector index (its vector leg falls back to the global index)."""
    from kb_retrieval.retrieval.vector_index import drop_tenant_vector_index

    db = _database()
    _known(db, tenant)
    with db.admin() as conn:
        dropped = drop_tenant_vector_index(conn, tenant)
    typer.echo(f"dropped the vector index of {tenant}" if dropped else f"{tenant} had no index")


def _selected(db: Any, tenant: str | None) -> list[str]:
    """The one tenant asked for (which must exist), or every tenant."""
    if tenant is None:
        return db.tenants()
    _known(db, tenant)
    return [tenant]


@index_app.command("postings")
def postings(
    tenant: str = typer.Option(None, "--tenant", help="Only this tenant (default: every one)."),
    batch: int = typer.Option(500, min=1, help="Versions per committed transaction."),
) -> None:
    """Opt tenants into PostgreSQL postings: write those of their stored chunks (resumable);
    ingestion then writes them for the tenants' new versions."""
    from kb_retrieval.ingestion.postings_backfill import backfill_postings

    db = _database()
    tenants = _selected(db, tenant)
    for tenant_id in tenants:
        report = backfill_postings(
            db,
            tenant_id,
            batch=batch,
            progress=lambda done, total, t=tenant_id: typer.echo(
                f"{t}: {done}/{total} versions", err=True
            ),
        )
        typer.echo(
            f"{tenant_id}: {report.versions} versions backfilled, {report.postings} postings"
        )


@index_app.command("status")
def status(
    tenant: str = typer.Option(None, "--tenant", help="Only this tenant (default: every one)."),
    as_json: bool = typer.Option(False, "--json", help="One JSON object per tenant."),
) -> None:
    """Per tenant: vector rows, its IVFFlat index (name, lists) or none, versions without
    postings."""
    from kb_retrieval.ingestion.postings_backfill import pending_versions
    from kb_retrieval.retrieval.vector_index import tenant_vector_index_status

    db = _database()
    tenants = _selected(db, tenant)
    for tenant_id in tenants:
        with db.admin() as conn:
            info = tenant_vector_index_status(conn, tenant_id)
        row = {
            "tenant_id": tenant_id,
            "vector_index": info.name if info else None,
            "lists": info.lists if info else None,
            "vectors": info.vectors if info else None,
            "versions_without_postings": len(pending_versions(db, tenant_id)),
        }
        if as_json:
            typer.echo(json.dumps(row, sort_keys=True))
        else:
            index = f"{info.name} (lists {info.lists}, {info.vectors} vectors)" if info else "none"
            typer.echo(
                f"{tenant_id}: vector index {index}; "
                f"{row['versions_without_postings']} versions without postings"
            )
