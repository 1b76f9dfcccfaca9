"""Bearer tokens of the service: bound to one tenant, stored as the sha256 of the secret."""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import datetime

from kb_retrieval.db.connection import Database, validate_tenant_id

TOKEN_PREFIX = "kbt_"
INSERT_TOKEN = """
INSERT INTO api_tokens (token_id, tenant_id, token_sha256, label)
VALUES (%(token_id)s, %(tenant_id)s, %(token_sha256)s, %(label)s)
"""
REVOKE_TOKEN = """
UPDATE api_tokens SET revoked_at = now() WHERE token_id = %(token_id)s AND revoked_at IS NULL
RETURNING tenant_id
"""
TOKEN_EXISTS = "SELECT 1 FROM api_tokens WHERE token_id = %(token_id)s"
RESOLVE_TOKEN = """
SELECT token_id, tenant_id FROM api_tokens
WHERE token_sha256 = %(token_sha256)s AND revoked_at IS NULL
"""
LIST_TOKENS = """
SELECT token_id, tenant_id, label, created_at, revoked_at FROM api_tokens
WHERE %(tenant_id)s::text IS NULL OR tenant_id = %(tenant_id)s
ORDER BY tenant_id, created_at, token_id
"""


@dataclass(frozen=True)
class IssuedToken:
    """A new token: `secret` is shown once and never stored."""

    token_id: str
    tenant_id: str
    secret: str


@dataclass(frozen=True)
class TokenInfo:
    token_id: str
    tenant_id: str
    label: str | None
    created_at: datetime
    revoked_at: datetime | None


@dataclass(frozen=True)
class Principal:
    """Who a valid token speaks for."""

    token_id: str
    tenant_id: str


def token_hash(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


class TokenStore:
    """Create, revoke and resolve tokens through the owner's session (no tenant is known yet)."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def create(self, tenant_id: str, label: str | None = None) -> IssuedToken:
        validate_tenant_id(tenant_id)
        token_id = f"tok_{secrets.token_hex(6)}"
        secret = TOKEN_PREFIX + secrets.token_urlsafe(32)
        row = {
            "token_id": token_id,
            "tenant_id": tenant_id,
            "token_sha256": token_hash(secret),
            "label": label,
        }
        with self.db.admin() as conn:
            conn.execute(INSERT_TOKEN, row)
        return IssuedToken(token_id, tenant_id, secret)

    def revoke(self, token_id: str) -> bool:
        """True when the token was active and is now revoked; KeyError for an unknown id."""
        with self.db.admin() as conn:
            if conn.execute(TOKEN_EXISTS, {"token_id": token_id}).fetchone() is None:
                raise KeyError(token_id)
            return conn.execute(REVOKE_TOKEN, {"token_id": token_id}).fetchone() is not None

    def list(self, tenant_id: str | None = None) -> list[TokenInfo]:
        with self.db.admin() as conn:
            rows = conn.execute(LIST_TOKENS, {"tenant_id": tenant_id}).fetchall()
        return [TokenInfo(*row) for row in rows]

    def resolve(self, secret: str | None) -> Principal | None:
        """The active token's tenant, or None (missing, unknown or revoked token)."""
        if not secret or not secret.startswith(TOKEN_PREFIX) or len(secret) > 200:
            return None
        with self.db.admin() as conn:
            row = conn.execute(RESOLVE_TOKEN, {"token_sha256": token_hash(secret)}).fetchone()
        return Principal(row[0], row[1]) if row else None
