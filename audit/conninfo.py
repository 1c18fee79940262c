"""Connection strings (libpq's URL and ``key=value`` forms): their fields, their passwords never echoed.

Every engine's messages, the history's and the provenance of a report go through :func:`redact`; a store is
named by :func:`store_label` (its configured name, else ``host/database``; never the user or the port).
:func:`is_postgres_uri` tells a PostgreSQL connection string from a file path (the history's ``uri``).
"""

from __future__ import annotations

import re
from urllib.parse import quote

__all__ = ["fields", "is_postgres_uri", "password_of", "redact", "redact_uri", "store_label"]


_URL_PASSWORD = re.compile(r"(://[^:@/?#\s]*):([^@/\s]*)@")


_KW_PASSWORD = re.compile(r"(?i)(\bpassword\s*=\s*)('(?:[^'\\]|\\.)*'|[^&\s]+)")


def password_of(uri: str | None) -> str:
    """The password a connection string carries (psycopg's parser; ``""`` when none, psycopg absent or the string
    malformed)."""
    if not uri:
        return ""
    try:
        from psycopg.conninfo import conninfo_to_dict

        return str(conninfo_to_dict(uri).get("password") or "")
    except Exception:  # noqa: BLE001 - a malformed URI has no parseable password; the regexes still apply
        return ""


def redact(text: str, uri: str | None = None) -> str:
    """``text`` with every credential replaced by ``***``.

    Removes the password of URL forms (``postgresql://user:***@host/db``),
    ``password=…`` in query strings and keyword/value connection strings,
    and every literal occurrence (plain or percent-encoded) of the password
    parsed from ``uri``.

    Parameters
    ----------
    text : str
        A message or connection string.
    uri : str, optional
        The connection string whose password must not appear.

    Returns
    -------
    str
    """
    out = _URL_PASSWORD.sub(r"\1:***@", text)
    out = _KW_PASSWORD.sub(r"\1***", out)
    pw = password_of(uri) or password_of(text if "://" in text or "=" in text else None)
    for form in {pw, quote(pw, safe="")} - {""}:
        out = out.replace(form, "***")
    return out


def redact_uri(uri: str) -> str:
    """The connection string with its password replaced by ``***`` (``postgresql://user:***@host/db``)."""
    return redact(uri, uri)


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
