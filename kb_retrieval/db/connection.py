"""Connections: an admin session for migrations, tenant-scoped transactions for everything else."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
from pgvector.psycopg import register_vector

from kb_retrieval.db.migrate import apply_migrations

TENANT_ID_PATTERN = re.compile(r"^[a-z0-9][a-z0-9_-]{1,62}$")
APP_ROLE = "kb_app"
# One round trip: the application role and the tenant, both for this transaction only
# (set_config('role', ..., true) is SET LOCAL ROLE).
SCOPE_TO_TENANT = "SELECT set_config('role', %s, true), set_config('kb.tenant_id', %s, true)"
ENSURE_TENANT = "INSERT INTO tenants (tenant_id) VALUES (%s) ON CONFLICT DO NOTHING"
LIST_TENANTS = "SELECT tenant_id FROM tenants ORDER BY tenant_id"


class UnknownTenantError(ValueError):
    """A tenant this knowledge base has never registered (nothing was ingested for it)."""

    def __init__(self, tenant_id: str) -> None:
        super().__init__(
            f"tenant {tenant_id!r} has no documents in this knowledge base (KB_DATABASE_URL, or "
            "the embedded server under KB_HOME); ingest its folder first: "
            "kb ingest data/tenants/<tenant>"
        )
        self.tenant_id = tenant_id


def validate_tenant_id(tenant_id: str) -> str:
    if not isinstance(tenant_id, str) or not TENANT_ID_PATTERN.match(tenant_id):
        raise ValueError(f"invalid tenant_id {tenant_id!r}: must match {TENANT_ID_PATTERN.pattern}")
    return tenant_id


class Database:
    """One PostgreSQL database; migrated on first use; one shared connection per thread."""

    def __init__(self, url: str) -> None:
        self.url = url
        self._local = threading.local()
        self._migrated = False

    def connect(self, *, vector_types: bool = True) -> psycopg.Connection:
        """A new autocommit connection, with pgvector types registered unless told otherwise."""
        conn = psycopg.connect(self.url, autocommit=True)
        if vector_types:
            register_vector(conn)
        return conn

    def migrate(self) -> list[str]:
        with self.connect(vector_types=False) as conn:
            applied = apply_migrations(conn)
        self._migrated = True
        return applied

    def _shared(self) -> psycopg.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None or conn.closed:
            if not self._migrated:
                self.migrate()
            conn = self.connect()
            self._local.conn = conn
        return conn

    @contextmanager
    def admin(self) -> Iterator[psycopg.Connection]:
        """A transaction on the owner's role (tenant registry only; tenant tables stay guarded)."""
        conn = self._shared()
        with conn.transaction():
            yield conn

    @contextmanager
    def tenant(self, tenant_id: str) -> Iterator[psycopg.Connection]:
        """A transaction that can only see and write rows of `tenant_id` (row-level security)."""
        validate_tenant_id(tenant_id)
        conn = self._shared()
        with conn.transaction():
            conn.execute(SCOPE_TO_TENANT, (APP_ROLE, tenant_id))
            yield conn

    def ensure_tenant(self, tenant_id: str) -> None:
        with self.admin() as conn:
            conn.execute(ENSURE_TENANT, (validate_tenant_id(tenant_id),))

    def tenants(self) -> list[str]:
        with self.admin() as conn:
            return [row[0] for row in conn.execute(LIST_TENANTS)]

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None
