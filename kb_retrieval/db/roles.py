"""Login roles: `kb_owner` (owns the schema, runs migrations and admin work) and `kb_app` (tenant sessions).

The embedded server creates both from its bootstrap superuser; a managed server gets them from
its administrator (docs/security.md). Tenant sessions prove their tenant to the row-level
security policies with a keyed hash the application role cannot compute in SQL.
"""

from __future__ import annotations

import hashlib
import os
from urllib.parse import quote, urlencode

import psycopg

OWNER_ROLE = "kb_owner"
APP_ROLE = "kb_app"
APP_DATABASE_URL_ENV = "KB_APP_DATABASE_URL"
DATABASE_URL_ENV = "KB_DATABASE_URL"

ROLES_READY = """
SELECT count(*) = 2
       AND bool_and(NOT rolsuper AND rolcanlogin AND NOT rolcreaterole)
       AND bool_and(rolbypassrls = (rolname = 'kb_owner'))
FROM pg_roles WHERE rolname IN ('kb_owner', 'kb_app')
"""
CREATE_ROLES = """
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'kb_owner') THEN
        CREATE ROLE kb_owner;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'kb_app') THEN
        CREATE ROLE kb_app;
    END IF;
END
$$;
ALTER ROLE kb_owner LOGIN NOSUPERUSER NOCREATEROLE CREATEDB BYPASSRLS NOREPLICATION;
ALTER ROLE kb_app LOGIN NOSUPERUSER NOCREATEROLE NOCREATEDB NOBYPASSRLS NOREPLICATION;
GRANT kb_app TO kb_owner;
"""
DATABASES_TO_ADOPT = (
    "SELECT datname FROM pg_database WHERE NOT datistemplate AND datallowconn "
    "AND pg_get_userbyid(datdba) <> 'kb_owner' ORDER BY datname"
)
CREATE_VECTOR = "CREATE EXTENSION IF NOT EXISTS vector"
# A database created before the roles existed: the owner role takes over the database and
# every object of schema `public` that no extension owns (tables carry their serial sequences).
ADOPT_OBJECTS = """
DO $$
DECLARE
    r record;
BEGIN
    EXECUTE format('ALTER DATABASE %I OWNER TO kb_owner', current_database());
    FOR r IN
        SELECT c.oid::regclass AS name,
               CASE c.relkind WHEN 'S' THEN 'SEQUENCE' WHEN 'v' THEN 'VIEW'
                              WHEN 'm' THEN 'MATERIALIZED VIEW' ELSE 'TABLE' END AS kind
        FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p', 'v', 'm', 'S')
          AND pg_get_userbyid(c.relowner) <> 'kb_owner'
          AND NOT EXISTS (SELECT 1 FROM pg_depend d
                          WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid
                            AND d.deptype IN ('e', 'a', 'i'))
    LOOP
        EXECUTE format('ALTER %s %s OWNER TO kb_owner', r.kind, r.name);
    END LOOP;
    FOR r IN
        SELECT p.oid::regprocedure AS name
        FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
        WHERE n.nspname = 'public' AND pg_get_userbyid(p.proowner) <> 'kb_owner'
          AND NOT EXISTS (SELECT 1 FROM pg_depend d
                          WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid
                            AND d.deptype = 'e')
    LOOP
        EXECUTE format('ALTER ROUTINE %s OWNER TO kb_owner', r.name);
    END LOOP;
END
$$
"""


def with_user(url: str, user: str, dbname: str | None = None) -> str:
    """A postgresql:// URL of the same server as `url`, logged in as `user` without a password
    (trust, or the password from .pgpass / PGPASSFILE), on `dbname` or the same database."""
    info = {k: str(v) for k, v in psycopg.conninfo.conninfo_to_dict(url).items()}
    info.pop("password", None)
    info.pop("user", None)
    database = dbname or info.pop("dbname", "postgres")
    info.pop("dbname", None)
    # %20, not "+", for spaces (e.g. options=-c statement_timeout=...): libpq does not read "+".
    query = f"?{urlencode(info, quote_via=quote)}" if info else ""
    return f"postgresql://{quote(user, safe='')}@/{quote(database, safe='')}{query}"


def application_url(owner_url: str) -> str:
    """The application role's connection: `KB_APP_DATABASE_URL` for `KB_DATABASE_URL`, else derived."""
    configured = os.environ.get(APP_DATABASE_URL_ENV, "").strip()
    if configured and owner_url == os.environ.get(DATABASE_URL_ENV, "").strip():
        return configured
    return with_user(owner_url, APP_ROLE)


def tenant_proof(key: bytes, tenant_id: str) -> str:
    """The keyed hash `kb_current_tenant()` checks (migration 0006): sha256(k || sha256(k || t))."""
    inner = hashlib.sha256(key + tenant_id.encode("utf-8")).digest()
    return hashlib.sha256(key + inner).hexdigest()


def bootstrap_roles(superuser_url: str) -> str:
    """Create or repair both roles and adopt older databases; returns the owner's URL. Fast when done."""
    with psycopg.connect(superuser_url, autocommit=True) as conn:
        ready = conn.execute(ROLES_READY).fetchone()[0]
        adopt = [row[0] for row in conn.execute(DATABASES_TO_ADOPT)]
        if not ready:
            conn.execute(CREATE_ROLES)
    if not ready:
        # New databases (CREATE DATABASE by the owner) inherit the extension from template1.
        with psycopg.connect(with_user_db(superuser_url, "template1"), autocommit=True) as conn:
            conn.execute(CREATE_VECTOR)
    for name in adopt:
        with psycopg.connect(with_user_db(superuser_url, name), autocommit=True) as conn:
            conn.execute(CREATE_VECTOR)
            conn.execute(ADOPT_OBJECTS)
    return with_user(superuser_url, OWNER_ROLE)


def with_user_db(url: str, dbname: str) -> str:
    return psycopg.conninfo.make_conninfo(url, dbname=dbname)
