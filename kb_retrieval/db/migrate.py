"""Versioned schema migrations: numbered `.sql` files applied once, in order, under a lock."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from importlib import resources

import psycopg

MIGRATIONS_PACKAGE = "kb_retrieval.db.migrations"
ADVISORY_LOCK_KEY = 7_351_002_001

CREATE_LEDGER = """
CREATE TABLE IF NOT EXISTS schema_migrations (
    version    integer PRIMARY KEY,
    name       text NOT NULL,
    checksum   text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
)
"""
SELECT_APPLIED = "SELECT version, checksum FROM schema_migrations"
INSERT_APPLIED = "INSERT INTO schema_migrations (version, name, checksum) VALUES (%s, %s, %s)"


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    sql: str

    @property
    def checksum(self) -> str:
        return hashlib.sha256(self.sql.encode()).hexdigest()


def available_migrations() -> list[Migration]:
    """The migration files shipped in the package, ordered by their number."""
    found = []
    for entry in resources.files(MIGRATIONS_PACKAGE).iterdir():
        if entry.name.endswith(".sql"):
            version = int(entry.name.split("_", 1)[0])
            found.append(Migration(version, entry.name, entry.read_text(encoding="utf-8")))
    return sorted(found, key=lambda m: m.version)


def apply_migrations(conn: psycopg.Connection) -> list[str]:
    """Apply every pending migration, each in its own transaction; safe to run concurrently."""
    applied_now: list[str] = []
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (ADVISORY_LOCK_KEY,))
        conn.execute(CREATE_LEDGER)
        done = dict(conn.execute(SELECT_APPLIED).fetchall())
        for migration in available_migrations():
            if migration.version in done:
                if done[migration.version] != migration.checksum:
                    raise RuntimeError(
                        f"migration {migration.name} changed after it was applied; "
                        "add a new migration instead of editing an applied one"
                    )
                continue
            with conn.transaction():
                conn.execute(migration.sql)
                conn.execute(
                    INSERT_APPLIED, (migration.version, migration.name, migration.checksum)
                )
            applied_now.append(migration.name)
    return applied_now
