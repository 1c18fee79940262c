"""A live pgvector table read for the store protocol: its dimension, its rows streamed, the rows asked for.

:class:`audit.stores.pgvector.engine.PgvectorStore` asks the table its questions through :func:`.search.search`
(approximate and exact) and reads them as one :class:`~audit.runset.RunSet`
(:meth:`audit.stores.protocol.VectorStore.runset`); what it needs from the table beyond the searches is
here: :func:`table_dims`, :func:`stream_rows` (the texts the needles are resolved on, through a server-side
cursor: no vector leaves the server) and :func:`chunks` (the rows returned or judged relevant, with their
document and offsets).
"""

from __future__ import annotations

from ...sources.imported.chunks import UserChunk
from .connection import StoreSpec, _describe, _session

__all__ = ["chunks", "stream_rows", "table_dims"]


def _dims(c, spec: StoreSpec) -> int | None:
    from psycopg import sql

    table = _describe(c, spec)
    if table.declared_dims is not None:
        return table.declared_dims
    # An untyped column: the dimension of a row (health flags mixed ones).
    f = "vector_dims({})" if table.vector_type == "vector" else "cardinality({})"
    r = c.execute(sql.SQL("SELECT " + f + " FROM {t} WHERE {v} IS NOT NULL LIMIT 1").format(
        spec._c("vector"), t=spec._t(), v=spec._c("vector"))).fetchone()
    return r[0] if r else None


def table_dims(spec: StoreSpec, conn=None) -> int | None:
    """The dimension of the table's vectors: the declared ``vector(n)``, else that of a row; None when empty.

    Raises
    ------
    StoreError
        Connection or query failure, unknown table or column.
    """
    with _session(spec, conn) as c:
        return _dims(c, spec)


def chunks(spec: StoreSpec, conn, ids: set[str]) -> list[UserChunk]:
    """The rows ``ids`` as UserChunks (text, document id and offsets where the columns exist), id order.

    Raises
    ------
    StoreError
        A query failure.
    """
    from psycopg import sql

    if not ids:
        return []
    cols = [spec._c("id"), spec._c("text")]
    for role in ("doc", "start", "end"):
        cols.append(spec._c(role) if role in spec.columns else sql.SQL("NULL"))
    stmt = sql.SQL("SELECT {i}::text, {x}, {d}::text, {s}, {e} FROM {t} WHERE {i}::text = ANY(%s)").format(
        i=cols[0], x=cols[1], d=cols[2], s=cols[3], e=cols[4], t=spec._t())
    with _session(spec, conn) as c:
        rows = c.execute(stmt, (sorted(ids),)).fetchall()
    out = []
    for rid, text, doc, start, end in sorted(rows, key=lambda r: r[0]):
        ok = isinstance(start, int) and isinstance(end, int)
        out.append(UserChunk(rid, doc or "", text or "", None, start if ok else None, end if ok else None))
    return out


def stream_rows(spec: StoreSpec, conn, batch: int = 5000):
    """``(id, text, doc id)`` of every row through a server-side cursor, ``batch`` rows at a time (the texts only;
    no vector travels). ``conn`` is an open connection (:func:`.connection.connect`)."""
    from psycopg import sql

    doc = spec._c("doc") if spec.doc_column else sql.SQL("NULL")
    stmt = sql.SQL("SELECT {i}::text, {x}, {d}::text FROM {t}").format(i=spec._c("id"), x=spec._c("text"), d=doc,
                                                                     t=spec._t())
    with _session(spec, conn) as c, c.transaction(), c.cursor(name="audit_needles") as cur:
        cur.itersize = batch
        cur.execute(stmt)
        yield from cur
