"""Audit a live PostgreSQL + pgvector table where it lives.

Three things a platform team needs after an upgrade, without copying the
table into Python:

- **Health** (:func:`check_health`): row count, NULL vectors, non-finite
  values (``real[]`` columns only: pgvector refuses NaN and ±Inf on insert),
  dimensions (``vector_dims``), norms (``vector_norm``) against unit length
  (``|norm − 1| > 1e-4``, :data:`audit.health.NORM_TOLERANCE`), empty texts,
  duplicate ids and texts, rows per model stamp, and, given the corpus, rows
  whose document no longer exists or whose text no longer ends with
  ``doc.text[start:end]``. All computed with SQL aggregates; only counts and
  small histograms travel.
- **Retrieval through the table's own index** (:func:`search`): top-k through
  the approximate index (HNSW or IVFFlat, with ``hnsw.ef_search`` /
  ``ivfflat.probes``) and through an exact scan (index scans disabled in the
  transaction), with the distance operator of the metric (``<=>`` cosine,
  ``<->`` L2, ``<#>`` negative inner product) converted to cosine distance.
- **Approximate against exact** (:func:`compare_retrieval`): per k, needle
  recall both ways, the overlap of the two top-k lists and the queries whose
  needle the approximate index loses.

Identifiers given by the user are always quoted with
``psycopg.sql.Identifier``; values are always bound parameters. Connection
strings are never echoed: every message and provenance string goes through
:func:`redact`.

Operators and functions: pgvector README (``<->``, ``<#>``, ``<=>``,
``vector_dims``, ``vector_norm``, ``hnsw.ef_search``, ``ivfflat.probes``).
"""

from __future__ import annotations

import json
import math
import os
import re
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Collection, Iterator, Sequence
from urllib.parse import quote

import numpy as np

from ..index.health import NORM_TOLERANCE, OK, UNHEALTHY, WARNING

__all__ = ["ENV_URI", "IndexInfo", "KComparison", "OPERATORS", "RetrievalComparison", "SearchResult", "StoreCheck",
           "StoreError", "StoreHealth", "StoreSpec", "check_health", "compare_retrieval", "connect", "find_indexes",
           "redact", "redact_uri", "relevant_from_needles", "search"]

ENV_URI = "AUDIT_STORE_URI"
OPERATORS = {"cosine": "<=>", "l2": "<->", "ip": "<#>"}
OPCLASS_METRIC = {"vector_cosine_ops": "cosine", "vector_l2_ops": "l2", "vector_ip_ops": "ip"}
APPROXIMATE_METHODS = ("hnsw", "ivfflat")
_MAX_IDENT_BYTES = 63  # PostgreSQL NAMEDATALEN - 1: longer names are silently truncated by the server
_EXAMPLES = 20


class StoreError(ValueError):
    """The store cannot be used: bad option, failed connection or query. One line, never a password."""


# --------------------------------------------------------------------------- redaction

_URL_PASSWORD = re.compile(r"(://[^:@/?#\s]*):([^@/\s]*)@")
_KW_PASSWORD = re.compile(r"(?i)(\bpassword\s*=\s*)('(?:[^'\\]|\\.)*'|[^&\s]+)")


def _password_of(uri: str | None) -> str:
    if not uri:
        return ""
    try:
        from psycopg.conninfo import conninfo_to_dict

        return str(conninfo_to_dict(uri).get("password") or "")
    except Exception:  # noqa: BLE001 - a malformed URI has no parseable password; the regexes still apply
        return ""


def redact(text: str, uri: str | None = None) -> str:
    """``text`` with every credential replaced by ``***``.

    Removes the password of URL forms (``postgresql://user:***@host/db``),
    ``password=…`` in query strings and keyword/value connection strings,
    and every literal occurrence (plain or percent-encoded) of the password
    parsed from ``uri``.

    Parameters
    ----------
    text : str
        A message or connection string.
    uri : str, optional
        The connection string whose password must not appear.

    Returns
    -------
    str
    """
    out = _URL_PASSWORD.sub(r"\1:***@", text)
    out = _KW_PASSWORD.sub(r"\1***", out)
    pw = _password_of(uri) or _password_of(text if "://" in text or "=" in text else None)
    for form in {pw, quote(pw, safe="")} - {""}:
        out = out.replace(form, "***")
    return out


def redact_uri(uri: str) -> str:
    """The connection string with its password replaced by ``***`` (``postgresql://user:***@host/db``)."""
    return redact(uri, uri)


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


# --------------------------------------------------------------------------- the table


def _check_ident(what: str, value) -> str:
    if not isinstance(value, str) or not value.strip():
        raise StoreError(f"{what} must be a non-empty name, got {value!r}")
    if "\x00" in value:
        raise StoreError(f"{what} {value!r} contains a NUL character")
    if len(value.encode("utf-8")) > _MAX_IDENT_BYTES:
        raise StoreError(f"{what} {value[:20]!r}… is longer than PostgreSQL's {_MAX_IDENT_BYTES}-byte limit")
    return value


@dataclass(frozen=True)
class StoreSpec:
    """Where the vectors live and how to read them.

    Parameters
    ----------
    uri : str or None
        libpq connection string (URL ``postgresql://user:pw@host:port/db`` or
        ``key=value`` form). None or "" → ``$AUDIT_STORE_URI``. Never shown:
        use :attr:`redacted_uri`.
    table : str
        Table name, optionally ``schema.table`` (one dot separates the schema).
    id_column, text_column, vector_column : str
        Chunk id (any type, compared as text), the embedded text, and the
        vector: pgvector ``vector``/``vector(n)`` or ``real[]``/``double precision[]``.
    doc_column : str, optional
        Document id (compared as text with :attr:`audit.corpus.Document.doc_id`).
    start_column, end_column : str, optional
        Character offsets of the chunk's content in the document's canonical
        text (0-based, end exclusive); both or neither, and only with ``doc_column``.
    model_column : str, optional
        Model name or stamp of each row.
    metric : {"cosine", "l2", "ip"}
        The distance the table is indexed for: ``<=>``, ``<->`` or ``<#>``.

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

    def __post_init__(self) -> None:
        uri = self.uri or os.environ.get(ENV_URI, "")
        if not uri:
            raise StoreError(f"no store connection string: pass --store URI or set ${ENV_URI}")
        object.__setattr__(self, "uri", uri)
        parts = self.table.split(".") if isinstance(self.table, str) else [self.table]
        if len(parts) > 2:
            raise StoreError(f"table {self.table!r}: use TABLE or SCHEMA.TABLE (one dot)")
        for p in parts:
            _check_ident("table", p)
        for role in ("id_column", "text_column", "vector_column", "doc_column", "start_column", "end_column",
                     "model_column"):
            v = getattr(self, role)
            if v is not None or role in ("id_column", "text_column", "vector_column"):
                _check_ident(role.replace("_", " "), v)
        metric = str(self.metric).lower()
        if metric not in OPERATORS:
            raise StoreError(f"metric {self.metric!r} is not one of {', '.join(OPERATORS)}")
        object.__setattr__(self, "metric", metric)
        if (self.start_column is None) != (self.end_column is None):
            raise StoreError("give both the start and the end offset columns, or neither")
        if self.start_column is not None and self.doc_column is None:
            raise StoreError("offset columns need the document column (doc_column) too")
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
    def provenance(self) -> str:
        """One line for reports: table, columns, metric and redacted store."""
        return (f"pgvector table {self.table} ({', '.join(f'{k}={v}' for k, v in self.columns.items())}; "
                f"metric {self.metric} {self.operator}) in {self.redacted_uri}")

    def to_dict(self) -> dict:
        """The spec with the URI redacted (safe to write to JSON)."""
        return {"store": self.redacted_uri, "table": self.table, "metric": self.metric,
                "columns": dict(self.columns)}

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
        psycopg missing, or the connection failed: one line naming the redacted
        store and the server's reason, never the password.
    """
    try:
        import psycopg
    except ImportError:
        raise StoreError("psycopg is not installed: pip install 'psycopg[binary]' to audit a PostgreSQL store") \
            from None
    try:
        return psycopg.connect(spec.uri, connect_timeout=timeout_s, autocommit=True,
                               application_name="retrieval-audit")
    except Exception as e:  # noqa: BLE001 - every failure becomes one redacted line
        msg = _one_line(redact(str(e), spec.uri))
        raise StoreError(f"cannot connect to {spec.redacted_uri}: {msg}") from None


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
        raise StoreError(f"query on {spec.table} in {spec.redacted_uri} failed: "
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
        raise StoreError(f"table {spec.table!r} does not exist in {spec.redacted_uri} (or is not visible to this user)")
    cols = dict(conn.execute(
        "SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute "
        "WHERE attrelid = %s AND attnum > 0 AND NOT attisdropped ORDER BY attnum", (row[0],)).fetchall())
    for role, name in spec.columns.items():
        if name not in cols:
            raise StoreError(f"table {spec.table!r} has no column {name!r} (for {role}); "
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


# --------------------------------------------------------------------------- indexes


@dataclass(frozen=True)
class IndexInfo:
    """An approximate index on the vector column.

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
    """

    name: str
    method: str
    metric: str | None
    opclass: str
    options: str
    definition: str


def find_indexes(spec: StoreSpec, conn=None) -> tuple[IndexInfo, ...]:
    """Approximate (HNSW / IVFFlat) indexes whose first key is the vector column, sorted by name.

    Read from the catalogs (``pg_index``, ``pg_am``, ``pg_opclass``).

    Raises
    ------
    StoreError
        Connection or catalog query failed, or the table/column does not exist.
    """
    with _session(spec, conn) as c:
        _describe(c, spec)
        rows = c.execute(
            "SELECT i.relname, am.amname, opc.opcname, coalesce(array_to_string(i.reloptions, ','), ''), "
            "pg_get_indexdef(i.oid) "
            "FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_am am ON am.oid = i.relam "
            "JOIN pg_opclass opc ON opc.oid = x.indclass[0] "
            "JOIN pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = x.indkey[0] "
            "WHERE x.indrelid = to_regclass(%s) AND a.attname = %s AND am.amname = ANY(%s) ORDER BY i.relname",
            (spec._t().as_string(c), spec.vector_column, list(APPROXIMATE_METHODS))).fetchall()
    return tuple(IndexInfo(n, m, OPCLASS_METRIC.get(o), o, opt, d) for n, m, o, opt, d in rows)


def _index_for(indexes: Sequence[IndexInfo], metric: str) -> IndexInfo | None:
    usable = [i for i in indexes if i.metric == metric]
    return usable[0] if usable else None


def _no_index_note(indexes: Sequence[IndexInfo], metric: str) -> str:
    if not indexes:
        return "no approximate index: approximate equals exact"
    others = ", ".join(f"{i.name} ({i.method}, {i.metric or i.opclass})" for i in indexes)
    return f"no approximate index for metric {metric} (the table has {others}): approximate equals exact"


# --------------------------------------------------------------------------- health


@dataclass(frozen=True)
class StoreCheck:
    """One health check of a store.

    Attributes
    ----------
    name : str
        Stable id: ``rows``, ``null_vectors``, ``non_finite``, ``dims``,
        ``model_dims``, ``norms``, ``empty_texts``, ``duplicate_ids``,
        ``duplicate_texts``, ``models``, ``missing_documents``,
        ``text_mismatch``, ``approximate_index``.
    severity : {"unhealthy", "warning", "ok"}
    rows : int
        Number of rows the check concerns (0 when it passes; for ``rows``, the row count).
    detail : str
        The result in one sentence.
    breakdown : tuple of (str, int)
        Value → rows, where a histogram says more (dims, model stamps, missing documents).
    examples : tuple of str
        Up to 20 ids (chunk ids, or document ids for ``missing_documents``).
    """

    name: str
    severity: str
    rows: int
    detail: str
    breakdown: tuple[tuple[str, int], ...] = ()
    examples: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        return {"name": self.name, "severity": self.severity, "rows": self.rows, "detail": self.detail,
                "breakdown": [list(b) for b in self.breakdown], "examples": list(self.examples)}


@dataclass(frozen=True)
class StoreHealth:
    """Health of one pgvector table; ``exit_code`` 1 when any check is unhealthy.

    Attributes
    ----------
    spec : dict
        :meth:`StoreSpec.to_dict` (URI redacted).
    n_rows : int
    vector_type : {"vector", "array"}
        pgvector ``vector`` or a ``real[]``/``double precision[]`` column.
    checks : tuple of StoreCheck
    indexes : tuple of IndexInfo
    not_checked : tuple of str
        Checks that could not run, with the reason (no corpus, no offset columns…).
    seconds : float
        Wall time of all queries.
    """

    spec: dict
    n_rows: int
    vector_type: str
    checks: tuple[StoreCheck, ...]
    indexes: tuple[IndexInfo, ...] = ()
    not_checked: tuple[str, ...] = ()
    seconds: float = math.nan

    @property
    def healthy(self) -> bool:
        return all(c.severity != UNHEALTHY for c in self.checks)

    @property
    def exit_code(self) -> int:
        return 0 if self.healthy else 1

    def check(self, name: str) -> StoreCheck:
        """The check called ``name``; ``KeyError`` naming the ones present."""
        for c in self.checks:
            if c.name == name:
                return c
        raise KeyError(f"no check {name!r}; checks: {', '.join(c.name for c in self.checks)}")

    def to_dict(self) -> dict:
        return {**self.spec, "healthy": self.healthy, "rows": self.n_rows, "vector_type": self.vector_type,
                "seconds": self.seconds, "checks": [c.to_dict() for c in self.checks],
                "indexes": [i.__dict__ for i in self.indexes], "not_checked": list(self.not_checked)}

    def to_frame(self):
        """One row per check: ``name``, ``severity``, ``rows``, ``detail``."""
        import pandas as pd

        return pd.DataFrame([{"name": c.name, "severity": c.severity, "rows": c.rows, "detail": c.detail}
                             for c in self.checks], columns=["name", "severity", "rows", "detail"])

    def render(self) -> str:
        """Plain text for the CLI."""
        L = [f"{self.spec['table']} in {self.spec['store']}: {self.n_rows} rows, metric {self.spec['metric']} "
             f"— {'HEALTHY' if self.healthy else 'UNHEALTHY'}"]
        for c in self.checks:
            mark = {UNHEALTHY: "FAIL", WARNING: "warn", OK: " ok "}[c.severity]
            L.append(f"  [{mark}] {c.name}: {c.detail}")
            if c.examples:
                L.append(f"         e.g. {', '.join(c.examples[:10])}")
        for n in self.not_checked:
            L.append(f"  [skip] {n}")
        return "\n".join(L)


def _majority(hist: Sequence[tuple]) -> tuple:
    """The (value, count) with most rows; ties → the smallest value as text (deterministic)."""
    return sorted(hist, key=lambda vc: (-vc[1], str(vc[0])))[0]


def check_health(spec: StoreSpec, corpus=None, model_dims: int | None = None, model_name: str | None = None,
                 conn=None) -> StoreHealth:
    """Check a pgvector table with SQL aggregates (no vector leaves the database).

    Parameters
    ----------
    spec : StoreSpec
    corpus : audit.corpus.Corpus, optional
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
    StoreHealth
        Unhealthy: an empty table, NULL or non-finite vectors, more than one
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
    checks: list[StoreCheck] = []
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
        checks.append(StoreCheck("rows", UNHEALTHY if n_rows == 0 else OK, n_rows,
                                 "the table is empty" if n_rows == 0 else f"{n_rows} rows"))

        def ids_where(cond: sql.Composable, params=None) -> tuple[str, ...]:
            r = c.execute(sql.SQL("SELECT {i}::text FROM {t} WHERE {w} ORDER BY 1 LIMIT {n}").format(
                i=spec._c("id"), t=T, w=cond, n=sql.Literal(_EXAMPLES)), params).fetchall()
            return tuple(x[0] for x in r)

        checks.append(StoreCheck("null_vectors", UNHEALTHY if nulls else OK, nulls,
                                 f"{nulls} rows have no vector" if nulls else "no NULL vector",
                                 examples=ids_where(sql.SQL("{} IS NULL").format(V)) if nulls else ()))
        if table.vector_type == "vector":
            checks.append(StoreCheck("non_finite", OK, 0, "not applicable: pgvector's vector type refuses NaN "
                                     "and ±Inf on insert"))
        else:
            nf = sum(g[2] for g in present)
            ex = ()
            if nf:
                ex = ids_where(sql.SQL("EXISTS (SELECT 1 FROM unnest({v}) x WHERE x IS NULL OR "
                                       "x::float8 IN ('NaN', 'Infinity', '-Infinity'))").format(v=V))
            checks.append(StoreCheck("non_finite", UNHEALTHY if nf else OK, nf,
                                     f"{nf} vectors hold NaN, ±Inf or NULL elements" if nf
                                     else "every element finite", examples=ex))
        hist = tuple(sorted(((str(g[0]), g[1]) for g in present), key=lambda vc: (-vc[1], int(vc[0]))))
        if len(present) > 1:
            major = _majority([(g[0], g[1]) for g in present])
            off = sum(g[1] for g in present if g[0] != major[0])
            dim_fn = sql.SQL("vector_dims({})" if table.vector_type == "vector" else "cardinality({})").format(V)
            ex = ids_where(sql.SQL("{f} <> %s").format(f=dim_fn), (major[0],))
            checks.append(StoreCheck("dims", UNHEALTHY, off, f"{len(present)} dimensions: "
                                     + ", ".join(f"{d} ({n} rows)" for d, n in hist)
                                     + f"; {off} rows differ from the majority {major[0]}", hist, ex))
        else:
            checks.append(StoreCheck("dims", OK, 0, f"every vector has {hist[0][0]} dimensions" if hist
                                     else "no vector", hist))
        if model_dims is not None:
            off = sum(g[1] for g in present if g[0] != model_dims)
            who = f"model {model_name}" if model_name else "the model"
            checks.append(StoreCheck("model_dims", UNHEALTHY if off else OK, off,
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
        checks.append(StoreCheck("norms", UNHEALTHY if off_unit else OK, off_unit,
                                 (f"{off_unit} vectors are not unit length (|norm − 1| > {NORM_TOLERANCE:g}){rng}: "
                                  "L2 and inner-product distances are not cosine distances for them") if off_unit
                                 else f"every vector unit length (|norm − 1| ≤ {NORM_TOLERANCE:g}){rng}", (), ex))

        I, X = spec._c("id"), spec._c("text")
        dup_ids, empty = c.execute(sql.SQL(
            "SELECT count(*) - count(DISTINCT {i}), count(*) FILTER (WHERE {x} IS NULL OR btrim({x}) = '') "
            "FROM {t}").format(i=I, x=X, t=T)).fetchone()
        checks.append(StoreCheck("empty_texts", UNHEALTHY if empty else OK, empty,
                                 f"{empty} rows have an empty or NULL text" if empty else "no empty text",
                                 examples=ids_where(sql.SQL("{x} IS NULL OR btrim({x}) = ''").format(x=X))
                                 if empty else ()))
        checks.append(StoreCheck("duplicate_ids", UNHEALTHY if dup_ids else OK, dup_ids,
                                 f"{dup_ids} rows repeat an id already used (results would be ambiguous)" if dup_ids
                                 else "every id unique"))
        groups_n, dup_rows = c.execute(sql.SQL(
            "SELECT count(*), coalesce(sum(n), 0) FROM (SELECT count(*) AS n FROM {t} WHERE {x} IS NOT NULL "
            "GROUP BY {x} HAVING count(*) > 1) s").format(t=T, x=X)).fetchone()
        dup_rows = int(dup_rows)
        ex = ()
        if dup_rows:
            ex = ids_where(sql.SQL("{x} IN (SELECT {x} FROM {t} GROUP BY {x} HAVING count(*) > 1)").format(x=X, t=T))
        checks.append(StoreCheck("duplicate_texts", WARNING if dup_rows else OK, dup_rows,
                                 f"{dup_rows} rows share their text with another row ({groups_n} texts)" if dup_rows
                                 else "no duplicate text", (), ex))

        if spec.model_column:
            M = spec._c("model")
            mh = c.execute(sql.SQL("SELECT {m}::text, count(*) FROM {t} GROUP BY 1").format(m=M, t=T)).fetchall()
            mh = sorted(mh, key=lambda vc: (-vc[1], "" if vc[0] is None else vc[0]))
            br = tuple(("(null)" if m is None else m, n) for m, n in mh)
            if len(mh) > 1:
                major = _majority(mh)
                off = n_rows - major[1]
                ex = ids_where(sql.SQL("{m}::text IS DISTINCT FROM %s").format(m=M), (major[0],))
                checks.append(StoreCheck("models", UNHEALTHY, off, f"{len(mh)} model stamps: "
                                         + ", ".join(f"{m} ({n} rows)" for m, n in br)
                                         + f"; {off} rows differ from the majority", br, ex))
            else:
                checks.append(StoreCheck("models", OK, 0, f"one model stamp: {br[0][0]}" if br else "no row", br))
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

        idx = _index_for(indexes, spec.metric)
        opts = f", {idx.options}" if idx and idx.options else ""
        checks.append(StoreCheck("approximate_index", OK, 0,
                                 f"{idx.method} index {idx.name} ({idx.opclass}{opts})" if idx
                                 else _no_index_note(indexes, spec.metric)))
    return StoreHealth(spec.to_dict(), n_rows, table.vector_type, tuple(checks), indexes, tuple(not_checked),
                       time.perf_counter() - t0)


def _document_checks(c, spec: StoreSpec, corpus, n_rows: int) -> list[StoreCheck]:
    """``missing_documents`` and ``text_mismatch`` against a temporary table of the corpus."""
    from psycopg import sql

    T, D, I, X = spec._t(), spec._c("doc"), spec._c("id"), spec._c("text")
    out = []
    with c.transaction(force_rollback=True):
        c.execute("CREATE TEMP TABLE audit_docs (doc_id text PRIMARY KEY, body text NOT NULL) ON COMMIT DROP")
        with c.cursor().copy("COPY audit_docs (doc_id, body) FROM STDIN") as cp:
            for d in corpus.documents:
                cp.write_row((d.doc_id, d.text.replace("\x00", "")))
        miss = c.execute(sql.SQL(
            "SELECT coalesce(t.{d}::text, '(null)'), count(*) FROM {t} t LEFT JOIN audit_docs a "
            "ON a.doc_id = t.{d}::text WHERE a.doc_id IS NULL GROUP BY 1").format(d=D, t=T)).fetchall()
        miss = sorted(miss, key=lambda vc: (-vc[1], vc[0]))
        n_miss = sum(n for _, n in miss)
        out.append(StoreCheck("missing_documents", UNHEALTHY if n_miss else OK, n_miss,
                              f"{n_miss} rows belong to {len(miss)} documents not in corpus {corpus.name!r}"
                              if n_miss else f"every row's document is in corpus {corpus.name!r}",
                              tuple(miss[:_EXAMPLES]), tuple(m for m, _ in miss[:_EXAMPLES])))
        if spec.start_column:
            S, E = spec._c("start"), spec._c("end")
            # CASE first: substr() raises on a negative length, so bad offsets never reach it.
            bad = sql.SQL(
                "CASE WHEN t.{s} IS NULL OR t.{e} IS NULL OR t.{s} < 0 OR t.{e} < t.{s} OR t.{e} > length(a.body) "
                "OR t.{x} IS NULL THEN true ELSE right(t.{x}, (t.{e} - t.{s})::int) "
                "IS DISTINCT FROM substr(a.body, (t.{s} + 1)::int, (t.{e} - t.{s})::int) END").format(s=S, e=E, x=X)
            base = sql.SQL("FROM {t} t JOIN audit_docs a ON a.doc_id = t.{d}::text WHERE ").format(t=T, d=D) + bad
            n_bad = c.execute(sql.SQL("SELECT count(*) ") + base).fetchone()[0]
            ex = tuple(r[0] for r in c.execute(
                sql.SQL("SELECT t.{i}::text ").format(i=I) + base
                + sql.SQL(" ORDER BY 1 LIMIT {n}").format(n=sql.Literal(_EXAMPLES))).fetchall()) if n_bad else ()
            out.append(StoreCheck("text_mismatch", UNHEALTHY if n_bad else OK, n_bad,
                                  f"{n_bad} rows' text no longer ends with doc.text[start:end] (or the offsets "
                                  "fall outside the document)" if n_bad
                                  else "every row's text ends with its source slice doc.text[start:end]", (), ex))
    return out


# --------------------------------------------------------------------------- retrieval


@dataclass(frozen=True)
class SearchResult:
    """Top-k of each query vector, through the approximate index or an exact scan.

    Attributes
    ----------
    mode : {"approximate", "exact"}
    k : int
    metric : str
    index : str or None
        The index the plan used (from ``EXPLAIN`` of the first query); None for a scan.
    ids : tuple of tuple of str
        ``(n_queries, ≤ k)`` chunk ids (as text), nearest first; ties broken by id.
    distances : tuple of tuple of float
        The operator's values (``<=>``, ``<->`` or ``<#>``, the last being −⟨q, v⟩).
    cosine : tuple of tuple of float
        Cosine distance in [0, 2]: ``<=>`` as is, ``d² / 2`` for L2, ``1 + d``
        for ``<#>`` (identities of unit vectors: ‖q − v‖² = 2 − 2 cos);
        NaN where the query or the row is not unit length (L2 / IP only).
    texts : tuple of tuple of str
        The returned rows' texts (to match needles).
    ms : tuple of float
        Wall time per query, milliseconds.
    settings : dict
        Session settings in force (``hnsw.ef_search``, ``ivfflat.probes``, planner switches).
    note : str
        What the reader must know: no approximate index, distances not cosine…
    """

    mode: str
    k: int
    metric: str
    index: str | None
    ids: tuple[tuple[str, ...], ...]
    distances: tuple[tuple[float, ...], ...]
    cosine: tuple[tuple[float, ...], ...]
    texts: tuple[tuple[str, ...], ...]
    ms: tuple[float, ...]
    settings: dict = field(default_factory=dict)
    note: str = ""

    def to_frame(self):
        """One row per (query, rank): ``query``, ``rank`` (1-based), ``id``, ``distance``, ``cosine``."""
        import pandas as pd

        rows = [{"query": qi, "rank": r + 1, "id": i, "distance": d, "cosine": cd}
                for qi, (ids, ds, cs) in enumerate(zip(self.ids, self.distances, self.cosine))
                for r, (i, d, cd) in enumerate(zip(ids, ds, cs))]
        return pd.DataFrame(rows, columns=["query", "rank", "id", "distance", "cosine"])

    def to_dict(self) -> dict:
        nan = lambda x: None if isinstance(x, float) and math.isnan(x) else x  # noqa: E731
        return {"mode": self.mode, "k": self.k, "metric": self.metric, "index": self.index,
                "ids": [list(i) for i in self.ids], "distances": [list(d) for d in self.distances],
                "cosine": [[nan(x) for x in c] for c in self.cosine], "ms": list(self.ms),
                "settings": dict(self.settings), "note": self.note}


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
           ef_search: int | None = None, probes: int | None = None, conn=None) -> SearchResult:
    """Top-k rows for each query vector, through the table's approximate index or an exact scan.

    Parameters
    ----------
    spec : StoreSpec
    queries : numpy.ndarray, shape (n_queries, dims)
        Query vectors (e.g. ``audit.embedding.load_encoder(...).encode(questions)``,
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

    Returns
    -------
    SearchResult

    Raises
    ------
    StoreError
        Bad ``k``/``mode``/shape, query dims not the table's, connection or query failure.
    """
    from psycopg import sql

    if mode not in ("approximate", "exact"):
        raise StoreError(f"mode {mode!r} is not 'approximate' or 'exact'")
    if not isinstance(k, (int, np.integer)) or k < 1:
        raise StoreError(f"k must be a positive integer, got {k!r}")
    q = np.asarray(queries, dtype=np.float32)
    if q.ndim != 2 or q.shape[0] == 0:
        raise StoreError(f"query vectors must have shape (n_queries, dims), got {q.shape}")
    if not np.isfinite(q).all():
        raise StoreError("query vectors hold NaN or ±Inf")
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
        indexes = find_indexes(spec, c)
        idx = _index_for(indexes, spec.metric) if table.vector_type == "vector" else None
        notes = []
        switches: dict[str, str] = {}
        if mode == "exact" or idx is None:
            switches = {"enable_indexscan": "off", "enable_bitmapscan": "off", "enable_indexonlyscan": "off"}
            if mode == "approximate":
                notes.append(_no_index_note(indexes, spec.metric) if table.vector_type == "vector"
                             else "real[] column: no index on it can serve the distance: approximate equals exact")
        else:
            switches = {"enable_seqscan": "off"}
        if ef_search is not None:
            switches["hnsw.ef_search"] = str(int(ef_search))
        if probes is not None:
            switches["ivfflat.probes"] = str(int(probes))
        where = sql.SQL("WHERE {v} IS NOT NULL").format(v=spec._c("vector"))
        if table.vector_type == "array":  # a cast of NaN/±Inf to vector fails: those rows cannot be ranked
            where += sql.SQL(" AND NOT EXISTS (SELECT 1 FROM unnest({v}) x WHERE x IS NULL OR x::float8 IN "
                             "('NaN', 'Infinity', '-Infinity'))").format(v=spec._c("vector"))
            notes.append("real[] column: rows holding NaN, ±Inf or NULL elements are left out")
        dist = sql.SQL("({v} {op} %(q)s::vector)").format(v=V, op=sql.SQL(spec.operator))
        norm = sql.SQL("vector_norm({v})").format(v=V)
        order = sql.SQL("ORDER BY d") if mode == "approximate" and idx is not None else sql.SQL("ORDER BY d, id")
        stmt = sql.SQL("SELECT {i}::text AS id, {dist} AS d, {norm}, {x} FROM {t} {w} {o} LIMIT %(k)s").format(
            i=spec._c("id"), dist=dist, norm=norm, x=spec._c("text"), t=spec._t(), w=where, o=order)
        ids, ds, cs, texts, ms = [], [], [], [], []
        short = non_unit = 0
        with c.transaction(force_rollback=True):
            for name, value in switches.items():
                c.execute("SELECT set_config(%s, %s, true)", (name, value))
            lit0 = _vector_literal(q[0])
            plan = c.execute(sql.SQL("EXPLAIN (FORMAT JSON) ") + stmt, {"q": lit0, "k": int(k)}).fetchone()[0]
            settings = dict(switches)
            for name in ("hnsw.ef_search", "ivfflat.probes"):  # read after EXPLAIN: pgvector's GUCs exist once loaded
                if idx is not None and name.split(".")[0] == idx.method and name not in settings:
                    settings[name] = c.execute("SELECT current_setting(%s, true)", (name,)).fetchone()[0]
            if isinstance(plan, str):
                plan = json.loads(plan)
            used = _plan_index(plan)
            if mode == "approximate" and idx is not None and used != idx.name:
                notes.append(f"the planner did not use index {idx.name} (plan index: {used})")
            for qi in range(q.shape[0]):
                t0 = time.perf_counter()
                rows = c.execute(stmt, {"q": _vector_literal(q[qi]), "k": int(k)}).fetchall()
                ms.append((time.perf_counter() - t0) * 1000.0)
                rows.sort(key=lambda r: (r[1], r[0]))  # deterministic ties among the rows returned
                if len(rows) < k:
                    short += 1
                qi_unit = abs(qnorm[qi] - 1.0) <= NORM_TOLERANCE
                conv = []
                for _, d, n, _x in rows:
                    unit = qi_unit and n is not None and abs(n - 1.0) <= NORM_TOLERANCE
                    if spec.metric == "cosine":
                        conv.append(float(d))
                    elif not unit:
                        non_unit += 1
                        conv.append(math.nan)
                    else:
                        conv.append(float(d) * float(d) / 2.0 if spec.metric == "l2" else 1.0 + float(d))
                ids.append(tuple(r[0] for r in rows))
                ds.append(tuple(float(r[1]) for r in rows))
                cs.append(tuple(conv))
                texts.append(tuple(r[3] for r in rows))
    if spec.metric == "cosine":
        notes.append("<=> is cosine distance: no conversion")
    else:
        conv = "d²/2" if spec.metric == "l2" else "1 + (<#>)"
        notes.append(f"cosine distance = {conv}, valid for unit vectors"
                     + (f"; {non_unit} returned rows are not unit length (or the query is not): "
                        "their cosine distance is NaN" if non_unit else ""))
    if short:
        notes.append(f"{short} queries returned fewer than {k} rows"
                     + (" (HNSW returns at most hnsw.ef_search rows)" if idx is not None and idx.method == "hnsw"
                        and mode == "approximate" else ""))
    return SearchResult(mode, int(k), spec.metric, used if (mode == "approximate" and idx is not None) else None,
                        tuple(ids), tuple(ds), tuple(cs), tuple(texts), tuple(ms), settings, "; ".join(notes))


# --------------------------------------------------------------------------- approximate vs exact


def relevant_from_needles(needles: Sequence[str], *results: SearchResult) -> list[set[str]]:
    """Per query, the returned ids whose text contains the needle (whitespace collapsed, as everywhere).

    Relevance is decided on the rows the searches returned, which is all
    recall at k needs. ``needles[i]`` belongs to query ``i``.

    Raises
    ------
    StoreError
        ``needles`` and the results do not have the same number of queries.
    """
    from ..matching import collapse

    out = []
    for r in results:
        if len(r.ids) != len(needles):
            raise StoreError(f"{len(needles)} needles for {len(r.ids)} queries")
    for qi, needle in enumerate(needles):
        key = collapse(needle)
        out.append({i for r in results for i, x in zip(r.ids[qi], r.texts[qi]) if x is not None and key in collapse(x)})
    return out


@dataclass(frozen=True)
class KComparison:
    """Approximate against exact at one k.

    Attributes
    ----------
    k : int
    n_queries : int
    recall_approximate, recall_exact : float
        Share of queries with a relevant id in the top k (needle recall).
    overlap : float
        Mean over queries of ``|A_k ∩ E_k| / |E_k|`` (``|E_k| = k`` unless the
        table has fewer rows with a vector).
    lost : tuple of str
        Queries whose needle the exact top k finds and the approximate top k misses.
    gained : tuple of str
        The reverse (possible when the exact top k is cut at a tie).
    """

    k: int
    n_queries: int
    recall_approximate: float
    recall_exact: float
    overlap: float
    lost: tuple[str, ...]
    gained: tuple[str, ...]


@dataclass(frozen=True)
class RetrievalComparison:
    """Per-k comparison of the approximate index with the exact scan."""

    rows: tuple[KComparison, ...]
    index: str | None
    settings: dict = field(default_factory=dict)
    note: str = ""

    def to_frame(self):
        """One row per k: ``k``, ``n_queries``, ``recall_approximate``, ``recall_exact``, ``overlap``,
        ``lost`` and ``gained`` (counts)."""
        import pandas as pd

        return pd.DataFrame([{"k": r.k, "n_queries": r.n_queries, "recall_approximate": r.recall_approximate,
                              "recall_exact": r.recall_exact, "overlap": r.overlap, "lost": len(r.lost),
                              "gained": len(r.gained)} for r in self.rows],
                            columns=["k", "n_queries", "recall_approximate", "recall_exact", "overlap", "lost",
                                     "gained"])

    def to_dict(self) -> dict:
        return {"index": self.index, "settings": dict(self.settings), "note": self.note,
                "rows": [{**r.__dict__, "lost": list(r.lost), "gained": list(r.gained)} for r in self.rows]}


def compare_retrieval(approximate: SearchResult, exact: SearchResult, relevant: Sequence[Collection],
                      ks: Sequence[int] = (1, 4, 8, 20), labels: Sequence[str] | None = None) -> RetrievalComparison:
    """Compare the approximate top-k with the exact top-k, per k.

    Parameters
    ----------
    approximate, exact : SearchResult
        The same queries through :func:`search` in both modes, ``k ≥ max(ks)``.
    relevant : sequence of collections
        Per query, the relevant chunk ids (compared as text), e.g. from
        :func:`relevant_from_needles`. An empty set counts as a miss.
    ks : sequence of int
    labels : sequence of str, optional
        Query names for ``lost``/``gained``; default the query's position.

    Returns
    -------
    RetrievalComparison

    Raises
    ------
    StoreError
        Different numbers of queries, or a k larger than a search's k.
    """
    n = len(exact.ids)
    if len(approximate.ids) != n or len(relevant) != n:
        raise StoreError(f"approximate has {len(approximate.ids)} queries, exact {n}, relevant {len(relevant)}")
    if labels is not None and len(labels) != n:
        raise StoreError(f"{len(labels)} labels for {n} queries")
    names = [str(x) for x in labels] if labels is not None else [str(i) for i in range(n)]
    rel = [{str(x) for x in r} for r in relevant]
    rows = []
    for k in sorted(set(int(k) for k in ks)):
        if k > approximate.k or k > exact.k:
            raise StoreError(f"k={k} is larger than the searches' k ({approximate.k}, {exact.k})")
        ha = [bool(set(approximate.ids[i][:k]) & rel[i]) for i in range(n)]
        he = [bool(set(exact.ids[i][:k]) & rel[i]) for i in range(n)]
        ov = [len(set(approximate.ids[i][:k]) & set(exact.ids[i][:k])) / max(1, len(exact.ids[i][:k]))
              for i in range(n)]
        rows.append(KComparison(k, n, sum(ha) / n if n else math.nan, sum(he) / n if n else math.nan,
                                float(np.mean(ov)) if n else math.nan,
                                tuple(names[i] for i in range(n) if he[i] and not ha[i]),
                                tuple(names[i] for i in range(n) if ha[i] and not he[i])))
    return RetrievalComparison(tuple(rows), approximate.index, dict(approximate.settings), approximate.note)
