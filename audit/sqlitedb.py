"""The audit's own SQLite files (the history, the judgments), opened so that several writers share them safely.

One rule for both: WAL mode, a :data:`BUSY_TIMEOUT_S` busy timeout, and each write one ``BEGIN IMMEDIATE``
transaction, so a second writer (the CLI in CI beside a dashboard, two reviewers at once) waits and never
interleaves. These files are the audit's own; nothing here opens a team's database.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

__all__ = ["BUSY_TIMEOUT_S", "sqlite_connect", "sqlite_write"]

#: Seconds a SQLite writer waits for another's transaction before it gives up.
BUSY_TIMEOUT_S = 30


def sqlite_connect(path: Path) -> sqlite3.Connection:
    """A connection to the audit's own SQLite file that several writers share safely: WAL mode, a
    :data:`BUSY_TIMEOUT_S` busy timeout, autocommit off by hand (each write is one :func:`sqlite_write`).

    Raises
    ------
    sqlite3.Error, OSError
        The file cannot be created or opened (the caller names it in its own error).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_S * 1000}")
    conn.execute("PRAGMA journal_mode = WAL")
    return conn


def sqlite_write(conn: sqlite3.Connection, fn, where: str, error: type[Exception]):
    """``fn(cursor)`` in one ``BEGIN IMMEDIATE`` transaction (a second writer waits, never interleaves).

    Raises
    ------
    error
        The write failed; rolled back; the message names ``where``.
    """
    cur = conn.cursor()
    try:
        cur.execute("BEGIN IMMEDIATE")
        out = fn(cur)
        cur.execute("COMMIT")
        return out
    except sqlite3.Error as e:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise error(f"{where}: {e}") from None
    finally:
        cur.close()
