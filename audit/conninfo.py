"""Connection strings (libpq's URL and ``key=value`` forms) as the audit reads them, for every engine and the
history: their fields (:func:`fields`), the name a store is shown by (:func:`store_label`: its configured name,
else ``host/database``; never the user, the password or the port), and whether a string is a PostgreSQL
connection string rather than a file path (:func:`is_postgres_uri`, the history's ``uri``). Their passwords
are kept out of every output by :mod:`audit.secrets`.
"""

from __future__ import annotations

import re

__all__ = ["fields", "is_postgres_uri", "store_label"]


_KW_PAIR = re.compile(r"(\w+)\s*=\s*('(?:[^'\\]|\\.)*'|\S+)")


def fields(uri: str) -> dict[str, str]:
    """The connection string's fields (``host``, ``dbname`` …): psycopg's parser, else a plain one."""
    try:
        from psycopg.conninfo import conninfo_to_dict

        return {k: str(v) for k, v in conninfo_to_dict(uri).items() if v is not None}
    except Exception:  # noqa: BLE001 - psycopg absent (an optional extra) or a string it refuses
        pass
    if "://" in uri:
        from urllib.parse import unquote, urlsplit

        try:
            u = urlsplit(uri)
            host = u.netloc.rsplit("@", 1)[-1]
            host = host.rsplit(":", 1)[0] if not host.endswith("]") else host
            return {"host": unquote(host), "dbname": unquote(u.path.lstrip("/"))}
        except ValueError:
            return {}
    return {k: v.strip("'") for k, v in _KW_PAIR.findall(uri)}


def store_label(uri: str | None, name: str | None = None) -> str:
    """The store as reports and pages name it: ``store NAME`` when configured, else ``host/database``.

    Never the user, the password or the port: a shared dashboard shows the name its operator
    gave the store (``[stores] NAME`` in audit.toml, or ``$AUDIT_STORE_URI``); a connection string
    typed in single-user mode or given to the CLI shows where it points, ``db.example/rag``. A host
    that is a socket folder reads ``local socket``; no database in the string (libpq then uses the
    user's name), the host alone.

    Parameters
    ----------
    uri : str or None
        A libpq connection string (URL or ``key=value`` form).
    name : str, optional
        The configured name of the store.

    Returns
    -------
    str
    """
    if name:
        return f"store {name}"
    info = fields(uri or "")
    host = info.get("host") or info.get("hostaddr") or "localhost"
    host = "local socket" if host.startswith("/") else host
    db = info.get("dbname", "")
    return f"{host}/{db}" if db else host


def is_postgres_uri(uri: str) -> bool:
    """Whether ``uri`` is a PostgreSQL connection string (URL or ``key=value`` form) rather than a file path."""
    u = uri.strip()
    return u.startswith(("postgresql://", "postgres://")) or ("=" in u and ("host=" in u or "dbname=" in u))
