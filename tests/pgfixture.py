"""A real PostgreSQL 16 + pgvector server for tests, from the PyPI package ``pgserver``.

``pg_server`` is a session-scoped fixture: it starts a throw-away server in a
temporary directory (``initdb`` + ``pg_ctl start``, listening on a Unix socket
only, trust authentication), creates the ``vector`` extension, yields a
:class:`PgInstance` and stops the server and deletes its directory at the end.
Run as root, ``pgserver`` runs the server as its own system user ``pgserver``.

Import it into a test module (``from pgfixture import pg_server``). Without
``pgserver``/``psycopg`` or when the server cannot start, the tests that use it
are skipped with the reason; under ``CI=true`` they fail instead, so CI can
never silently skip them (``make test`` installs both: requirements-dev.txt and requirements-pgvector.txt).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest


def need(msg: str) -> None:
    """Skip with ``msg`` locally; fail with it under ``CI=true``."""
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(msg)
    pytest.skip(msg)


@dataclass(frozen=True)
class PgInstance:
    """A running test server.

    Attributes
    ----------
    uri : str
        Superuser connection URI (``postgresql://postgres:@/postgres?host=SOCKETDIR``).
    socket_dir : str
        Directory of the server's Unix socket.
    pgdata : Path
        The data directory (holds ``pg_hba.conf``).
    """

    uri: str
    socket_dir: str
    pgdata: Path

    def uri_for(self, user: str, password: str, database: str = "postgres") -> str:
        """A URI for ``user`` with ``password`` over the same socket."""
        return f"postgresql://{user}:{password}@/{database}?host={self.socket_dir}"

    def password_role(self, user: str, password: str) -> str:
        """Create a login role checked by SCRAM password (not trust) and return its URI.

        Prepends ``local all USER scram-sha-256`` to ``pg_hba.conf`` and reloads,
        so a wrong password for this role is refused by the server.
        """
        import psycopg
        from psycopg import sql

        with psycopg.connect(self.uri, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(user)))
            conn.execute(sql.SQL("CREATE ROLE {} LOGIN PASSWORD {}").format(sql.Identifier(user),
                                                                         sql.Literal(password)))
            hba = self.pgdata / "pg_hba.conf"
            rule = f"local all {user} scram-sha-256\n"
            text = hba.read_text()
            if rule not in text:
                hba.write_text(rule + text)
            conn.execute("SELECT pg_reload_conf()")
        return self.uri_for(user, password)


@pytest.fixture(scope="session")
def pg_server():
    """Start a PostgreSQL + pgvector server for the session; yields a :class:`PgInstance`."""
    try:
        import pgserver
        import psycopg
    except ImportError as e:
        need(f"{e.name} is not installed: pip install -r requirements-dev.txt -r requirements-pgvector.txt (pgserver, "
             "psycopg[binary]) "
             "to run the PostgreSQL tests")
    tmp = Path(tempfile.mkdtemp(prefix="audit-pg-"))
    pgdata = tmp / "pgdata"
    srv = None
    try:
        try:
            srv = pgserver.get_server(pgdata, cleanup_mode="delete")
            uri = srv.get_uri()
            with psycopg.connect(uri, autocommit=True) as conn:
                conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        except Exception as e:  # noqa: BLE001 - any failure to start is the reason to skip/fail
            need(f"could not start a PostgreSQL server with pgvector via pgserver: {type(e).__name__}: {e}")
        socket_dir = parse_qs(urlsplit(uri).query).get("host", [""])[0]
        yield PgInstance(uri=uri, socket_dir=socket_dir, pgdata=pgdata)
    finally:
        if srv is not None:
            srv.cleanup()
        shutil.rmtree(tmp, ignore_errors=True)
