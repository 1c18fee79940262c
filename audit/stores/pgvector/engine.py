"""PostgreSQL + pgvector behind the store protocol: a table audited where it lives, in ``READ ONLY`` sessions.

The engine's work is :mod:`audit.stores.pgvector` (SQL aggregates for health, the table's HNSW/IVFFlat
index or an exact scan for search, expression indexes, filters, the extension's version, dead tuples);
:class:`PgvectorStore` holds one connection to it for as long as the store is open.
"""

from __future__ import annotations

from contextlib import closing

from ..base import METRICS
from ..protocol import COLUMNS, ClientStore, Engine, Locator

__all__ = ["ENGINE", "STORE", "PgvectorStore"]


def _spec(uri, table, *, metric: str = "cosine", filters=(), name: str | None = None, **columns):
    """A table's :class:`audit.stores.pgvector.StoreSpec` (``uri`` None: ``$AUDIT_STORE_URI``); ``name`` is the
    store's configured name, what its provenance shows instead of its host."""
    from .connection import StoreSpec

    return StoreSpec(uri, table, *(columns.get(c) for c in COLUMNS), metric, filters=tuple(filters), name=name)


ENGINE = Engine("pgvector", "PostgreSQL + pgvector", "pgvector", ("psycopg",), "audit.stores.pgvector.engine",
                "postgresql://auditor@db:5432/rag", noun="pgvector table", table="Table", columns=COLUMNS,
                required=("id_column", "text_column", "vector_column"),
                defaults=(("id_column", "id"), ("text_column", "text"), ("vector_column", "embedding")),
                metrics=METRICS, settings=("ef_search", "probes", "iterative_scan"),
                locator=Locator("Connection string", "libpq URI, e.g. postgresql://user:password@host:5432/db; "
                                "never shown again.", secret=True),
                spec=_spec)


class PgvectorStore(ClientStore):
    """A pgvector table (:class:`audit.stores.pgvector.StoreSpec`: the URI, the table, its columns, the metric).

    One connection, opened at the first call (``READ ONLY``, :func:`audit.stores.pgvector.connect`) and closed
    by :meth:`close`; the connection string is never echoed.
    """

    engine = ENGINE.name
    noun = ENGINE.noun
    not_a_setting = "pgvector's are ef_search, probes and iterative_scan"

    @staticmethod
    def code():
        from .. import pgvector

        return pgvector

    def open(self):
        return closing(self.code().connect(self.spec))


STORE = PgvectorStore
