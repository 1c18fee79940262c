"""PostgreSQL + pgvector behind the store protocol: a table audited where it lives, in ``READ ONLY`` sessions.

The engine's work is :mod:`audit.sources.pgvector` (SQL aggregates for health, the table's HNSW/IVFFlat
index or an exact scan for search, expression indexes, filters, the extension's version, dead tuples);
:class:`PgvectorStore` holds one connection to it for as long as the store is open.
"""

from __future__ import annotations

from .base import SearchResult, model_of, noted
from .protocol import Engine, VectorStore

__all__ = ["ENGINE", "STORE", "PgvectorStore"]

ENGINE = Engine("pgvector", "PostgreSQL + pgvector", "pgvector", ("psycopg",), "audit.stores.pgvector",
                "postgresql://auditor@db:5432/rag")


class PgvectorStore(VectorStore):
    """A pgvector table (:class:`audit.sources.pgvector.StoreSpec`: the URI, the table, its columns, the metric).

    One connection, opened at the first call (``READ ONLY``, :func:`audit.sources.pgvector.connect`) and closed
    by :meth:`close`; the connection string is never echoed.
    """

    engine = "pgvector"
    noun = "pgvector table"

    def __init__(self, spec, conn=None) -> None:
        super().__init__(spec)
        self._conn, self._own = conn, conn is None

    @property
    def conn(self):
        """The session (opened on first use)."""
        if self._conn is None:
            from ..sources.pgvector.connection import connect

            self._conn = connect(self.spec)
        return self._conn

    def search(self, queries, k: int, mode: str = "approximate", ef_search: int | None = None,
               probes: int | None = None, iterative_scan: str | None = None, **settings) -> SearchResult:
        """:func:`audit.sources.pgvector.search` over this connection."""
        from ..sources.pgvector.search import search

        return noted(search(self.spec, queries, k, mode, ef_search, probes, conn=self.conn,
                            iterative_scan=iterative_scan), self.not_applied(settings, "pgvector's are ef_search, probes and iterative_scan"))

    def health(self, *, corpus=None, encoder=None, model_dims: int | None = None, model_name: str | None = None):
        """:func:`audit.sources.pgvector.check_health` (SQL aggregates, no vector leaves the server)."""
        from ..sources.pgvector.health import check_health

        dims, name = model_of(encoder, model_dims, model_name)
        return check_health(self.spec, corpus, model_dims=dims, model_name=name, conn=self.conn)

    def dims(self) -> int | None:
        from ..sources.pgvector.system import table_dims

        return table_dims(self.spec, self.conn)

    def rows(self):
        from ..sources.pgvector.system import stream_rows

        return stream_rows(self.spec, self.conn)

    def chunks(self, ids) -> list:
        from ..sources.pgvector.system import chunks

        return chunks(self.spec, set(ids), self.conn)

    def close(self) -> None:
        if self._own and self._conn is not None:
            self._conn.close()
        self._conn = None


STORE = PgvectorStore
