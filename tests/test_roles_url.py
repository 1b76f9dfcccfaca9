"""The application role's URL keeps every connection option of the owner's URL intact."""

from __future__ import annotations

import psycopg

from kb_retrieval.db.roles import with_user


def test_with_user_keeps_options_with_spaces() -> None:
    owner = "postgresql://kb_owner@/kb?host=/tmp/sock&options=-c%20statement_timeout%3D5000"
    derived = psycopg.conninfo.conninfo_to_dict(with_user(owner, "kb_app"))
    assert derived["user"] == "kb_app"
    assert derived["dbname"] == "kb"
    assert derived["host"] == "/tmp/sock"
    assert derived["options"] == "-c statement_timeout=5000"


def test_with_user_timeout_reaches_the_server(db) -> None:
    url = db.url + ("&" if "?" in db.url else "?") + "options=-c%20statement_timeout%3D4321"
    with psycopg.connect(with_user(url, "kb_app"), autocommit=True) as conn:
        assert conn.execute("SHOW statement_timeout").fetchone()[0] == "4321ms"
