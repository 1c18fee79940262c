"""A live store's spec as reports say it and as every engine checks it, and the client an engine's function is given.

:func:`described` is a spec's ``to_dict()`` (what reports and health's ``target`` hold: never a password or a
user), :func:`filters_said` what its provenance line adds for ``--filter``, :func:`check_offsets` the rule
for offset columns every engine applies, :func:`opened_or` the client an engine's function uses (the
caller's, or one opened for the call).
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Mapping

from .base import StoreError

__all__ = ["check_offsets", "described", "filters_said", "opened_or"]


def filters_said(filters) -> str:
    """``; filter COLUMN = 'VALUE'`` for each filter: what a store's provenance line adds."""
    return "".join(f"; filter {c} = {v!r}" for c, v in filters)


def described(where: str, table: str, metric: str, columns: Mapping[str, str], filters=(),
              engine: str | None = None) -> dict:
    """A live store's spec as data (its ``to_dict()``, what reports and health's ``target`` hold): ``store``
    (where, never a password or a user), ``engine`` (when given), ``table``, ``metric``, ``columns`` and the
    ``filters`` when there are any."""
    out = {"store": where, **({"engine": engine} if engine else {}), "table": table, "metric": metric,
           "columns": dict(columns)}
    if filters:
        out["filters"] = [list(f) for f in filters]
    return out


def check_offsets(spec, noun: str) -> None:
    """A store's offset columns (keys, fields) come both or neither, and with the document's.

    Raises
    ------
    StoreError
        ``give both the start and the end offset <noun>, or neither``; ``offset <noun> need the document
        <noun, singular> (doc_column) too``.
    """
    if (spec.start_column is None) != (spec.end_column is None):
        raise StoreError(f"give both the start and the end offset {noun}, or neither")
    if spec.start_column is not None and spec.doc_column is None:
        raise StoreError(f"offset {noun} need the document {noun[:-1]} (doc_column) too")


@contextmanager
def opened_or(conn, opener, spec):
    """``conn`` when the caller has the store open already, else ``opener(spec)`` for the block (closed after)."""
    if conn is not None:
        yield conn
    else:
        with opener(spec) as o:
            yield o
