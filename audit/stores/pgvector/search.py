"""Top-k through the table's own approximate index and through an exact scan (compared per k by
:mod:`audit.evaluation.approximate`)."""

from __future__ import annotations

import json
import math
import time

import numpy as np

from ...health import NORM_TOLERANCE
from ..base import SearchResult, check_search, cosine_in_range, rescore
from .connection import (
    StoreError,
    StoreSpec,
    _describe,
    _index_for,
    _no_index_note,
    _session,
    _vec_expr,
    find_indexes,
    view_base,
)


def _vector_literal(v: np.ndarray) -> str:
    # repr of the float64 value of each float32 is exact; pgvector parses it back to the same float32.
    return "[" + ",".join(repr(float(x)) for x in v) + "]"


def _plan_index(plan) -> str | None:
    if isinstance(plan, dict):
        if "Index Name" in plan:
            return plan["Index Name"]
        for v in plan.values():
            r = _plan_index(v)
            if r:
                return r
    elif isinstance(plan, list):
        for v in plan:
            r = _plan_index(v)
            if r:
                return r
    return None


def search(spec: StoreSpec, queries: np.ndarray, k: int, mode: str = "approximate",
           ef_search: int | None = None, probes: int | None = None, conn=None,
           iterative_scan: str | None = None) -> SearchResult:
    """Top-k rows for each query vector, through the table's approximate index or an exact scan.

    Parameters
    ----------
    spec : StoreSpec
    queries : numpy.ndarray, shape (n_queries, dims)
        Query vectors (e.g. ``audit.models.load_encoder(...).encode(questions)``,
        or vectors from a hosted model); cast to float32.
    k : int
        Rows per query (≥ 1).
    mode : {"approximate", "exact"}
        ``approximate``: the planner is steered to the metric's HNSW/IVFFlat
        index (``enable_seqscan = off`` in the transaction, as the small test
        tables would otherwise be scanned); with no such index it is an exact
        scan and :attr:`SearchResult.note` says so. ``exact``: ``SET LOCAL
        enable_indexscan / enable_bitmapscan / enable_indexonlyscan = off``.
    ef_search, probes : int, optional
        ``hnsw.ef_search`` / ``ivfflat.probes`` for the transaction; the
        session's defaults otherwise (pgvector: 40 and 1). HNSW returns at
        most ``ef_search`` rows: the note says when queries got fewer than k.
    conn : psycopg.Connection, optional
    iterative_scan : {"off", "relaxed_order", "strict_order"}, optional
        ``hnsw.iterative_scan`` (``ivfflat.iterative_scan``: off or relaxed_order) for the approximate
        search, pgvector ≥ 0.8: the scan goes on past ``ef_search`` until ``k`` rows pass the filters. On
        an older server it is not applied and the note says why (:mod:`.production`).

    The table's index may be on the column or on a cast of it (``(emb::vector(384))``,
    ``(emb::halfvec(384))``): the approximate search then orders by the same expression, the query cast
    the same way, so the planner can use it; the exact search orders by the column itself. With
    :attr:`StoreSpec.filters` both searches keep to the same rows (``WHERE col::text = ANY(…)``).

    Returns
    -------
    SearchResult
        The rows the table's index (or scan) chose, each fetched with its own vector and scored and ordered
        by the one rule (:func:`audit.stores.base.rescore`): canonical cosine distances of unit rows,
        ties by id.

    Raises
    ------
    StoreError
        Bad ``k``/``mode``/shape, query dims not the table's, connection or query failure.
    """
    from psycopg import sql

    q = check_search(queries, k, mode)
    qnorm = np.linalg.norm(q.astype(np.float64), axis=1)
    with _session(spec, conn) as c:
        table = _describe(c, spec)
        V = _vec_expr(spec, table)
        dims = table.declared_dims
        if dims is None:
            r = c.execute(sql.SQL("SELECT {f} FROM {t} WHERE {v} IS NOT NULL LIMIT 1").format(
                f=sql.SQL("vector_dims({})" if table.vector_type == "vector" else "cardinality({})").format(
                    spec._c("vector")), t=spec._t(), v=spec._c("vector"))).fetchone()
            dims = r[0] if r else None
        if dims is not None and dims != q.shape[1]:
            raise StoreError(f"query vectors have {q.shape[1]} dimensions, column {spec.vector_column!r} of "
                             f"{spec.table!r} has {dims}: embed the queries with the table's model")
        from .production import ITERATIVE_SCAN, extension_version, filter_sql, filter_types, unavailable

        indexes = find_indexes(spec, c)
        _, untraced = view_base(c, spec)
        idx = _index_for(indexes, spec.metric, spec.filters)
        ftypes = filter_types(c, spec)
        if idx is not None and idx.cast is None and table.vector_type != "vector":
            idx = None  # an index on a real[] column itself cannot serve <=> (only an expression cast can)
        version = extension_version(c)
        notes = []
        if idx is not None and idx.cast is not None and idx.cast[0] == "halfvec" and unavailable("halfvec", version):
            notes.append(unavailable("halfvec", version))
            idx = None
        switches: dict[str, str] = {}
        if mode == "exact" or idx is None:
            switches = {"enable_indexscan": "off", "enable_bitmapscan": "off", "enable_indexonlyscan": "off"}
            if mode == "approximate":
                notes.append(_no_index_note(indexes, spec.metric, untraced) if table.vector_type == "vector" or indexes
                             else "real[] column: no index on it can serve the distance: approximate equals exact")
        else:
            switches = {"enable_seqscan": "off"}
        if ef_search is not None:
            switches["hnsw.ef_search"] = str(int(ef_search))
        if probes is not None:
            switches["ivfflat.probes"] = str(int(probes))
        if iterative_scan is not None:
            if iterative_scan not in ITERATIVE_SCAN:
                raise StoreError(f"iterative scan {iterative_scan!r} is not one of {', '.join(ITERATIVE_SCAN)}")
            why = unavailable("hnsw.iterative_scan", version)
            if why:
                notes.append(f"{why}: --iterative-scan {iterative_scan} not applied")
            elif mode == "approximate" and idx is not None:
                if idx.method == "ivfflat" and iterative_scan == "strict_order":
                    raise StoreError("ivfflat.iterative_scan takes off or relaxed_order (strict_order is HNSW's)")
                switches[f"{idx.method}.iterative_scan"] = iterative_scan
        approx_index = mode == "approximate" and idx is not None
        if approx_index and idx.cast is not None:  # the index's own expression, and the query cast alike
            from psycopg import sql as _sql

            typ = _sql.SQL(f"{idx.cast[0]}({int(idx.cast[1])})")  # from a whitelist and an int: no user text
            V = _sql.SQL("({}::{})").format(spec._c("vector"), typ)
            qcast = typ
        else:
            qcast = sql.SQL("vector")
        where = sql.SQL("WHERE {v} IS NOT NULL").format(v=spec._c("vector"))
        if table.vector_type == "array":  # a cast of NaN/±Inf to vector fails: those rows cannot be ranked
            where += sql.SQL(" AND NOT EXISTS (SELECT 1 FROM unnest({v}) x WHERE x IS NULL OR x::float8 IN "
                             "('NaN', 'Infinity', '-Infinity'))").format(v=spec._c("vector"))
            notes.append("real[] column: rows holding NaN, ±Inf or NULL elements are left out")
        fsql, fparams = filter_sql(spec.filters, types=ftypes)
        where += fsql
        if spec.filters and approx_index:
            notes.append(f"filtered: {idx.method.upper()} applies the WHERE after its scan"
                         + (" (at most hnsw.ef_search rows reach the filter)" if idx.method == "hnsw"
                            and "hnsw.iterative_scan" not in switches else ""))
        dist = sql.SQL("({v} {op} %(q)s::{t})").format(v=V, op=sql.SQL(spec.operator), t=qcast)
        norm = sql.SQL("vector_norm({v})").format(v=_vec_expr(spec, table))
        order = sql.SQL("ORDER BY d") if approx_index else sql.SQL("ORDER BY d, id")
        # each returned row's own vector, as float4[]: the audit scores the rows it is given (issue 21)
        own = sql.SQL("{v}::real[]").format(v=spec._c("vector"))
        stmt = sql.SQL("SELECT {i}::text AS id, {dist} AS d, {norm}, {x}, {own} FROM {t} {w} {o} LIMIT %(k)s").format(
            i=spec._c("id"), dist=dist, norm=norm, x=spec._c("text"), own=own, t=spec._t(), w=where, o=order)
        ids, ds, cs, texts, ms = [], [], [], [], []
        short = non_unit = 0
        with c.transaction(force_rollback=True):
            for name, value in switches.items():
                c.execute("SELECT set_config(%s, %s, true)", (name, value))
            lit0 = _vector_literal(q[0])
            plan = c.execute(sql.SQL("EXPLAIN (FORMAT JSON) ") + stmt, {"q": lit0, "k": int(k), **fparams}).fetchone()[0]
            settings = dict(switches)
            for name in ("hnsw.ef_search", "ivfflat.probes"):  # read after EXPLAIN: pgvector's GUCs exist once loaded
                if idx is not None and name.split(".")[0] == idx.method and name not in settings:
                    settings[name] = c.execute("SELECT current_setting(%s, true)", (name,)).fetchone()[0]
            if isinstance(plan, str):
                plan = json.loads(plan)
            used = _plan_index(plan)
            if approx_index and used != idx.name:
                notes.append(f"the planner did not use index {idx.name} (plan index: {used})")
            for qi in range(q.shape[0]):
                t0 = time.perf_counter()
                rows = c.execute(stmt, {"q": _vector_literal(q[qi]), "k": int(k), **fparams}).fetchall()
                ms.append((time.perf_counter() - t0) * 1000.0)
                rows.sort(key=lambda r: (r[1], r[0]))  # deterministic ties among the rows returned
                if len(rows) < k:
                    short += 1
                qi_unit = abs(qnorm[qi] - 1.0) <= NORM_TOLERANCE
                conv = []
                for _, d, n, _x, _v in rows:
                    unit = qi_unit and n is not None and abs(n - 1.0) <= NORM_TOLERANCE
                    if spec.metric == "cosine":
                        conv.append(cosine_in_range(float(d)))
                    elif not unit:
                        non_unit += 1
                        conv.append(math.nan)
                    else:
                        conv.append(cosine_in_range(float(d) * float(d) / 2.0 if spec.metric == "l2"
                                                    else 1.0 + float(d)))
                order, canon = rescore(q[qi], [r[0] for r in rows], conv, [r[4] for r in rows])
                ids.append(tuple(rows[o][0] for o in order))
                ds.append(tuple(float(rows[o][1]) for o in order))
                cs.append(tuple(canon[o] for o in order))
                texts.append(tuple(rows[o][3] for o in order))
    if spec.metric == "cosine":
        notes.append("<=> is cosine distance: no conversion; re-computed from the rows' vectors")
    else:
        conv = "d²/2" if spec.metric == "l2" else "1 + (<#>)"
        notes.append(f"cosine distance = {conv}, valid for unit vectors"
                     + (f"; {non_unit} returned rows are not unit length (or the query is not): "
                        "their cosine distance is NaN" if non_unit else ""))
    if short:
        notes.append(f"{short} queries returned fewer than {k} rows"
                     + (" (HNSW returns at most hnsw.ef_search rows)" if approx_index and idx.method == "hnsw"
                        else ""))
    return SearchResult(mode, int(k), spec.metric, used if approx_index else None,
                        tuple(ids), tuple(ds), tuple(cs), tuple(texts), tuple(ms), settings, "; ".join(notes))
