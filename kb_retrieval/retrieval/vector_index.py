"""A large tenant's own vector index: an IVFFlat index over its window vectors only.

The global HNSW index spans every tenant; the tenant filter is applied after the index scan, and
at 1M chunks (ten tenants, the measured one 100k) its recall against the exact scan stayed at
0.54-0.80 whatever the settings (docs/benchmarks.md, sessions 6 and 7). A partial index whose
predicate is `tenant_id = <tenant>` holds only that tenant's vectors; retrieval's statements
name the tenant as a literal (custom plans), so the planner can use it. IVFFlat is built from
k-means centroids of the rows present, so it is created once a tenant is large and rebuilt
(`REINDEX`) after it has grown a lot; the lists stay correct in between, recall drifts slowly.

DDL on the owner role (`Database.admin()`), never with user input: the tenant id is checked
by the `tenants` table's pattern and passed as a quoted literal.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from psycopg import sql as pgsql

from kb_retrieval.retrieval import sql

ROWS_PER_LIST = 1000  # pgvector's guidance for IVFFlat: rows / 1000 lists up to 1M rows


@dataclass(frozen=True)
class TenantVectorIndex:
    tenant_id: str
    name: str
    lists: int
    vectors: int
    created: bool


def index_name(tenant_id: str) -> str:
    """A stable name within PostgreSQL's 63 bytes, whatever the tenant id's length."""
    return "chunk_vectors_ivf_" + hashlib.sha256(tenant_id.encode()).hexdigest()[:16]


def lists_for(vectors: int) -> int:
    """IVFFlat lists for a tenant holding `vectors` window vectors."""
    return max(1, vectors // ROWS_PER_LIST)


def create_tenant_vector_index(
    conn: Any, tenant_id: str, lists: int | None = None
) -> TenantVectorIndex:
    """Create the tenant's IVFFlat partial index if it is missing (owner connection)."""
    registered = conn.execute(sql.TENANT_EXISTS, {"tenant_id": tenant_id}).fetchone()[0]
    if not registered:
        raise ValueError(f"unknown tenant {tenant_id!r}: no row in tenants")
    existing = tenant_vector_index_status(conn, tenant_id)
    if existing is not None:
        return existing
    name = index_name(tenant_id)
    vectors = conn.execute(sql.TENANT_VECTOR_ROWS, {"tenant_id": tenant_id}).fetchone()[0]
    chosen = lists or lists_for(vectors)
    conn.execute(
        pgsql.SQL(sql.CREATE_TENANT_IVFFLAT).format(
            name=pgsql.Identifier(name),
            lists=pgsql.Literal(chosen),
            tenant=pgsql.Literal(tenant_id),
        )
    )
    return TenantVectorIndex(tenant_id, name, chosen, vectors, True)


def tenant_vector_index_status(conn: Any, tenant_id: str) -> TenantVectorIndex | None:
    """The tenant's index (lists as built, the tenant's vector rows now), None if it has none."""
    name = index_name(tenant_id)
    options = conn.execute(sql.INDEX_OPTIONS, (name,)).fetchone()
    if options is None:
        return None
    vectors = conn.execute(sql.TENANT_VECTOR_ROWS, {"tenant_id": tenant_id}).fetchone()[0]
    existing = dict(option.split("=", 1) for option in options[0] or [])
    return TenantVectorIndex(tenant_id, name, int(existing.get("lists", 0)), vectors, False)


def drop_tenant_vector_index(conn: Any, tenant_id: str) -> bool:
    """Drop the tenant's partial index; whether there was one."""
    name = index_name(tenant_id)
    if conn.execute(sql.INDEX_OPTIONS, (name,)).fetchone() is None:
        return False
    conn.execute(pgsql.SQL("DROP INDEX {}").format(pgsql.Identifier(name)))
    return True
