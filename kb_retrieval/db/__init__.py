"""PostgreSQL access: server resolution, migrations and tenant-scoped sessions."""

from kb_retrieval.db.connection import Database
from kb_retrieval.db.server import resolve_database_url

__all__ = ["Database", "resolve_database_url"]
