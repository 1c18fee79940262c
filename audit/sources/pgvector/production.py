"""pgvector as teams deploy it: expression indexes, filtered search, the extension's version, dead tuples.

- **Expression indexes** (:func:`key_cast`): ``CREATE INDEX … USING hnsw ((emb::vector(384))
  vector_cosine_ops)`` is the usual index of an untyped ``vector`` or a ``real[]`` column, and
  ``(emb::halfvec(384)) halfvec_cosine_ops`` (pgvector ≥ 0.7) halves its memory. The planner uses
  such an index only for the same expression, so the search casts the column and the query the same
  way. Any other expression is named with the reason the audit cannot rebuild it.
- **Filtered search** (:func:`check_filters`, :func:`filter_sql`): ``--filter COLUMN=VALUE`` keeps each
  search to the rows whose column, in its text form, equals the value (``col::text = ANY(%s)``: values
  of one column OR-ed, columns AND-ed). Values are always bound parameters and columns quoted
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

from ...index.health import OK, WARNING
from .connection import StoreError, _check_ident

__all__ = ["ITERATIVE_SCAN", "NEEDS", "check_filters", "dead_tuples_check", "extension_check", "extension_version",
           "filter_sql", "key_cast", "parse_filter", "unavailable"]

#: What a feature needs: the first pgvector version that has it (pgvector CHANGELOG).
NEEDS = {"hnsw.iterative_scan": (0, 8, 0), "halfvec": (0, 7, 0)}

#: The values of ``hnsw.iterative_scan`` (pgvector 0.8 README, "Iterative Index Scans").
ITERATIVE_SCAN = ("off", "relaxed_order", "strict_order")

_IDENT = r'(?:"(?:[^"]|"")+"|[A-Za-z_][A-Za-z0-9_$]*)'
_CAST = re.compile(rf"\(?\s*(?P<col>{_IDENT})\s*\)?\s*::\s*(?P<type>vector|halfvec)\s*\(\s*(?P<dims>\d+)\s*\)")


def _strip_parens(text: str) -> str:
    t = text.strip()
    while t.startswith("(") and t.endswith(")"):
        depth = 0
        for i, ch in enumerate(t):
            depth += ch == "("
            depth -= ch == ")"
            if depth == 0 and i < len(t) - 1:
                return t  # "(a) + (b)": the outer pair does not enclose everything
        t = t[1:-1].strip()
    return t


def _unquote(ident: str) -> str:
    return ident[1:-1].replace('""', '"') if ident.startswith('"') else ident.lower()


def key_cast(expression: str | None, column: str) -> tuple[tuple[str, int] | None, str]:
    """Whether an index key expression is a cast of ``column`` the audit can query through.

    Parameters
    ----------
    expression : str
        The key as ``pg_get_indexdef(index, 1, true)`` prints it, e.g. ``(emb::vector(384))`` or
        ``((emb)::halfvec(384))``.
    column : str
        The vector column (as given: a name PostgreSQL folds to lower case unless quoted at creation).

    Returns
    -------
    (cast, why)
        ``(("vector" | "halfvec", dims), "")`` for a plain cast of the column; ``(None, reason)`` for an
        expression that mentions the column otherwise (e.g. ``l2_normalize(emb)::vector(384)``, a
        subvector); ``(None, "")`` for an expression of other columns only.
    """
    if not expression:
        return None, ""
    body = _strip_parens(expression)
    m = _CAST.fullmatch(body)
    if m and _unquote(m.group("col")) in (column, column.lower()):
        return (m.group("type"), int(m.group("dims"))), ""
    names = {_unquote(x) for x in re.findall(_IDENT, body)}
    if column in names or column.lower() in names:
        return None, (f"only a cast of the column, ({column}::vector(n)) or ({column}::halfvec(n)), is rebuilt; "
                      "query it with its own expression")
    return None, ""


def parse_filter(text: str) -> tuple[str, str]:
    """``"COLUMN=VALUE"`` → ``(column, value)``; the first ``=`` separates (the value may hold more).

    Raises
    ------
    StoreError
        No ``=``, or an empty column name.
    """
    if not isinstance(text, str) or "=" not in text:
        raise StoreError(f"--filter {text!r}: expected COLUMN=VALUE (e.g. tenant=acme)")
    col, value = text.split("=", 1)
    if not col.strip():
        raise StoreError(f"--filter {text!r}: the column name is empty")
    return col.strip(), value


def check_filters(filters) -> tuple[tuple[str, str], ...]:
    """The filters as a tuple of ``(column, value)`` strings; StoreError naming a bad one.

    A value is compared with the column's text form (``col::text``), so ``42`` matches an integer 42
    and ``true`` a boolean. PostgreSQL text cannot hold NUL, so a value holding one is refused.
    """
    out = []
    for f in filters or ():
        if isinstance(f, str):
            f = parse_filter(f)
        if not (isinstance(f, (tuple, list)) and len(f) == 2):
            raise StoreError(f"a filter is (column, value), got {f!r}")
        col, value = _check_ident("filter column", f[0]), f[1]
        if not isinstance(value, str):
            raise StoreError(f"filter {col}: the value must be text, got {value!r}")
        if "\x00" in value:
            raise StoreError(f"filter {col}: the value holds a NUL character")
        out.append((col, value))
    return tuple(out)


def filter_sql(filters, alias: str | None = None):
    """``(SQL, params)``: `` AND col::text = ANY(%(f0)s) …`` for the filters (empty SQL without any).

    Columns are :class:`psycopg.sql.Identifier`; the values travel as one bound text array per column.
    """
    from psycopg import sql

    by_col: dict[str, list[str]] = {}
    for col, value in filters:
        by_col.setdefault(col, []).append(value)
    parts, params = [], {}
    for i, (col, values) in enumerate(by_col.items()):
        ident = sql.Identifier(alias, col) if alias else sql.Identifier(col)
        parts.append(sql.SQL(" AND {}::text = ANY({})").format(ident, sql.Placeholder(f"f{i}")))
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
    from .health import StoreCheck

    if version is None:
        return StoreCheck("extension", OK, 0, "pgvector is not installed in this database")
    missing = [f for f in NEEDS if unavailable(f, version)]
    detail = f"pgvector {_v(version)}"
    if missing:
        detail += "; unavailable here: " + ", ".join(f"{f} (needs {_v(NEEDS[f])})" for f in missing)
    return StoreCheck("extension", OK, 0, detail)


def dead_tuples_check(conn, spec):
    """The ``dead_tuples`` finding from ``pg_stat_user_tables`` (and the table's autovacuum settings).

    Severity ``warning`` when the dead tuples exceed the point where autovacuum would start,
    ``autovacuum_vacuum_threshold + autovacuum_vacuum_scale_factor × n_live_tup`` (PostgreSQL's
    "Routine Vacuuming": 50 + 0.2 × live by default; a table's own ``reloptions`` win): vacuum has not
    caught up, and the vector index still leads scans to deleted rows. ``rows`` is ``n_dead_tup``.
    The statistics are the server's (a replica keeps its own, near zero) and lag by up to a
    transaction's end.
    """
    from .health import StoreCheck

    row = conn.execute(
        "SELECT s.n_live_tup, s.n_dead_tup, s.last_vacuum, s.last_autovacuum, "
        "coalesce(array_to_string(c.reloptions, ','), ''), current_setting('autovacuum_vacuum_threshold'), "
        "current_setting('autovacuum_vacuum_scale_factor') "
        "FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid WHERE s.relid = to_regclass(%s)",
        (spec._t().as_string(conn),)).fetchone()
    if row is None:
        return StoreCheck("dead_tuples", OK, 0, f"no statistics for {spec.table} (a view or a foreign table)")
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
        return StoreCheck("dead_tuples", WARNING, dead,
                          f"{dead} dead tuples beside {live} live rows ({share:.0%} of the heap; {when}; autovacuum "
                          f"starts at {trigger:.0f}): the vector index still leads scans to deleted rows, so "
                          "approximate lists come back short until VACUUM (report --store measures it)")
    return StoreCheck("dead_tuples", OK, 0, f"{dead} dead tuples beside {live} live rows ({when})")
