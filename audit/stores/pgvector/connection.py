"""A pgvector table as the audit sees it: the store specification, the connection (credentials never
echoed), the table's columns and its approximate indexes.
"""

from __future__ import annotations

import os
import re
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Iterator, Sequence

from ...conninfo import store_label
from ...secrets import redact, redact_uri
from ..base import ENV_URI, StoreError
from ..filters import check_filters, check_name
from ..spec import check_offsets, described, filters_said



OPERATORS = {"cosine": "<=>", "l2": "<->", "ip": "<#>"}


OPCLASS_METRIC = {"vector_cosine_ops": "cosine", "vector_l2_ops": "l2", "vector_ip_ops": "ip",
                  # pgvector 0.7: half-precision vectors, mostly indexed as an expression (emb::halfvec(n))
                  "halfvec_cosine_ops": "cosine", "halfvec_l2_ops": "l2", "halfvec_ip_ops": "ip"}


APPROXIMATE_METHODS = ("hnsw", "ivfflat")




def _one_line(text: str) -> str:
    return " ".join(str(text).split())


@dataclass(frozen=True)
class StoreSpec:
    """Where the vectors live and how to read them.

    Parameters
    ----------
    uri : str or None
        libpq connection string (URL ``postgresql://user:pw@host:port/db`` or
        ``key=value`` form). None or "" → ``$AUDIT_STORE_URI``. Never shown:
        reports name the store by :attr:`where`.
    table : str
        Table name, optionally ``schema.table`` (one dot separates the schema).
    id_column, text_column, vector_column : str
        Chunk id (any type, compared as text), the embedded text, and the
        vector: pgvector ``vector``/``vector(n)`` or ``real[]``/``double precision[]``.
    doc_column : str, optional
        Document id (compared as text with :attr:`audit.ingest.Document.doc_id`).
    start_column, end_column : str, optional
        Character offsets of the chunk's content in the document's canonical
        text (0-based, end exclusive); both or neither, and only with ``doc_column``.
    model_column : str, optional
        Model name or stamp of each row.
    metric : {"cosine", "l2", "ip"}
        The distance the table is indexed for: ``<=>``, ``<->`` or ``<#>``.
    filters : tuple of (str, str)
        ``(column, value)`` pairs every search keeps to (``--filter COLUMN=VALUE``), as a team's
        ``WHERE tenant = …`` does: the value bound as a parameter typed as the column (uuid, text, integers,
        numeric, boolean, date; another type compares in its text form); values of one column are OR-ed,
        columns AND-ed (:mod:`.production`). Health reads the whole table.
    name : str, optional
        The store's configured name (audit.toml ``[stores] NAME``): what :attr:`where` shows.

    Raises
    ------
    StoreError
        No URI anywhere, an empty/over-long/NUL-holding name, an unknown
        metric, offsets without a document column, or one column used for two roles.
    """

    uri: str | None = field(repr=False)
    table: str
    id_column: str
    text_column: str
    vector_column: str
    doc_column: str | None = None
    start_column: str | None = None
    end_column: str | None = None
    model_column: str | None = None
    metric: str = "cosine"
    filters: tuple = ()
    name: str | None = None

    def __post_init__(self) -> None:
        uri = self.uri or os.environ.get(ENV_URI, "")
        if not uri:
            raise StoreError(f"no store connection string: pass --store URI or set ${ENV_URI}")
        object.__setattr__(self, "uri", uri)
        parts = self.table.split(".") if isinstance(self.table, str) else [self.table]
        if len(parts) > 2:
            raise StoreError(f"table {self.table!r}: use TABLE or SCHEMA.TABLE (one dot)")
        for p in parts:
            check_name("table", p)
        for role in ("id_column", "text_column", "vector_column", "doc_column", "start_column", "end_column",
                     "model_column"):
            v = getattr(self, role)
            if v is not None or role in ("id_column", "text_column", "vector_column"):
                check_name(role.replace("_", " "), v)
        metric = str(self.metric).lower()
        if metric not in OPERATORS:
            raise StoreError(f"metric {self.metric!r} is not one of {', '.join(OPERATORS)}")
        object.__setattr__(self, "metric", metric)
        check_offsets(self, "columns")
        object.__setattr__(self, "filters", check_filters(self.filters))
        used = [c for c in self.columns.values()]
        dup = sorted({c for c in used if used.count(c) > 1})
        if dup:
            raise StoreError(f"column {dup[0]!r} is given for two roles")

    @property
    def columns(self) -> dict[str, str]:
        """Role → column name, for the roles given."""
        roles = {"id": self.id_column, "text": self.text_column, "vector": self.vector_column,
                 "doc": self.doc_column, "start": self.start_column, "end": self.end_column,
                 "model": self.model_column}
        return {k: v for k, v in roles.items() if v is not None}

    @property
    def table_parts(self) -> tuple[str, ...]:
        return tuple(self.table.split("."))

    @property
    def operator(self) -> str:
        """The pgvector distance operator of :attr:`metric`."""
        return OPERATORS[self.metric]

    @property
    def redacted_uri(self) -> str:
        """The connection string with its password replaced by ``***``."""
        return redact_uri(self.uri or "")

    @property
    def where(self) -> str:
        """The store for people (:func:`store_label`): ``store NAME`` when configured, else ``host/database``."""
        return store_label(self.uri, self.name)

    @property
    def provenance(self) -> str:
        """One line for reports: table, columns, metric, filters and the store (:attr:`where`, never the user)."""
        return (f"pgvector table {self.table} ({', '.join(f'{k}={v}' for k, v in self.columns.items())}; "
                f"metric {self.metric} {self.operator}{filters_said(self.filters)}) in {self.where}")

    def to_dict(self) -> dict:
        """The spec without the connection string (safe to write to JSON): ``store`` is :attr:`where`."""
        return described(self.where, self.table, self.metric, self.columns, self.filters)

    # SQL pieces ---------------------------------------------------------------

    def _t(self):
        from psycopg import sql

        return sql.Identifier(*self.table_parts)

    def _c(self, role: str):
        from psycopg import sql

        return sql.Identifier(self.columns[role])


def connect(spec: StoreSpec, timeout_s: int = 10):
    """Open an autocommit ``psycopg.Connection`` to the store.

    Parameters
    ----------
    spec : StoreSpec
    timeout_s : int
        libpq ``connect_timeout`` in seconds.

    Returns
    -------
    psycopg.Connection

    Raises
    ------
    StoreError
        psycopg missing, or the connection failed: one line naming the store
        (:attr:`StoreSpec.where`) and the server's reason, never the password.
    """
    try:
        import psycopg
    except ImportError:
        raise StoreError("psycopg is not installed: pip install 'psycopg[binary]' to audit a PostgreSQL store") \
            from None
    try:
        conn = psycopg.connect(spec.uri, connect_timeout=timeout_s, autocommit=True,
                               application_name="retrieval-audit")
    except Exception as e:  # noqa: BLE001 - every failure becomes one redacted line
        msg = _one_line(redact(str(e), spec.uri))
        raise StoreError(f"cannot connect to {spec.where}: {msg}") from None
    try:  # an audit only reads: the server refuses any write of this session, even one the role may do
        conn.execute("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")
    except Exception as e:  # noqa: BLE001
        conn.close()
        raise StoreError(f"cannot make the session read-only on {spec.where}: "
                         f"{_one_line(redact(str(e), spec.uri))}") from None
    return conn


@contextmanager
def _session(spec: StoreSpec, conn) -> Iterator:
    """Yield ``conn`` or a fresh connection (closed afterwards); query errors → StoreError."""
    own = conn is None
    if own:
        conn = connect(spec)
    try:
        yield conn
    except StoreError:
        raise
    except Exception as e:  # noqa: BLE001
        import psycopg

        if not isinstance(e, psycopg.Error):
            raise
        raise StoreError(f"query on {spec.table} in {spec.where} failed: "
                         f"{_one_line(redact(str(e), spec.uri))}") from None
    finally:
        if own:
            conn.close()


@dataclass(frozen=True)
class _Table:
    columns: dict  # name -> formatted type
    vector_type: str  # "vector" or "array"
    declared_dims: int | None


def _describe(conn, spec: StoreSpec) -> _Table:
    qualified = spec._t().as_string(conn)
    row = conn.execute("SELECT to_regclass(%s)::oid", (qualified,)).fetchone()
    if row is None or row[0] is None:
        raise StoreError(f"table {spec.table!r} does not exist in {spec.where} (or is not visible to this user)")
    cols = dict(conn.execute(
        "SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute "
        "WHERE attrelid = %s AND attnum > 0 AND NOT attisdropped ORDER BY attnum", (row[0],)).fetchall())
    for role, name in spec.columns.items():
        if name not in cols:
            raise StoreError(f"table {spec.table!r} has no column {name!r} (for {role}); "
                             f"its columns: {', '.join(cols)}")
    for name, _ in spec.filters:
        if name not in cols:
            raise StoreError(f"--filter {name}=…: table {spec.table!r} has no column {name!r}; "
                             f"its columns: {', '.join(cols)}")
    vt = cols[spec.vector_column]
    m = re.fullmatch(r"vector(?:\((\d+)\))?", vt)
    if m:
        return _Table(cols, "vector", int(m.group(1)) if m.group(1) else None)
    if vt in ("real[]", "double precision[]"):
        return _Table(cols, "array", None)
    raise StoreError(f"column {spec.vector_column!r} of {spec.table!r} is {vt}, not a pgvector vector or real[]")


def _vec_expr(spec: StoreSpec, table: _Table):
    """The vector column as a pgvector ``vector`` expression."""
    from psycopg import sql

    return spec._c("vector") if table.vector_type == "vector" else sql.SQL("{}::vector").format(spec._c("vector"))


@dataclass(frozen=True)
class IndexInfo:
    """An approximate index on the vector column, or on an expression of it.

    Attributes
    ----------
    name : str
    method : {"hnsw", "ivfflat"}
    metric : str or None
        ``cosine``/``l2``/``ip`` from the operator class, None for another class.
    opclass : str
    options : str
        Build parameters (``m=16,ef_construction=64`` or ``lists=100``), "" for defaults.
    definition : str
        ``pg_get_indexdef``.
    expression : str or None
        The index key when it is an expression (``(emb)::vector(384)``), None for the column itself.
    cast : (str, int) or None
        For an expression the audit can rebuild, a cast of the vector column: the type (``vector`` or
        ``halfvec``) and its dimension; the search casts the column and the query the same way, so the
        planner matches the index (:func:`key_cast`).
    unusable : str
        Why the audit cannot query through this index ("" when it can): an expression other than a cast.
    predicate : str
        A partial index's ``WHERE`` (``pg_get_expr(indpred)``, e.g. ``(collection_id =
        '2f0c…'::uuid)``), "" for a whole-table index: the planner uses it only for a query whose ``WHERE``
        implies it (the matching ``--filter``).
    via : str
        The base table the index is on when the audited relation is a view of it ("" otherwise).
    """

    name: str
    method: str
    metric: str | None
    opclass: str
    options: str
    definition: str
    expression: str | None = None
    cast: tuple | None = None
    unusable: str = ""
    predicate: str = ""
    via: str = ""


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


def view_base(c, spec: StoreSpec) -> tuple[str | None, str]:
    """When the audited relation is a view: ``(its base table, "")``, or ``(None, why it cannot be traced)``;
    ``(None, "")`` for a table.

    A view granted to the auditor instead of its table (``CREATE VIEW chunks AS SELECT … FROM
    langchain_pg_embedding WHERE …``) has no index of its own; the planner inlines it and uses the base
    table's. The base is read from the view's rewrite rule (``pg_rewrite`` → ``pg_depend``: catalogs every role
    may read, no privilege on the base table needed); it is traced when the view reads exactly one table that
    has a column of the vector column's name.
    """
    row = c.execute("SELECT c.oid, c.relkind FROM pg_class c WHERE c.oid = to_regclass(%s)",
                    (spec._t().as_string(c),)).fetchone()
    if row is None or row[1] != "v":
        return None, ""
    bases = c.execute(
        "SELECT DISTINCT d.refobjid::regclass::text, b.relkind FROM pg_rewrite r "
        "JOIN pg_depend d ON d.classid = 'pg_rewrite'::regclass AND d.objid = r.oid "
        "AND d.refclassid = 'pg_class'::regclass AND d.refobjid <> r.ev_class "
        "JOIN pg_class b ON b.oid = d.refobjid WHERE r.ev_class = %s AND b.relkind IN ('r', 'p', 'm', 'v') "
        "ORDER BY 1", (row[0],)).fetchall()
    if len(bases) != 1:
        return None, (f"view {spec.table!r} reads {len(bases)} relations ({', '.join(b for b, _ in bases) or 'none'}): "
                      "its vector column cannot be traced to one table's index")
    base, kind = bases[0]
    if kind == "v":
        return None, f"view {spec.table!r} reads another view ({base}): only a view of a table is traced"
    has = c.execute("SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass(%s) AND attname = %s AND attnum > 0 "
                    "AND NOT attisdropped", (base, spec.vector_column)).fetchone()
    if has is None:
        return None, (f"view {spec.table!r}: its base table {base} has no column {spec.vector_column!r} (renamed in "
                      "the view?): its index cannot be traced")
    return base, ""


def find_indexes(spec: StoreSpec, conn=None) -> tuple[IndexInfo, ...]:
    """Approximate (HNSW / IVFFlat) indexes whose first key is the vector column or an expression of it.

    Read from the catalogs (``pg_index``, ``pg_am``, ``pg_opclass``; an expression key from
    ``pg_get_indexdef(index, 1, true)``, a partial index's predicate from ``pg_get_expr(indpred, indrelid)``),
    sorted by name. An expression index (``USING hnsw ((emb::vector(384)) vector_cosine_ops)``) is kept when its
    key mentions the vector column; when it is not a plain cast of it, :attr:`IndexInfo.unusable` says why. For
    a view, the indexes of its base table (:func:`view_base`, :attr:`IndexInfo.via`).

    Raises
    ------
    StoreError
        Connection or catalog query failed, or the table/column does not exist.
    """
    with _session(spec, conn) as c:
        _describe(c, spec)
        base, _ = view_base(c, spec)
        rows = c.execute(
            "SELECT i.relname, am.amname, opc.opcname, coalesce(array_to_string(i.reloptions, ','), ''), "
            "pg_get_indexdef(i.oid), a.attname, pg_get_indexdef(i.oid, 1, true), "
            "coalesce(pg_get_expr(x.indpred, x.indrelid, true), '') "
            "FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_am am ON am.oid = i.relam "
            "JOIN pg_opclass opc ON opc.oid = x.indclass[0] "
            "LEFT JOIN pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = x.indkey[0] AND x.indkey[0] <> 0 "
            "WHERE x.indrelid = to_regclass(%s) AND am.amname = ANY(%s) ORDER BY i.relname",
            (base or spec._t().as_string(c), list(APPROXIMATE_METHODS))).fetchall()
    out = []
    via = base or ""
    for n, m, o, opt, d, col, key, pred in rows:
        if col is not None:
            if col == spec.vector_column:
                out.append(IndexInfo(n, m, OPCLASS_METRIC.get(o), o, opt, d, predicate=pred, via=via))
            continue
        cast, why = key_cast(key, spec.vector_column)
        if cast is None and not why:
            continue  # an expression of another column
        out.append(IndexInfo(n, m, OPCLASS_METRIC.get(o), o, opt, d, key, cast, why, pred, via))
    return tuple(out)


def _index_for(indexes: Sequence[IndexInfo], metric: str, filters: Sequence = ()) -> IndexInfo | None:
    """The index a search of ``metric`` goes through: with ``filters``, the partial index whose predicate names
    every filtered column and value (LangChain's one index per collection); else a whole-table one; else None
    (a partial index the filters do not match is not one the planner may use)."""
    usable = [i for i in indexes if i.metric == metric and not i.unusable]
    for i in usable:  # the planner confirms the choice (search: "the planner did not use index …" otherwise)
        if i.predicate and filters and all(col in i.predicate and value in i.predicate for col, value in filters):
            return i
    whole = [i for i in usable if not i.predicate]
    return whole[0] if whole else None


def _no_index_note(indexes: Sequence[IndexInfo], metric: str, untraced: str = "") -> str:
    if untraced:
        return f"{untraced}: approximate equals exact"
    partial = [i for i in indexes if i.metric == metric and i.predicate and not i.unusable]
    if partial:
        shown = "; ".join(f"{i.name} WHERE {i.predicate}" for i in partial[:3])
        return (f"only partial indexes for metric {metric} ({shown}): give the --filter its predicate holds, so "
                "the search keeps to the rows the index covers: approximate equals exact")
    if not indexes:
        return "no approximate index: approximate equals exact"
    unusable = [i for i in indexes if i.metric == metric and i.unusable]
    if unusable:
        i = unusable[0]
        return (f"index {i.name} ({i.method}) is on the expression {i.expression}, which the audit cannot query "
                f"through ({i.unusable}): approximate equals exact")
    others = ", ".join(f"{i.name} ({i.method}, {i.metric or i.opclass})" for i in indexes)
    return f"no approximate index for metric {metric} (the table has {others}): approximate equals exact"
