"""A live pgvector table as a "your system" source: the questions through its approximate index and
through an exact scan, read as an :class:`~audit.sources.imported.ImportedSystem`.

The dashboard's pages for a team's own system (Index health, Query explorer, Threshold, Upgrade diff)
read an ``ImportedSystem``; this module builds one from the table so the same views show the store:
two runs named ``approximate`` and ``exact`` (score kind ``cosine-distance``), the judgments, the
texts of the rows involved, and the out-of-domain runs when out-of-domain questions are given.
Only the top ``k`` rows of each question and the ids of the rows that hold a needle travel; no
vector leaves the server.
"""

from __future__ import annotations

import math
from typing import Mapping, Sequence

import numpy as np

from dataclasses import replace

from ...evaluation.judgments import Qrels
from ...runset import Run, RunSet
from ...matching import collapse
from ..imported.chunks import UserChunk
from ..imported.system import team_runset
from .connection import StoreError, StoreSpec, _describe, _session
from .search import SearchResult, search
from .vectors import QueryVectors

__all__ = ["RUN_NAMES", "needle_relevance", "store_system", "store_upgrade_system", "table_dims"]

#: The two runs of a store system, in this order.
RUN_NAMES = ("approximate", "exact")


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

    by_text = {n.id: collapse(n.needle) for n in needles if not n.relevant_docs}
    by_doc = {n.id: set(n.relevant_docs) for n in needles if n.relevant_docs}
    if by_doc and spec.doc_column is None:
        raise StoreError(f"needle {next(iter(by_doc))!r} is judged by documents: give the document column")
    by_text = {k: v for k, v in by_text.items() if v}
    out: dict[str, set[str]] = {n.id: set() for n in needles}
    doc = spec._c("doc") if spec.doc_column else sql.SQL("NULL")
    stmt = sql.SQL("SELECT {i}::text, {x}, {d}::text FROM {t}").format(i=spec._c("id"), x=spec._c("text"), d=doc,
                                                                     t=spec._t())
    with _session(spec, conn) as c:
        _describe(c, spec)
        with c.transaction(), c.cursor(name="audit_needles") as cur:
            cur.itersize = batch
            cur.execute(stmt)
            for rid, text, did in cur:
                if text and by_text:
                    v = collapse(text)
                    for nid, key in by_text.items():
                        if key in v:
                            out[nid].add(rid)
                if did is not None:
                    for nid, docs in by_doc.items():
                        if did in docs:
                            out[nid].add(rid)
    return out


def _run(name: str, result: SearchResult, qids: Sequence[str], source: str) -> Run:
    """The search as a Run: cosine distance where every value has one, else the operator's own values."""
    finite = all(not math.isnan(x) for row in result.cosine for x in row)
    if finite:
        kind, values = "cosine-distance", result.cosine
    elif result.metric == "l2":
        kind, values = "l2", result.distances
    else:  # <#> is the negative inner product
        kind, values = "ip", tuple(tuple(-x for x in row) for row in result.distances)
    scores = {q: dict(zip(ids, vals)) for q, ids, vals in zip(qids, result.ids, values)}
    return Run.from_scores(name, scores, kind, source=source, origin="computed",
                           latency_ms=dict(zip(qids, result.ms)))


def _vectors(ids: Sequence[str], texts: Sequence[str], encoder, query_vectors: QueryVectors | None,
             aliases: Mapping[str, str], dims: int | None, what: str) -> np.ndarray:
    if query_vectors is not None:
        query_vectors.check_dims(dims, what)
        return query_vectors.for_ids(list(ids), aliases)
    return np.asarray(encoder.encode(list(texts)), dtype=np.float32)


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
                 ef_search: int | None = None, probes: int | None = None, conn=None) -> RunSet:
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

    Returns
    -------
    RunSet
        ``runs``: ``approximate`` then ``exact`` (each with its out-of-domain rankings), score kind ``cosine-distance`` (in [0, 2]; the
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
    if (needles is None) == (queries is None):
        raise StoreError("give the questions either as needles or as queries with qrels")
    if queries is not None and qrels is None:
        raise StoreError("queries need qrels (the relevant row ids of each query)")
    if (encoder is None) == (query_vectors is None):
        raise StoreError("give either a model to embed the questions or their query vectors")
    if needles is not None:
        qs: dict[str, str] = {}
        aliases: dict[str, str] = {}
        for n in needles:
            for suffix, text in zip(("doc", "ticket"), n.questions):
                qs[f"{n.id}/{suffix}"] = text
                aliases[f"{n.id}/{suffix}"] = n.id
    else:
        qs, aliases = dict(queries), {}
    if isinstance(ood_queries, Mapping):
        ood = dict(ood_queries)
    else:
        ood = {f"ood-{i}": t for i, t in enumerate(ood_queries or (), start=1)}
    with _session(spec, conn) as c:
        dims = _dims(c, spec)
        what = f"column {spec.vector_column!r} of {spec.table!r}"
        ids = list(qs)
        Q = _vectors(ids, [qs[i] for i in ids], encoder, query_vectors, aliases, dims, what)
        results = {m: search(spec, Q, k, m, ef_search, probes, conn=c) for m in RUN_NAMES}
        ood_results = {}
        if ood:
            O = _vectors(list(ood), list(ood.values()), encoder, query_vectors, {}, dims, what)
            ood_results = {m: search(spec, O, k, m, ef_search, probes, conn=c) for m in RUN_NAMES}
        if needles is not None:
            rel = needle_relevance(spec, needles, conn=c)
            judgments = {q: {r: 1 for r in sorted(rel[aliases[q]])} for q in ids}
            qrels = Qrels(judgments, source=f"needles resolved against {spec.table}",
                          note="a row is relevant when its text holds the needle (whitespace collapsed)")
            judged_by = f"needles resolved against the texts of table {spec.table} (a row's text holds the needle)"
        else:
            judged_by = f"qrels {qrels.source}" if qrels.source else "qrels"
        runs, ood_runs = [], {}
        for m in RUN_NAMES:
            r = results[m]
            how = (f"through index {r.index} ({', '.join(f'{a}={b}' for a, b in r.settings.items())})"
                   if r.index else "exact scan")
            source = f"pgvector table {spec.table}, {how}" + (f"; {r.note}" if r.note else "")
            runs.append(_run(m, r, ids, source))
            if ood_results:
                ood_runs[m] = _run(m, ood_results[m], list(ood), source)
        involved = {i for r in (*results.values(), *ood_results.values()) for row in r.ids for i in row}
        involved |= {c_ for q in qrels.query_ids for c_ in qrels.relevant(q)}
        chunks = _chunks(spec, involved, c)
    files = [{"role": "store", "name": spec.provenance, "sha256": ""}]
    if query_vectors is not None:
        files.append({"role": "query vectors", "name": query_vectors.source, "sha256": ""})
    model = getattr(encoder, "digest", None) if encoder is not None else f"query vectors {query_vectors.source}"
    keys = {m: {"source": "store", "store": spec.provenance, "table": spec.table, "run": m, "model": model,
                "score_kind": r.score_kind} for m, r in zip(RUN_NAMES, runs)}
    return team_runset(qs, qrels, judged_by, runs, chunks, [], None, ood, ood_runs, files, kind="store",
                       name=f"live store, table {spec.table}", cut_keys=keys)


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
    if mode not in RUN_NAMES:
        raise StoreError(f"mode {mode!r} is not 'approximate' or 'exact'")
    if len(set(names)) != 2:
        raise StoreError(f"the two sides need two names, got {names!r}")
    a, b = store_system(before, **kw), store_system(after, **kw)
    runs = [replace(a.run(mode), name=names[0]), replace(b.run(mode), name=names[1])]
    qa, qb = a.qrels(runs[0]), b.qrels(runs[1])
    judgments = {q: {**qa.judgments.get(q, {}), **qb.judgments.get(q, {})} for q in qa.query_ids}
    qrels = Qrels(judgments, source=f"{qa.source} and {after.table}" if qa.source else "", note=qa.note)
    chunks = {**(a.spaces[""].chunks or {}), **(b.spaces[""].chunks or {})}
    judged_by = a.judged_by if kw.get("needles") is None else (
        f"needles resolved against the texts of tables {before.table} and {after.table} (a row's text holds the "
        "needle in either)")
    files = [{**f, "role": f"{f['role']} ({names[0]})"} for f in a.source.files if f["role"] == "store"]
    files += [{**f, "role": f"{f['role']} ({names[1]})"} for f in b.source.files if f["role"] == "store"]
    files += [f for f in a.source.files if f["role"] != "store"]
    queries = {q.query_id: q.text for q in a.in_domain}
    ood = {q.query_id: q.text for q in a.out_of_domain}
    keys = {n: dict(r.cut_key) for n, r in zip(names, runs)}
    return team_runset(queries, qrels, judged_by, runs, [chunks[k] for k in sorted(chunks)], [], None, ood, {},
                       files, kind="store", name=f"live store, tables {before.table} / {after.table}", cut_keys=keys)
