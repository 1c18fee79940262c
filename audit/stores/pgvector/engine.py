"""PostgreSQL + pgvector behind the store protocol: a table audited where it lives, in ``READ ONLY`` sessions.

The engine's work is :mod:`audit.stores.pgvector` (SQL aggregates for health, the table's HNSW/IVFFlat
index or an exact scan for search, expression indexes, filters, the extension's version, dead tuples);
:class:`PgvectorStore` holds one connection to it for as long as the store is open.
"""

from __future__ import annotations

from contextlib import closing

from ..protocol import ClientStore, Engine

__all__ = ["ENGINE", "STORE", "PgvectorStore"]

ENGINE = Engine("pgvector", "PostgreSQL + pgvector", "pgvector", ("psycopg",), "audit.stores.pgvector.engine",
                "postgresql://auditor@db:5432/rag")


class PgvectorStore(ClientStore):
    """A pgvector table (:class:`audit.stores.pgvector.StoreSpec`: the URI, the table, its columns, the metric).

    One connection, opened at the first call (``READ ONLY``, :func:`audit.stores.pgvector.connect`) and closed
    by :meth:`close`; the connection string is never echoed.
    """

    engine = "pgvector"
    noun = "pgvector table"
    not_a_setting = "pgvector's are ef_search, probes and iterative_scan"

    @staticmethod
    def code():
        from .. import pgvector

        return pgvector

    def open(self):
        return closing(self.code().connect(self.spec))


STORE = PgvectorStore
