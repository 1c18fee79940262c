"""``--filter COLUMN=VALUE``: the one rule every engine keeps its searches to.

A filter keeps each search to the rows whose column (a pgvector column, a Chroma metadata key, a Milvus
scalar field) equals the value: values of one column OR-ed, columns AND-ed. How an engine applies it is
its own (pgvector: ``col::text = ANY(%s)`` with bound values; Chroma: a ``where``; Milvus Lite: a
``filter`` expression); what a filter *is* — its parsing and the names and values accepted — is written
once here.
"""

from __future__ import annotations

from .base import StoreError

__all__ = ["MAX_NAME_BYTES", "check_filters", "check_name", "parse_filter"]

#: PostgreSQL's NAMEDATALEN − 1: a longer name is silently truncated by the server, so it is refused here.
MAX_NAME_BYTES = 63


def check_name(what: str, value) -> str:
    """A table, column or key name: non-empty text without NUL, at most :data:`MAX_NAME_BYTES` bytes of UTF-8.

    Raises
    ------
    StoreError
        ``<what> must be a non-empty name``; ``… contains a NUL character``; ``… is longer than PostgreSQL's
        63-byte limit``.
    """
    if not isinstance(value, str) or not value.strip():
        raise StoreError(f"{what} must be a non-empty name, got {value!r}")
    if "\x00" in value:
        raise StoreError(f"{what} {value!r} contains a NUL character")
    if len(value.encode("utf-8")) > MAX_NAME_BYTES:
        raise StoreError(f"{what} {value[:20]!r}… is longer than PostgreSQL's {MAX_NAME_BYTES}-byte limit")
    return value


def parse_filter(text: str) -> tuple[str, str]:
    """``"COLUMN=VALUE"`` → ``(column, value)``; the first ``=`` separates (the value may hold more).

    Raises
    ------
    StoreError
        No ``=``, or an empty column name.
    """
    if not isinstance(text, str) or "=" not in text:
        raise StoreError(f"--filter {text!r}: expected COLUMN=VALUE (e.g. tenant=acme)")
    col, value = text.split("=", 1)
    if not col.strip():
        raise StoreError(f"--filter {text!r}: the column name is empty")
    return col.strip(), value


def check_filters(filters) -> tuple[tuple[str, str], ...]:
    """The filters as a tuple of ``(column, value)`` strings.

    Parameters
    ----------
    filters : iterable of str (``COLUMN=VALUE``) or (column, value) pairs

    Returns
    -------
    tuple of (str, str)

    Raises
    ------
    StoreError
        A filter that is not such a pair, a bad column name (:func:`check_name`), a value that is not text
        or holds NUL (PostgreSQL text cannot hold one). A value is compared with the column's text form, so
        ``42`` matches an integer 42 and ``true`` a boolean.
    """
    out = []
    for f in filters or ():
        if isinstance(f, str):
            f = parse_filter(f)
        if not (isinstance(f, (tuple, list)) and len(f) == 2):
            raise StoreError(f"a filter is (column, value), got {f!r}")
        col, value = check_name("filter column", f[0]), f[1]
        if not isinstance(value, str):
            raise StoreError(f"filter {col}: the value must be text, got {value!r}")
        if "\x00" in value:
            raise StoreError(f"filter {col}: the value holds a NUL character")
        out.append((col, value))
    return tuple(out)
