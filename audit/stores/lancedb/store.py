"""A LanceDB table (``lancedb:FOLDER``, a table name, the team's columns): opened read-only, searched both ways.

The approximate search is LanceDB's own ``table.search(q)`` through the table's vector index (``nprobes`` IVF
partitions, ``refine_factor`` re-ranking; a table without an index is searched flat, and the note says
approximate equals exact); the exact scan ranks every vector streamed in batches in the index's metric
(:func:`audit.stores.scan.exact_topk`). Both return each row's vector, so the rows are scored by the one rule.
"""

from __future__ import annotations

import re
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import numpy as np

from ...health.rows import health_from_rows
from ...sources.imported.chunks import UserChunk
from ..base import SearchResult, StoreError, check_search
from ..scan import exact_topk, search_result
from ..spec import check_offsets, described, opened_or

__all__ = ["LanceDBSpec", "check_health", "chunks", "open_table", "search", "stream_rows", "table_dims"]

#: LanceDB's distance types → (the store metric, the raw kind of :func:`audit.stores.scan.to_cosine`).
_METRICS = {"cosine": ("cosine", "cosine"), "l2": ("l2", "l2sq"), "dot": ("ip", "ip_distance")}
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-]*$")
_BATCH = 8192


@dataclass(frozen=True)
class LanceDBSpec:
    """Which LanceDB table, and which of its columns hold the id, text, vector, document, offsets and model.

    Parameters
    ----------
    uri : str
        ``lancedb:FOLDER`` (the folder ``lancedb.connect`` was given).
    table : str
        The table's name.
    id_column, text_column, vector_column : str
        ``id``, ``text`` and ``vector`` by default (LanceDB's default vector column is ``vector``).
    doc_column, start_column, end_column, model_column : str or None

    Raises
    ------
    StoreError
        An empty table name, a column name that is not an identifier, offsets without a document column, a
        filter (not offered for LanceDB yet).
    """

    uri: str
    table: str
    id_column: str = "id"
    text_column: str = "text"
    vector_column: str = "vector"
    doc_column: str | None = None
    start_column: str | None = None
    end_column: str | None = None
    model_column: str | None = None
    filters: tuple = ()

    def __post_init__(self) -> None:
        if not isinstance(self.table, str) or not self.table.strip():
            raise StoreError("a LanceDB store needs its table's name (--table)")
        for c in (self.id_column, self.text_column, self.vector_column, self.doc_column, self.start_column,
                  self.end_column, self.model_column):
            if c is not None and not _NAME.match(c):
                raise StoreError(f"{c!r} is not a LanceDB column name")
        if self.filters:
            raise StoreError("--filter is not offered for a LanceDB table: it is searched whole")
        check_offsets(self, "columns")

    @property
    def folder(self) -> Path:
        u = self.uri.strip()
        return Path(u[len("lancedb:"):] if u.startswith("lancedb:") else u)

    @property
    def columns(self) -> dict[str, str]:
        roles = {"id": self.id_column, "text": self.text_column, "vector": self.vector_column,
                 "doc": self.doc_column, "start": self.start_column, "end": self.end_column,
                 "model": self.model_column}
        return {k: v for k, v in roles.items() if v is not None}

    @property
    def provenance(self) -> str:
        return f"LanceDB table {self.table} in lancedb:{self.folder.name}"

    def to_dict(self) -> dict:
        return described(f"lancedb:{self.folder.name}", self.table, "the index's", self.columns, (), "lancedb")


class _Opened:
    """The opened table, its vector index (or none) and its metric."""

    def __init__(self, spec: LanceDBSpec, table) -> None:
        self.table = table
        names = table.schema.names
        for role, col in spec.columns.items():
            if col not in names:
                raise StoreError(f"LanceDB table {spec.table!r} has no {role} column {col!r} (columns: "
                                 f"{', '.join(names)})")
        idx = [i for i in table.list_indices() if spec.vector_column in list(i.columns)]
        self.index = idx[0] if idx else None
        dt = "cosine"
        if self.index is not None:
            details = getattr(self.index, "index_details", None) or {}
            dt = str(details.get("metric_type", "cosine")).lower()
        if dt not in _METRICS:
            raise StoreError(f"LanceDB table {spec.table!r}: index metric {dt!r} is not cosine, l2 or dot")
        self.distance_type = dt
        self.metric, self.kind = _METRICS[dt]
        field = table.schema.field(spec.vector_column)
        self.dims = getattr(field.type, "list_size", None)

    def index_name(self) -> str | None:
        if self.index is None:
            return None
        return f"{self.index.index_type} {self.index.name} ({self.distance_type})"


@contextmanager
def open_table(spec: LanceDBSpec) -> Iterator[_Opened]:
    """The table, opened read-only (``lancedb.connect`` and ``open_table``: nothing is written).

    Raises
    ------
    StoreError
        lancedb not installed, no database folder, no such table, a column missing.
    """
    try:
        import lancedb
    except ImportError:
        raise StoreError("a LanceDB table needs its extra: pip install 'retrieval-audit[lancedb]'") from None
    if not spec.folder.is_dir():
        raise StoreError(f"lancedb:{spec.folder.name}: no LanceDB database folder there")
    db = lancedb.connect(str(spec.folder))
    try:
        table = db.open_table(spec.table)
    except (ValueError, FileNotFoundError, RuntimeError) as e:
        raise StoreError(f"lancedb:{spec.folder.name}: no table {spec.table!r} ({str(e).splitlines()[0][:100]})") \
            from None
    yield _Opened(spec, table)


def _batches(spec: LanceDBSpec, o: _Opened, columns: list[str]):
    for b in o.table.to_lance().to_batches(columns=columns, batch_size=_BATCH):
        yield b.to_pydict()


def check_health(spec: LanceDBSpec, corpus=None, model_dims: int | None = None, model_name: str | None = None,
                 conn=None):
    """The table's health: the store findings of every engine over its rows streamed in batches.

    Raises
    ------
    StoreError
        As :func:`open_table`.
    """
    with opened_or(conn, open_table, spec) as o:
        cols = [c for c in spec.columns.values()]

        def batches():
            for d in _batches(spec, o, cols):
                get = lambda c: d[c] if c else None  # noqa: E731
                yield {"ids": d[spec.id_column], "texts": d[spec.text_column],
                       "vectors": [None if x is None else np.asarray(x, np.float32) for x in d[spec.vector_column]],
                       "docs": get(spec.doc_column), "starts": get(spec.start_column), "ends": get(spec.end_column),
                       "models": get(spec.model_column)}

        detail = (f"{o.index_name()}: {o.index.num_indexed_rows} rows indexed, {o.index.num_unindexed_rows} not yet"
                  if o.index is not None and hasattr(o.index, "num_indexed_rows") else
                  (o.index_name() or "no vector index: searched flat"))
        return health_from_rows(spec, batches(), spec_dict={**spec.to_dict(), "metric": o.metric}, kind="table",
                                index_detail=detail, corpus=corpus, model_dims=model_dims, model_name=model_name)


def table_dims(spec: LanceDBSpec, conn=None) -> int | None:
    """The vector column's fixed size (None for a variable-size list column)."""
    with opened_or(conn, open_table, spec) as o:
        return o.dims


def search(spec: LanceDBSpec, queries: np.ndarray, k: int, mode: str = "approximate", ef_search: int | None = None,
           probes: int | None = None, conn=None, iterative_scan: str | None = None, nprobes: int | None = None,
           refine_factor: int | None = None) -> SearchResult:
    """Top-k rows of each query through the table's vector index, or an exact scan of its vectors.

    Parameters
    ----------
    spec : LanceDBSpec
    queries : numpy.ndarray, shape (n_queries, dims)
    k : int
    mode : {"approximate", "exact"}
        ``approximate``: ``table.search(q).distance_type(metric).nprobes(…).refine_factor(…)`` one query at a
        time (its wall time in ``ms``); ``exact``: every vector streamed and ranked in the index's metric.
    nprobes, refine_factor
        LanceDB's settings (``probes`` is read as ``nprobes`` when ``nprobes`` is not given).
    ef_search, iterative_scan
        pgvector's: named in the note, not applied.

    Returns
    -------
    SearchResult
        Cosine distances in [0, 2] (cosine as is, squared L2 / 2, 1 − dot; NaN for L2/dot rows that are not unit
        length), rows scored by the one rule.

    Raises
    ------
    StoreError
        Bad arguments, query dims not the table's.
    """
    q = check_search(queries, k, mode)
    notes: list[str] = []
    nprobes = probes if nprobes is None else nprobes
    if ef_search is not None or iterative_scan is not None:
        notes.append("ef_search and iterative scans are pgvector settings: not applied")
    with opened_or(conn, open_table, spec) as o:
        if o.dims is not None and o.dims != q.shape[1]:
            raise StoreError(f"query vectors have {q.shape[1]} dimensions, LanceDB table {spec.table!r} has "
                             f"{o.dims}: embed the queries with the table's model")
        cols = [spec.id_column, spec.text_column, spec.vector_column]
        settings: dict = {}
        if mode == "approximate":
            ids, raw, vecs, texts, ms = [], [], [], [], []
            for x in q:
                t0 = time.perf_counter()
                s = o.table.search(x, vector_column_name=spec.vector_column).distance_type(o.distance_type)
                if nprobes is not None:
                    s = s.nprobes(int(nprobes))
                if refine_factor is not None:
                    s = s.refine_factor(int(refine_factor))
                r = s.select(cols).limit(int(k)).to_arrow()
                ms.append((time.perf_counter() - t0) * 1000.0)
                ids.append([str(i) for i in r.column(spec.id_column).to_pylist()])
                raw.append(r.column("_distance").to_pylist())
                texts.append(r.column(spec.text_column).to_pylist())
                vecs.append([np.asarray(v, np.float32) for v in r.column(spec.vector_column).to_pylist()])
            settings = {k_: int(v) for k_, v in (("nprobes", nprobes), ("refine_factor", refine_factor))
                        if v is not None}
            index = o.index_name()
            if index is None:
                notes.append("no vector index: LanceDB searches flat, approximate equals exact")
        else:
            t0 = time.perf_counter()
            ids, raw, vecs = exact_topk(((d[spec.id_column], np.asarray(d[spec.vector_column], np.float32))
                                         for d in _batches(spec, o, [spec.id_column, spec.vector_column])),
                                        q, int(k), o.kind)
            ms = [(time.perf_counter() - t0) * 1000.0 / len(q)] * len(q)
            text_of = {r[0]: r[1] for r in stream_rows(spec, o)}
            texts = [[text_of.get(i) for i in row] for row in ids]
            index = None
        kind = o.kind
        return search_result(mode, int(k), o.metric, kind, index, ids, raw, vecs, q, texts, ms, settings, notes)


def chunks(spec: LanceDBSpec, o: _Opened, ids: set[str]) -> list[UserChunk]:
    """The rows ``ids`` as UserChunks (text, document and offsets from their columns), id order."""
    cols = [c for c in (spec.id_column, spec.text_column, spec.doc_column, spec.start_column, spec.end_column) if c]
    out = []
    for d in _batches(spec, o, cols):
        for i, rid in enumerate(d[spec.id_column]):
            if str(rid) in ids:
                get = lambda c: d[c][i] if c else None  # noqa: E731
                out.append(UserChunk(str(rid), "" if get(spec.doc_column) is None else str(get(spec.doc_column)),
                                     get(spec.text_column) or "", None, get(spec.start_column), get(spec.end_column)))
    return sorted(out, key=lambda c: c.chunk_id)


def stream_rows(spec: LanceDBSpec, o: _Opened):
    """``(id, text, doc id)`` of every row, streamed in batches (no vector travels)."""
    cols = [c for c in (spec.id_column, spec.text_column, spec.doc_column) if c]
    for d in _batches(spec, o, cols):
        docs = d[spec.doc_column] if spec.doc_column else [None] * len(d[spec.id_column])
        for rid, text, doc in zip(d[spec.id_column], d[spec.text_column], docs):
            yield str(rid), text, None if doc is None else str(doc)
