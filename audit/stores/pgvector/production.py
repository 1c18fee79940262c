"""pgvector as teams deploy it: expression indexes, filtered search, the extension's version, dead tuples.

- **Expression indexes** (:func:`audit.stores.pgvector.connection.key_cast`): ``CREATE INDEX … USING hnsw ((emb::vector(384))
  vector_cosine_ops)`` is the usual index of an untyped ``vector`` or a ``real[]`` column, and
  ``(emb::halfvec(384)) halfvec_cosine_ops`` (pgvector ≥ 0.7) halves its memory. The planner uses
  such an index only for the same expression, so the search casts the column and the query the same
  way. Any other expression is named with the reason the audit cannot rebuild it.
- **Filtered search** (:func:`audit.stores.filters.check_filters`, :func:`filter_sql`): ``--filter COLUMN=VALUE`` keeps each
  search to the rows whose column equals the value, typed as the column for uuid, text, integer, numeric,
  boolean and date columns (``col = %s::uuid``, as a service binds it: a partial index ``… WHERE collection_id =
  '…'`` is then used), in its text form for any other type (``col::text = ANY(%s)``); values of one column
  OR-ed, columns AND-ed. Values are always bound parameters and columns quoted
  identifiers checked against the table's columns. pgvector's HNSW applies a ``WHERE`` after the index
  scan, so at most ``hnsw.ef_search`` rows reach the filter (pgvector README, "Filtering"); from 0.8,
  ``hnsw.iterative_scan`` scans further.
- **The extension's version** (:func:`extension_version`): ``pg_extension.extversion``; what needs a later
  version (``hnsw.iterative_scan`` 0.8, ``halfvec`` 0.7) is said unavailable instead of failing.
- **Dead tuples** (:func:`dead_tuples_check`): ``pg_stat_user_tables.n_dead_tup``. Deleted or updated rows
  stay in an HNSW/IVFFlat index until ``VACUUM``; the scan still visits them and drops them after, so
  lists come back short.

Everything here only reads: catalog and statistics views, and ``set_config(…, true)`` for the
transaction's own settings.
"""

from __future__ import annotations

import re

from ...health import OK, WARNING, Finding

__all__ = ["ITERATIVE_SCAN", "NEEDS", "TYPED_FILTERS", "dead_tuples_check", "extension_check", "extension_version",
           "filter_sql", "filter_types", "unavailable"]

#: What a feature needs: the first pgvector version that has it (pgvector CHANGELOG).
NEEDS = {"hnsw.iterative_scan": (0, 8, 0), "halfvec": (0, 7, 0)}

#: The values of ``hnsw.iterative_scan`` (pgvector 0.8 README, "Iterative Index Scans").
ITERATIVE_SCAN = ("off", "relaxed_order", "strict_order")

#: Column types a ``--filter`` value is typed as (the parameter cast to the column's own type, as a service's
#: query binds it): equality on them is the column's own, and a partial index's predicate (``collection_id =
#: '…'::uuid``) is then implied by the query's ``WHERE``, so the planner may use that index. Any other type
#: compares in its text form.
TYPED_FILTERS = ("uuid", "text", "character varying", "character", "name", "smallint", "integer", "bigint",
                 "numeric", "boolean", "date")


def filter_types(conn, spec) -> dict[str, str]:
    """The type each filtered column's value is bound as (:data:`TYPED_FILTERS`), or none for text comparison.

    Every value is cast once, read-only, so a value the type refuses is one clear error before any search.

    Raises
    ------
    StoreError
        A value the column's type refuses (``--filter collection_id=abc: collection_id is uuid, and PostgreSQL
        refuses 'abc' as one (…)``).
    """
    from ...stores.base import StoreError

    cols = sorted({col for col, _ in spec.filters})
    if not cols:
        return {}
    rows = conn.execute("SELECT attname, format_type(atttypid, NULL) FROM pg_attribute WHERE attrelid = to_regclass(%s) "
                        "AND attname = ANY(%s) AND attnum > 0 AND NOT attisdropped",
                        (spec._t().as_string(conn), cols)).fetchall()
    types = {n: t for n, t in rows if t in TYPED_FILTERS}
    for col, value in spec.filters:
        t = types.get(col)
        if t is None:
            continue
        try:
            with conn.transaction(force_rollback=True):
                conn.execute(f"SELECT %s::{t}", (value,))  # t is one of TYPED_FILTERS: no user text
        except Exception as e:  # noqa: BLE001 - psycopg's DataError and kin: one line
            msg = " ".join(str(e).split()).split(" LINE ")[0]
            raise StoreError(f"--filter {col}={value}: {col} is {t}, and PostgreSQL refuses {value!r} as one "
                             f"({msg})") from None
    return types


def filter_sql(filters, alias: str | None = None, types=None):
    """``(SQL, params)``: `` AND col = %(f0)s::type …`` for the filters (empty SQL without any).

    A column of :data:`TYPED_FILTERS` (``types``: column → type, :func:`filter_types`) is compared as the
    service compares it, the parameter typed as the column: `` AND col = %(f0)s::uuid`` for one value, ``= ANY(
    %(f0)s::uuid[])`` for several (OR-ed), which a partial index's predicate is implied by. Another column
    compares in its text form, `` AND col::text = ANY(%(f0)s)``. Columns are :class:`psycopg.sql.Identifier`;
    the values travel as bound parameters.
    """
    from psycopg import sql

    types = types or {}
    by_col: dict[str, list[str]] = {}
    for col, value in filters:
        by_col.setdefault(col, []).append(value)
    parts, params = [], {}
    for i, (col, values) in enumerate(by_col.items()):
        ident = sql.Identifier(alias, col) if alias else sql.Identifier(col)
        t = types.get(col)
        if t is None:
            parts.append(sql.SQL(" AND {}::text = ANY({})").format(ident, sql.Placeholder(f"f{i}")))
            params[f"f{i}"] = values
        elif len(values) == 1:
            parts.append(sql.SQL(" AND {} = {}::" + t).format(ident, sql.Placeholder(f"f{i}")))
            params[f"f{i}"] = values[0]
        else:
            parts.append(sql.SQL(" AND {} = ANY({}::" + t + "[])").format(ident, sql.Placeholder(f"f{i}")))
            params[f"f{i}"] = values
    return sql.Composed(parts), params


def extension_version(conn) -> tuple[int, ...] | None:
    """The installed pgvector version as a tuple (``(0, 6, 2)``), or None when ``vector`` is not installed."""
    row = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()
    if row is None or row[0] is None:
        return None
    return tuple(int(x) for x in re.findall(r"\d+", row[0])[:3]) or None


def _v(version) -> str:
    return ".".join(str(x) for x in version) if version else "unknown"


def unavailable(feature: str, version) -> str:
    """"" when ``feature`` (a key of :data:`NEEDS`) exists in ``version``, else one sentence saying why not."""
    need = NEEDS[feature]
    if version is not None and tuple(version) >= need:
        return ""
    return f"{feature} needs pgvector {_v(need)} or later (this server has {_v(version)})"


def extension_check(version):
    """The ``extension`` finding: the version and what it lacks (always ``ok``: an older version is no fault)."""
    if version is None:
        return Finding.of_rows("extension", OK, 0, "pgvector is not installed in this database")
    missing = [f for f in NEEDS if unavailable(f, version)]
    detail = f"pgvector {_v(version)}"
    if missing:
        detail += "; unavailable here: " + ", ".join(f"{f} (needs {_v(NEEDS[f])})" for f in missing)
    return Finding.of_rows("extension", OK, 0, detail)


def dead_tuples_check(conn, spec):
    """The ``dead_tuples`` finding from ``pg_stat_user_tables`` (and the table's autovacuum settings).

    Severity ``warning`` when the dead tuples exceed the point where autovacuum would start,
    ``autovacuum_vacuum_threshold + autovacuum_vacuum_scale_factor × n_live_tup`` (PostgreSQL's
    "Routine Vacuuming": 50 + 0.2 × live by default; a table's own ``reloptions`` win): vacuum has not
    caught up, and the vector index still leads scans to deleted rows. ``rows`` is ``n_dead_tup``.
    The statistics are the server's (a replica keeps its own, near zero) and lag by up to a
    transaction's end.
    """
    row = conn.execute(
        "SELECT s.n_live_tup, s.n_dead_tup, s.last_vacuum, s.last_autovacuum, "
        "coalesce(array_to_string(c.reloptions, ','), ''), current_setting('autovacuum_vacuum_threshold'), "
        "current_setting('autovacuum_vacuum_scale_factor') "
        "FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid WHERE s.relid = to_regclass(%s)",
        (spec._t().as_string(conn),)).fetchone()
    if row is None:
        return Finding.of_rows("dead_tuples", OK, 0, f"no statistics for {spec.table} (a view or a foreign table)")
    live, dead, vac, autovac, relopts, threshold, scale = row
    opts = dict(o.split("=", 1) for o in relopts.split(",") if "=" in o)
    threshold = float(opts.get("autovacuum_vacuum_threshold", threshold))
    scale = float(opts.get("autovacuum_vacuum_scale_factor", scale))
    live, dead = int(live or 0), int(dead or 0)
    trigger = threshold + scale * live
    last = max((t for t in (vac, autovac) if t is not None), default=None)
    when = f"last vacuum {last:%Y-%m-%d %H:%M} UTC" if last is not None else "never vacuumed"
    share = dead / (live + dead) if live + dead else 0.0
    if dead > trigger:
        return Finding.of_rows("dead_tuples", WARNING, dead,
                               f"{dead} dead tuples beside {live} live rows ({share:.0%} of the heap; {when}; autovacuum "
                               f"starts at {trigger:.0f}): the vector index still leads scans to deleted rows, so "
                               "approximate lists come back short until VACUUM (report --store measures it)")
    return Finding.of_rows("dead_tuples", OK, 0, f"{dead} dead tuples beside {live} live rows ({when})")
