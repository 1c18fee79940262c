"""A live pgvector table as a "your system" source: the questions through its approximate index and
through an exact scan, read as one :class:`~audit.runset.RunSet`.

The dashboard's pages for a team's own system (Index health, Query explorer, Threshold, Upgrade diff)
read a ``RunSet``; this module builds one from the table so the same views show the store:
two runs named ``approximate`` and ``exact`` (score kind ``cosine-distance``), the judgments, the
texts of the rows involved, and the out-of-domain runs when out-of-domain questions are given.
Only the top ``k`` rows of each question and the ids of the rows that hold a needle travel; no
vector leaves the server.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from ...evaluation.judgments import Qrels
from ..imported.chunks import UserChunk
from ...runset import RunSet
from ..vectorstore import RUN_NAMES
from .connection import StoreSpec, _describe, _session
from .search import search
from .vectors import QueryVectors

__all__ = ["RUN_NAMES", "needle_relevance", "store_system", "store_upgrade_system", "table_dims"]

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


def needle_relevance(spec: StoreSpec, needles: Sequence, conn=None, batch: int = 5000) -> dict[str, set[str]]:
    """Needle id → ids of the rows whose text holds the needle (the matching view, as everywhere).

    The texts are streamed through a server-side cursor (``batch`` rows at a time) and compared in
    Python with :func:`audit.matching.collapse`, so the rule is exactly the built-in audit's; the
    vectors stay on the server. A needle judged by documents (``relevant_docs``, BEIR) marks the rows
    of those documents and needs :attr:`StoreSpec.doc_column`.

    Raises
    ------
    StoreError
        A needle judged by documents without a document column; connection or query failure.
    """
    from psycopg import sql

    from ..vectorstore import relevance_from_rows

    with _session(spec, conn) as c:
        _describe(c, spec)
        return relevance_from_rows(needles, _stream_rows(spec, c, batch), spec.doc_column is not None)


def _chunks(spec: StoreSpec, ids: set[str], conn) -> list[UserChunk]:
    """The rows ``ids`` as UserChunks (text, document id and offsets where the columns exist), id order."""
    from psycopg import sql

    if not ids:
        return []
    cols = [spec._c("id"), spec._c("text")]
    for role in ("doc", "start", "end"):
        cols.append(spec._c(role) if role in spec.columns else sql.SQL("NULL"))
    stmt = sql.SQL("SELECT {i}::text, {x}, {d}::text, {s}, {e} FROM {t} WHERE {i}::text = ANY(%s)").format(
        i=cols[0], x=cols[1], d=cols[2], s=cols[3], e=cols[4], t=spec._t())
    rows = conn.execute(stmt, (sorted(ids),)).fetchall()
    out = []
    for rid, text, doc, start, end in sorted(rows, key=lambda r: r[0]):
        ok = isinstance(start, int) and isinstance(end, int)
        out.append(UserChunk(rid, doc or "", text or "", None, start if ok else None, end if ok else None))
    return out


def store_system(spec: StoreSpec, *, needles: Sequence | None = None, queries: Mapping[str, str] | None = None,
                 qrels: Qrels | None = None, encoder=None, query_vectors: QueryVectors | None = None,
                 ood_queries: Mapping[str, str] | Sequence[str] | None = None, k: int = 20,
                 ef_search: int | None = None, probes: int | None = None, conn=None,
                 iterative_scan: str | None = None) -> RunSet:
    """Ask the table every question approximately and exactly; the answers as one RunSet.

    Parameters
    ----------
    spec : StoreSpec
    needles : sequence of Needle, optional
        Needle ground truth (:func:`audit.groundtruth.load_needles`): the questions are
        ``<needle id>/doc`` and ``<needle id>/ticket``; a row is relevant when its text holds the
        needle (:func:`needle_relevance`, over the whole table).
    queries, qrels : optional
        Instead of ``needles``: query id → text, and judgments whose chunk ids are the table's ids
        (as text).
    encoder : Encoder, optional
        Embeds the questions (``encode(list of str) -> (n, dims)``); or
    query_vectors : QueryVectors, optional
        The questions' vectors from a hosted model (:func:`~.vectors.read_query_vectors`): by query id,
        or by needle id for both of a needle's questions. Exactly one of ``encoder`` and
        ``query_vectors``.
    ood_queries : mapping id → text or sequence of str, optional
        Out-of-domain questions (a list gets the ids ``ood-1``, ``ood-2`` … of the built-in audit);
        they get runs of their own (``ood_runs``) for the threshold's bluffs.
    k : int
        Rows per question (the depth of both runs).
    ef_search, probes : int, optional
        ``hnsw.ef_search`` / ``ivfflat.probes`` of the approximate search.
    iterative_scan : str, optional
        ``hnsw.iterative_scan`` of the approximate search (pgvector ≥ 0.8; see :func:`~.search.search`).

    The body is engine-neutral: :func:`audit.sources.vectorstore.system_from_store`.

    Returns
    -------
    RunSet
        ``runs``: ``approximate`` then ``exact``, score kind ``cosine-distance`` (in [0, 2]; the
        operator's own ``l2``/``ip`` values when some returned row is not unit length), each run's
        ``source`` naming the table, the index and the settings used (and the search's note, e.g.
        "no approximate index: approximate equals exact"); ``chunks``: the rows returned or judged
        relevant, with their texts (and document/offsets where those columns are given);
        ``files``: the store (redacted) and the query vectors file.

    Raises
    ------
    StoreError
        Neither or both of needles and queries+qrels, of encoder and query_vectors; a connection or
        query failure.
    InputFileError
        Query vectors of another dimension than the table, or missing for some question.
    """
    from ..vectorstore import system_from_store

    with _session(spec, conn) as c:
        return system_from_store(
            spec, dims=_dims(c, spec), engine="pgvector table",
            search=lambda Q, k_, m: search(spec, Q, k_, m, ef_search, probes, conn=c, iterative_scan=iterative_scan),
            rows=lambda: _stream_rows(spec, c), chunks=lambda ids: _chunks(spec, ids, c), needles=needles,
            queries=queries, qrels=qrels, encoder=encoder, query_vectors=query_vectors, ood_queries=ood_queries, k=k)


def _stream_rows(spec: StoreSpec, c, batch: int = 5000):
    """(id, text, doc id) of every row through a server-side cursor (the texts only; no vector travels)."""
    from psycopg import sql

    doc = spec._c("doc") if spec.doc_column else sql.SQL("NULL")
    stmt = sql.SQL("SELECT {i}::text, {x}, {d}::text FROM {t}").format(i=spec._c("id"), x=spec._c("text"), d=doc,
                                                                     t=spec._t())
    with c.transaction(), c.cursor(name="audit_needles") as cur:
        cur.itersize = batch
        cur.execute(stmt)
        yield from cur


def store_upgrade_system(before: StoreSpec, after: StoreSpec, *, mode: str = "approximate",
                         names: tuple[str, str] = ("before", "after"), **kw) -> RunSet:
    """Two tables (or two databases) asked the same questions, as one RunSet for the Upgrade diff.

    Each side is :func:`store_system` of its table; the result keeps one run per side, named
    ``names`` (``before``/``after``), through each table's approximate index (``mode="approximate"``)
    or its exact scan. With needles, a row is relevant when its text holds the needle in *either*
    table, so the judgments are the union of the two tables' (a row id that holds the needle in one
    table and not in the other is judged relevant: ids are expected to name the same chunk on both
    sides, as after an index rebuild or a pgvector upgrade).

    Parameters
    ----------
    before, after : StoreSpec
    mode : {"approximate", "exact"}
    names : (str, str)
    **kw
        As :func:`store_system` (needles or queries+qrels, encoder or query_vectors, ood_queries, k,
        ef_search, probes).

    Raises
    ------
    StoreError, InputFileError
        As :func:`store_system`; an unknown ``mode`` or two equal names.
    """
    from ..vectorstore import upgrade_system

    return upgrade_system(store_system, before, after, mode=mode, names=names, **kw)
