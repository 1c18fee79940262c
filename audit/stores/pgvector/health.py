"""Health of a pgvector table computed in the database with SQL aggregates (never fetching every vector)."""

from __future__ import annotations

import time

from ...health import NORM_TOLERANCE, OK, UNHEALTHY, WARNING, Finding, HealthReport, majority, store_report
from ...health.rows import missing_documents
from .connection import (
    StoreSpec,
    _describe,
    _index_for,
    _no_index_note,
    _session,
    find_indexes,
)

_EXAMPLES = 20


def check_health(spec: StoreSpec, corpus=None, model_dims: int | None = None, model_name: str | None = None,
                 conn=None) -> HealthReport:
    """Check a pgvector table with SQL aggregates (no vector leaves the database).

    Parameters
    ----------
    spec : StoreSpec
    corpus : audit.ingest.Corpus, optional
        The documents as they are now: enables ``missing_documents`` (needs
        ``doc_column``) and ``text_mismatch`` (needs the offset columns too).
    model_dims : int, optional
        The model's dimension: enables ``model_dims`` (every vector has it).
    model_name : str, optional
        Only named in the ``model_dims`` message.
    conn : psycopg.Connection, optional
        Reuse a connection; by default one is opened and closed.

    Returns
    -------
    HealthReport
        ``engine`` ``pgvector``; every finding counts rows and names up to 20 of them. Unhealthy: an empty table, NULL or non-finite vectors, more than one
        dimension or one not the model's, non-unit norms (``|‖v‖ − 1| > 1e-4``,
        the cosine conversions of L2/IP assume unit length), empty texts,
        duplicate ids, more than one model stamp, rows of missing documents,
        texts that no longer end with their source slice. Warning: duplicate
        texts. ``text_mismatch`` compares the *end* of the stored text with
        ``doc.text[start:end]`` because the embedded text may carry a
        contextual header before the content (``audit.chunking.Chunk.text``).

    Raises
    ------
    StoreError
        Connection or query failed, table or a column missing, or the vector
        column is neither ``vector`` nor a float array.
    """
    from psycopg import sql

    t0 = time.perf_counter()
    checks: list[Finding] = []
    not_checked: list[str] = []
    T = spec._t()
    with _session(spec, conn) as c:
        table = _describe(c, spec)
        indexes = find_indexes(spec, c)
        V = spec._c("vector")
        # One scan: per dimension, rows, non-finite, off-unit norms, min/max norm.
        if table.vector_type == "vector":
            q = sql.SQL(
                "SELECT d, count(*), 0, count(*) FILTER (WHERE abs(norm - 1) > %(tol)s), min(norm), max(norm) "
                "FROM (SELECT vector_dims({v}) AS d, vector_norm({v}) AS norm FROM {t}) s GROUP BY 1").format(v=V, t=T)
        else:
            q = sql.SQL(
                "SELECT d, count(*), count(*) FILTER (WHERE nf), "
                "count(*) FILTER (WHERE NOT nf AND abs(norm - 1) > %(tol)s), "
                "min(norm) FILTER (WHERE NOT nf), max(norm) FILTER (WHERE NOT nf) FROM ("
                "SELECT cardinality({v}) AS d, "
                "coalesce((SELECT bool_or(x IS NULL OR x::float8 IN ('NaN', 'Infinity', '-Infinity')) "
                "FROM unnest({v}) x), false) AS nf, "
                "(SELECT sqrt(sum(x::float8 * x::float8)) FROM unnest({v}) x) AS norm FROM {t}) s "
                "GROUP BY 1").format(v=V, t=T)
        groups = c.execute(q, {"tol": NORM_TOLERANCE}).fetchall()
        n_rows = sum(g[1] for g in groups)
        nulls = sum(g[1] for g in groups if g[0] is None)
        present = [g for g in groups if g[0] is not None]
        checks.append(Finding.of_rows("rows", UNHEALTHY if n_rows == 0 else OK, n_rows,
                                      "the table is empty" if n_rows == 0 else f"{n_rows} rows"))

        def ids_where(cond: sql.Composable, params=None) -> tuple[str, ...]:
            r = c.execute(sql.SQL("SELECT {i}::text FROM {t} WHERE {w} ORDER BY 1 LIMIT {n}").format(
                i=spec._c("id"), t=T, w=cond, n=sql.Literal(_EXAMPLES)), params).fetchall()
            return tuple(x[0] for x in r)

        checks.append(Finding.of_rows("null_vectors", UNHEALTHY if nulls else OK, nulls,
                                      f"{nulls} rows have no vector" if nulls else "no NULL vector",
                                      examples=ids_where(sql.SQL("{} IS NULL").format(V)) if nulls else ()))
        if table.vector_type == "vector":
            checks.append(Finding.of_rows("non_finite", OK, 0, "not applicable: pgvector's vector type refuses NaN "
                                          "and ±Inf on insert"))
        else:
            nf = sum(g[2] for g in present)
            ex = ()
            if nf:
                ex = ids_where(sql.SQL("EXISTS (SELECT 1 FROM unnest({v}) x WHERE x IS NULL OR "
                                       "x::float8 IN ('NaN', 'Infinity', '-Infinity'))").format(v=V))
            checks.append(Finding.of_rows("non_finite", UNHEALTHY if nf else OK, nf,
                                          f"{nf} vectors hold NaN, ±Inf or NULL elements" if nf
                                          else "every element finite", examples=ex))
        hist = tuple(sorted(((str(g[0]), g[1]) for g in present), key=lambda vc: (-vc[1], int(vc[0]))))
        if len(present) > 1:
            major = majority([(g[0], g[1]) for g in present])
            off = sum(g[1] for g in present if g[0] != major[0])
            dim_fn = sql.SQL("vector_dims({})" if table.vector_type == "vector" else "cardinality({})").format(V)
            ex = ids_where(sql.SQL("{f} <> %s").format(f=dim_fn), (major[0],))
            checks.append(Finding.of_rows("dims", UNHEALTHY, off, f"{len(present)} dimensions: "
                                          + ", ".join(f"{d} ({n} rows)" for d, n in hist)
                                          + f"; {off} rows differ from the majority {major[0]}", hist, ex))
        else:
            checks.append(Finding.of_rows("dims", OK, 0, f"every vector has {hist[0][0]} dimensions" if hist
                                          else "no vector", hist))
        if model_dims is not None:
            off = sum(g[1] for g in present if g[0] != model_dims)
            who = f"model {model_name}" if model_name else "the model"
            checks.append(Finding.of_rows("model_dims", UNHEALTHY if off else OK, off,
                                          f"{off} vectors do not have the {model_dims} dimensions of {who}" if off
                                          else f"every vector has the {model_dims} dimensions of {who}", hist))
        off_unit = sum(g[3] for g in present)
        norms = [x for g in present for x in (g[4], g[5]) if x is not None]
        rng = f" (norms {min(norms):.6g} … {max(norms):.6g})" if norms else ""
        ex = ()
        if off_unit:
            if table.vector_type == "vector":
                cond = sql.SQL("abs(vector_norm({v}) - 1) > %s").format(v=V)
            else:  # PostgreSQL orders NaN above every number: keep the non-finite rows out of this list
                cond = sql.SQL("NOT EXISTS (SELECT 1 FROM unnest({v}) x WHERE x IS NULL OR x::float8 IN "
                               "('NaN', 'Infinity', '-Infinity')) AND "
                               "abs((SELECT sqrt(sum(x::float8 * x::float8)) FROM unnest({v}) x) - 1) > %s").format(v=V)
            ex = ids_where(cond, (NORM_TOLERANCE,))
        checks.append(Finding.of_rows("norms", UNHEALTHY if off_unit else OK, off_unit,
                                      (f"{off_unit} vectors are not unit length (|norm − 1| > {NORM_TOLERANCE:g}){rng}: "
                                  "L2 and inner-product distances are not cosine distances for them") if off_unit
                                      else f"every vector unit length (|norm − 1| ≤ {NORM_TOLERANCE:g}){rng}", (), ex))

        I, X = spec._c("id"), spec._c("text")
        dup_ids, empty = c.execute(sql.SQL(
            "SELECT count(*) - count(DISTINCT {i}), count(*) FILTER (WHERE {x} IS NULL OR btrim({x}) = '') "
            "FROM {t}").format(i=I, x=X, t=T)).fetchone()
        checks.append(Finding.of_rows("empty_texts", UNHEALTHY if empty else OK, empty,
                                      f"{empty} rows have an empty or NULL text" if empty else "no empty text",
                                      examples=ids_where(sql.SQL("{x} IS NULL OR btrim({x}) = ''").format(x=X))
                                      if empty else ()))
        checks.append(Finding.of_rows("duplicate_ids", UNHEALTHY if dup_ids else OK, dup_ids,
                                      f"{dup_ids} rows repeat an id already used (results would be ambiguous)" if dup_ids
                                      else "every id unique"))
        groups_n, dup_rows = c.execute(sql.SQL(
            "SELECT count(*), coalesce(sum(n), 0) FROM (SELECT count(*) AS n FROM {t} WHERE {x} IS NOT NULL "
            "GROUP BY {x} HAVING count(*) > 1) s").format(t=T, x=X)).fetchone()
        dup_rows = int(dup_rows)
        ex = ()
        if dup_rows:
            ex = ids_where(sql.SQL("{x} IN (SELECT {x} FROM {t} GROUP BY {x} HAVING count(*) > 1)").format(x=X, t=T))
        checks.append(Finding.of_rows("duplicate_texts", WARNING if dup_rows else OK, dup_rows,
                                      f"{dup_rows} rows share their text with another row ({groups_n} texts)" if dup_rows
                                      else "no duplicate text", (), ex))

        if spec.model_column:
            M = spec._c("model")
            mh = c.execute(sql.SQL("SELECT {m}::text, count(*) FROM {t} GROUP BY 1").format(m=M, t=T)).fetchall()
            mh = sorted(mh, key=lambda vc: (-vc[1], "" if vc[0] is None else vc[0]))
            br = tuple(("(null)" if m is None else m, n) for m, n in mh)
            if len(mh) > 1:
                major = majority(mh)
                off = n_rows - major[1]
                ex = ids_where(sql.SQL("{m}::text IS DISTINCT FROM %s").format(m=M), (major[0],))
                checks.append(Finding.of_rows("models", UNHEALTHY, off, f"{len(mh)} model stamps: "
                                              + ", ".join(f"{m} ({n} rows)" for m, n in br)
                                              + f"; {off} rows differ from the majority", br, ex))
            else:
                checks.append(Finding.of_rows("models", OK, 0, f"one model stamp: {br[0][0]}" if br else "no row", br))
        else:
            not_checked.append("models: no model column given")

        if corpus is not None and spec.doc_column:
            checks.extend(_document_checks(c, spec, corpus, n_rows))
        elif corpus is None:
            not_checked.append("missing_documents, text_mismatch: no corpus given")
        else:
            not_checked.append("missing_documents, text_mismatch: no document column given")
        if corpus is not None and spec.doc_column and not spec.start_column:
            not_checked.append("text_mismatch: no offset columns given")

        idx = _index_for(indexes, spec.metric, spec.filters)
        opts = f", {idx.options}" if idx and idx.options else ""
        on = f" on {idx.expression}" if idx and idx.expression else ""
        where = (f" WHERE {idx.predicate}" if idx and idx.predicate else "") + (
            f" of base table {idx.via} (through view {spec.table})" if idx and idx.via else "")
        from .connection import view_base

        checks.append(Finding.of_rows("approximate_index", OK, 0,
                                      f"{idx.method} index {idx.name}{on} ({idx.opclass}{opts}){where}" if idx
                                      else _no_index_note(indexes, spec.metric, view_base(c, spec)[1])))
        from .production import dead_tuples_check, extension_check, extension_version

        checks.append(extension_check(extension_version(c)))
        checks.append(dead_tuples_check(c, spec))
    return store_report("pgvector", spec.to_dict(), n_rows, table.vector_type, checks, indexes, not_checked,
                        time.perf_counter() - t0)


def _document_checks(c, spec: StoreSpec, corpus, n_rows: int) -> list[Finding]:
    """``missing_documents`` and ``text_mismatch`` against the corpus sent as two bound arrays.

    The documents travel as parameters (``unnest(%(ids)s::text[], %(bodies)s::text[])`` in a ``WITH``):
    nothing is created on the server, so the checks run as a read-only role or on a replica.
    """
    from psycopg import sql

    T, D, I, X = spec._t(), spec._c("doc"), spec._c("id"), spec._c("text")
    out = []
    docs = {"ids": [d.doc_id for d in corpus.documents],
            "bodies": [d.text.replace("\x00", "") for d in corpus.documents]}
    audit_docs = sql.SQL("WITH audit_docs (doc_id, body) AS (SELECT * FROM unnest(%(ids)s::text[], %(bodies)s::text[])) ")
    with c.transaction(force_rollback=True):
        # a null document stays None (rows that name no document are counted apart, never an example)
        miss = c.execute(audit_docs + sql.SQL(
            "SELECT t.{d}::text, count(*) FROM {t} t LEFT JOIN audit_docs a "
            "ON a.doc_id = t.{d}::text WHERE a.doc_id IS NULL GROUP BY 1").format(d=D, t=T), docs).fetchall()
        out.append(missing_documents(miss, corpus.name, _EXAMPLES))
        if spec.start_column:
            S, E = spec._c("start"), spec._c("end")
            # CASE first: substr() raises on a negative length, so bad offsets never reach it.
            bad = sql.SQL(
                "CASE WHEN t.{s} IS NULL OR t.{e} IS NULL OR t.{s} < 0 OR t.{e} < t.{s} OR t.{e} > length(a.body) "
                "OR t.{x} IS NULL THEN true ELSE right(t.{x}, (t.{e} - t.{s})::int) "
                "IS DISTINCT FROM substr(a.body, (t.{s} + 1)::int, (t.{e} - t.{s})::int) END").format(s=S, e=E, x=X)
            base = sql.SQL("FROM {t} t JOIN audit_docs a ON a.doc_id = t.{d}::text WHERE ").format(t=T, d=D) + bad
            n_bad = c.execute(audit_docs + sql.SQL("SELECT count(*) ") + base, docs).fetchone()[0]
            ex = tuple(r[0] for r in c.execute(
                audit_docs + sql.SQL("SELECT t.{i}::text ").format(i=I) + base
                + sql.SQL(" ORDER BY 1 LIMIT {n}").format(n=sql.Literal(_EXAMPLES)), docs).fetchall()) if n_bad else ()
            out.append(Finding.of_rows("text_mismatch", UNHEALTHY if n_bad else OK, n_bad,
                                       f"{n_bad} rows' text no longer ends with doc.text[start:end] (or the offsets "
                                       "fall outside the document)" if n_bad
                                       else "every row's text ends with its source slice doc.text[start:end]", (), ex))
    return out
