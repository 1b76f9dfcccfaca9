"""Connections: the owner role for migrations and admin work, the application role for tenants."""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
from pgvector.psycopg import register_vector

from kb_retrieval.db.migrate import apply_migrations
from kb_retrieval.db.roles import APP_ROLE, application_url, tenant_proof

TENANT_ID_PATTERN = re.compile(r"\A[a-z0-9][a-z0-9_-]{1,62}\Z")
# The tenant and its proof (migration 0006), both for this transaction only.
SCOPE_TO_TENANT = (
    "SELECT set_config('kb.tenant_id', %s, true), set_config('kb.tenant_proof', %s, true)"
)
SCOPE_KEY = "SELECT key FROM tenant_scope_key"
LOCK = "SELECT pg_advisory_lock(%s)"
UNLOCK = "SELECT pg_advisory_unlock(%s)"
CONNECT_TIMEOUT_S = 10
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
    """One PostgreSQL database; migrated on first use; two shared connections per thread.

    `url` logs in as the owner role (migrations, admin work without user input); tenant
    transactions use `app_url`, the application role (default: `roles.application_url`).
    """

    def __init__(self, url: str, app_url: str | None = None) -> None:
        self.url = url
        self.app_url = app_url or application_url(url)
        self._local = threading.local()
        self._migrated = False
        self._scope_key: bytes | None = None

    def connect(self, *, vector_types: bool = True, app: bool = False) -> psycopg.Connection:
        """A new autocommit connection (owner, or the application role when `app`)."""
        conn = psycopg.connect(
            self.app_url if app else self.url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S
        )
        if vector_types:
            register_vector(conn)
        return conn

    def migrate(self) -> list[str]:
        with self.connect(vector_types=False) as conn:
            applied = apply_migrations(conn)
        self._migrated = True
        return applied

    def _shared(self, name: str) -> psycopg.Connection:
        conn = getattr(self._local, name, None)
        if conn is None or conn.closed:
            if not self._migrated:
                self.migrate()
            conn = self.connect(app=name == APP_ROLE)
            setattr(self._local, name, conn)
        return conn

    def _proof(self, tenant_id: str) -> str:
        if self._scope_key is None:
            with self.admin() as conn:
                self._scope_key = bytes(conn.execute(SCOPE_KEY).fetchone()[0])
        return tenant_proof(self._scope_key, tenant_id)

    @contextmanager
    def admin(self) -> Iterator[psycopg.Connection]:
        """A transaction on the owner role: code paths that take no user input only."""
        conn = self._shared("owner")
        with conn.transaction():
            yield conn

    @contextmanager
    def tenant(self, tenant_id: str) -> Iterator[psycopg.Connection]:
        """A transaction of the application role that sees and writes only `tenant_id`'s rows."""
        proof = self._proof(validate_tenant_id(tenant_id))
        conn = self._shared(APP_ROLE)
        with conn.transaction():
            conn.execute(SCOPE_TO_TENANT, (tenant_id, proof))
            yield conn

    @contextmanager
    def exclusive(self, tenant_id: str, name: str) -> Iterator[None]:
        """Hold a session advisory lock on (tenant, name) across several tenant transactions.

        Another process waits until this one is done; a process that dies releases the lock
        with its connection.
        """
        digest = hashlib.sha256(f"{validate_tenant_id(tenant_id)}\x00{name}".encode()).digest()
        key = int.from_bytes(digest[:8], "big", signed=True)
        conn = self._shared(APP_ROLE)
        conn.execute(LOCK, (key,))
        try:
            yield
        finally:
            if not conn.closed and not conn.broken:
                conn.execute(UNLOCK, (key,))

    def ensure_tenant(self, tenant_id: str) -> None:
        with self.admin() as conn:
            conn.execute(ENSURE_TENANT, (validate_tenant_id(tenant_id),))

    def tenants(self) -> list[str]:
        with self.admin() as conn:
            return [row[0] for row in conn.execute(LIST_TENANTS)]

    def close(self) -> None:
        for name in ("owner", APP_ROLE):
            conn = getattr(self._local, name, None)
            if conn is not None:
                conn.close()
                setattr(self._local, name, None)
