"""Milvus Lite: the spec, a read-only opening (a copy of the data folder), health, search and the store system."""

from __future__ import annotations

import json
import re
import shutil
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import numpy as np

from ..filters import check_filters
from ...sources.imported.chunks import UserChunk
from ...health import HealthReport
from ..base import SearchResult, StoreError, check_search
from ...health.rows import health_from_rows
from ..scan import exact_topk, search_result
from ..spec import check_offsets, described, filters_said, opened_or

__all__ = ["MilvusSpec", "check_health", "chunks", "open_collection", "search", "stream_rows", "table_dims"]

#: Milvus metric types → the raw kind of :func:`audit.stores.scan.to_cosine` and the store metric.
METRICS = {"COSINE": ("cosine_similarity", "cosine"), "L2": ("l2sq", "l2"), "IP": ("ip", "ip")}

_BATCH = 1000
_FIELD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PREFIX = "milvus-lite:"


@dataclass(frozen=True)
class MilvusSpec:
    """Which Milvus Lite collection, and which fields hold the id, text, vector, document, offsets, model.

    Parameters
    ----------
    uri : str
        ``milvus-lite:PATH`` (``milvus-lite:///abs/path``): the data folder given to ``MilvusClient``.
    table : str
        The collection's name.
    id_column, vector_column : str, optional
        Default: the primary key and the collection's only ``FLOAT_VECTOR`` field.
    text_column : str
        The embedded text (default ``text``).
    doc_column, start_column, end_column, model_column : str, optional
        Scalar fields (offsets: code points, end exclusive; both or neither, with ``doc_column``).
    filters : tuple of (str, str)
        ``(field, value)`` pairs every search keeps to (Milvus ``filter``): the value is converted to the
        field's type (VARCHAR, INT*, FLOAT/DOUBLE, BOOL) and written as a literal (Milvus Lite has no bound
        parameters): a string literal is JSON-quoted, and a value holding a control character is refused. A
        dynamic field (a key of the rows outside the schema, in a collection with ``enable_dynamic_field``)
        is compared as a string.

    Raises
    ------
    StoreError
        An empty or non-identifier name, offsets without a document field, a bad filter, no path.
    """

    uri: str
    table: str
    id_column: str | None = None
    text_column: str = "text"
    vector_column: str | None = None
    doc_column: str | None = None
    start_column: str | None = None
    end_column: str | None = None
    model_column: str | None = None
    filters: tuple = ()

    def __post_init__(self) -> None:
        if not isinstance(self.table, str) or not self.table.strip():
            raise StoreError(f"collection must be a non-empty name, got {self.table!r}")
        for role in ("id_column", "text_column", "vector_column", "doc_column", "start_column", "end_column",
                     "model_column"):
            v = getattr(self, role)
            if v is not None and not _FIELD.fullmatch(str(v)):
                raise StoreError(f"{role.replace('_', ' ')} {v!r} is not a Milvus field name")
        check_offsets(self, "fields")
        object.__setattr__(self, "filters", check_filters(self.filters))
        for name, value in self.filters:
            if not _FIELD.fullmatch(name):
                raise StoreError(f"--filter {name}=…: {name!r} is not a Milvus field name")
            if any(ord(ch) < 32 for ch in value):
                raise StoreError(f"--filter {name}=…: the value holds a control character")
        self.folder  # noqa: B018 - validates the URI

    @property
    def folder(self) -> Path:
        u = self.uri.strip() if isinstance(self.uri, str) else ""
        if u.startswith(_PREFIX):
            u = u[len(_PREFIX):]
            if u.startswith("//"):
                u = u[2:]
        if not u:
            raise StoreError("no Milvus Lite store: give milvus-lite:PATH (the folder MilvusClient opens)")
        return Path(u)

    @property
    def columns(self) -> dict[str, str]:
        roles = {"id": self.id_column, "text": self.text_column, "vector": self.vector_column,
                 "doc": self.doc_column, "start": self.start_column, "end": self.end_column,
                 "model": self.model_column}
        return {k: v for k, v in roles.items() if v is not None}

    @property
    def redacted_uri(self) -> str:
        return f"milvus-lite:{self.folder.name}"

    @property
    def provenance(self) -> str:
        return (f"Milvus Lite collection {self.table} ({', '.join(f'{k}={v}' for k, v in self.columns.items())}"
                f"{filters_said(self.filters)}) in {self.redacted_uri}")

    def to_dict(self) -> dict:
        return described(self.redacted_uri, self.table, "the collection's", self.columns, self.filters, "milvus-lite")


@dataclass
class _Opened:
    spec: MilvusSpec
    client: object
    id_field: str
    vector_field: str
    types: dict          # field name -> DataType name
    index: dict          # describe_index of the vector field ({} without one)
    metric_type: str

    @property
    def kind(self) -> str:
        return METRICS[self.metric_type][0]

    @property
    def metric(self) -> str:
        return METRICS[self.metric_type][1]


def _one_line(e: Exception) -> str:
    text = " ".join(str(e).split())
    m = re.search(r"message=([^)>]*)", text)
    return m.group(1).strip() if m else text or type(e).__name__


@contextmanager
def open_collection(spec: MilvusSpec) -> Iterator[_Opened]:
    """Open a temporary copy of the data folder with ``MilvusClient`` and describe the collection.

    Raises
    ------
    StoreError
        pymilvus/milvus-lite missing, no such folder, no such collection (the ones there are named), a
        field named in the spec missing (the fields are listed), no vector field or several without
        ``vector_column``.
    """
    try:
        from pymilvus import MilvusClient
    except ImportError:
        raise StoreError("pymilvus is not installed: pip install 'retrieval-audit[milvus]' to audit a Milvus Lite "
                         "collection") from None
    folder = spec.folder
    if not folder.exists():
        raise StoreError(f"{folder}: no such Milvus Lite data folder")
    tmp = Path(tempfile.mkdtemp(prefix="audit-milvus-"))
    client = None
    try:
        copy = tmp / folder.name
        (shutil.copytree if folder.is_dir() else shutil.copy2)(folder, copy)
        try:
            client = MilvusClient(str(copy))
        except Exception as e:  # noqa: BLE001 - one line
            raise StoreError(f"cannot open {spec.redacted_uri} with Milvus Lite: {_one_line(e)}") from None
        names = client.list_collections()
        if spec.table not in names:
            raise StoreError(f"collection {spec.table!r} does not exist in {spec.redacted_uri}; its collections: "
                             f"{', '.join(sorted(names)) or 'none'}")
        try:  # into the memory of this process, on the copy: nothing reaches the team's folder
            client.load_collection(spec.table)
        except Exception as e:  # noqa: BLE001 - one line
            raise StoreError(f"cannot load collection {spec.table!r} of {spec.redacted_uri}: {_one_line(e)}") from None
        desc = client.describe_collection(spec.table)
        fields = {f["name"]: f for f in desc["fields"]}
        types = {n: getattr(f["type"], "name", str(f["type"])) for n, f in fields.items()}
        # a collection with dynamic fields (MilvusClient.create_collection(name, dimension=…), the quickstart's)
        # keeps every other key of a row in its $meta JSON and returns it by name: a named field not in the
        # schema is one of those (its rows may lack it: their text is then empty, as the health says)
        dynamic = bool(desc.get("enable_dynamic_field"))
        listed = ", ".join(fields) + (" (and dynamic fields, by name)" if dynamic else "")
        for role, name in spec.columns.items():
            if name not in fields and not dynamic:
                raise StoreError(f"collection {spec.table!r} has no field {name!r} (for {role}); its fields: {listed}")
            types.setdefault(name, "DYNAMIC")
        for name, _ in spec.filters:
            if name not in fields and not dynamic:
                raise StoreError(f"--filter {name}=…: collection {spec.table!r} has no field {name!r}; its fields: "
                                 f"{listed}")
            types.setdefault(name, "DYNAMIC")
        pk = spec.id_column or next((n for n, f in fields.items() if f.get("is_primary")), None)
        vectors = [n for n, t in types.items() if t == "FLOAT_VECTOR"]
        vf = spec.vector_column or (vectors[0] if len(vectors) == 1 else None)
        if vf is None:
            raise StoreError(f"collection {spec.table!r} has {len(vectors)} float vector fields "
                             f"({', '.join(vectors) or 'none'}): name one with --vector-column")
        index = {}
        try:
            if vf in (client.list_indexes(spec.table) or []):
                index = dict(client.describe_index(spec.table, vf) or {})
        except Exception:  # noqa: BLE001 - no index: exact search only
            index = {}
        mt = str(index.get("metric_type") or "COSINE").upper()
        if mt not in METRICS:
            raise StoreError(f"collection {spec.table!r}: metric {mt} is not COSINE, L2 or IP")
        yield _Opened(spec, client, pk, vf, types, index, mt)
    finally:
        if client is not None:
            try:
                client.close()
            except Exception:  # noqa: BLE001
                pass
        shutil.rmtree(tmp, ignore_errors=True)


def _use(spec: MilvusSpec, conn):
    return opened_or(conn, open_collection, spec)


def _literal(value: str, dtype: str, name: str) -> str:
    if dtype in ("VARCHAR", "STRING", "DYNAMIC"):  # a dynamic field has no declared type: compared as a string
        return json.dumps(value)
    if dtype.startswith("INT"):
        try:
            return str(int(value))
        except ValueError:
            raise StoreError(f"--filter {name}={value}: {name} is {dtype}, {value!r} is not an integer") from None
    if dtype in ("FLOAT", "DOUBLE"):
        try:
            f = float(value)
        except ValueError:
            f = float("nan")
        if not np.isfinite(f):
            raise StoreError(f"--filter {name}={value}: {name} is {dtype}, {value!r} is not a finite number")
        return repr(f)
    if dtype == "BOOL":
        if value.strip().lower() not in ("true", "false"):
            raise StoreError(f"--filter {name}={value}: {name} is BOOL, give true or false")
        return value.strip().lower()
    raise StoreError(f"--filter {name}=…: a {dtype} field cannot be filtered on")


def _filter(o: _Opened) -> str:
    """The filters as a Milvus expression: ``f in [v, …]`` per field, fields joined by ``and``."""
    by_field: dict[str, list[str]] = {}
    for name, value in o.spec.filters:
        by_field.setdefault(name, []).append(_literal(value, o.types[name], name))
    return " and ".join(f"{n} in [{', '.join(v)}]" for n, v in by_field.items())


def _iterate(o: _Opened, fields: list[str], expr: str = "") -> Iterator[list[dict]]:
    it = o.client.query_iterator(o.spec.table, batch_size=_BATCH, filter=expr, output_fields=fields)
    try:
        while True:
            b = it.next()
            if not b:
                return
            yield b
    finally:
        it.close()


def _index_detail(o: _Opened) -> str:
    if not o.index:
        return "no approximate index: approximate equals exact"
    t = str(o.index.get("index_type") or "?")
    if t.upper() in ("FLAT", "BRUTE_FORCE"):
        return f"{t} index on {o.vector_field} is exact: no approximate index, approximate equals exact"
    params = {k: v for k, v in o.index.items() if k in ("M", "efConstruction", "nlist")}
    extra = "".join(f", {k} {v}" for k, v in params.items())
    return (f"{t} index {o.index.get('index_name', o.vector_field)} on {o.vector_field} (metric {o.metric_type}{extra}; "
            "Milvus Lite searches segments below its build threshold brute force)")


def check_health(spec: MilvusSpec, corpus=None, model_dims: int | None = None, model_name: str | None = None,
                 conn=None) -> HealthReport:
    """The collection's health: pgvector's findings over its rows streamed with ``query_iterator``.

    ``duplicate_ids`` is checked for real: Milvus does not enforce unique primary keys (Milvus Lite 3
    replaces a row inserted twice, a Milvus server keeps both). See
    :func:`audit.health.rows.health_from_rows` and :func:`audit.stores.pgvector.check_health`.

    Raises
    ------
    StoreError
        As :func:`open_collection`.
    """
    with _use(spec, conn) as o:
        fields = [o.id_field, spec.text_column, o.vector_field] + [c for c in (
            spec.doc_column, spec.start_column, spec.end_column, spec.model_column) if c]

        def batches():
            for b in _iterate(o, list(dict.fromkeys(fields))):
                yield {"ids": [str(r[o.id_field]) for r in b], "texts": [r.get(spec.text_column) for r in b],
                       "vectors": [r.get(o.vector_field) for r in b],
                       "docs": [r.get(spec.doc_column) for r in b] if spec.doc_column else None,
                       "starts": [r.get(spec.start_column) for r in b] if spec.start_column else None,
                       "ends": [r.get(spec.end_column) for r in b] if spec.end_column else None,
                       "models": [r.get(spec.model_column) for r in b] if spec.model_column else None}

        return health_from_rows(spec, batches(), spec_dict={**spec.to_dict(), "metric": o.metric},
                                kind="collection", index_detail=_index_detail(o), corpus=corpus,
                                model_dims=model_dims, model_name=model_name)


def table_dims(spec: MilvusSpec, conn=None) -> int | None:
    """The vector field's declared dimension."""
    with _use(spec, conn) as o:
        desc = o.client.describe_collection(spec.table)
        f = next(f for f in desc["fields"] if f["name"] == o.vector_field)
        dim = (f.get("params") or {}).get("dim")
        return int(dim) if dim is not None else None


def search(spec: MilvusSpec, queries: np.ndarray, k: int, mode: str = "approximate", ef_search: int | None = None,
           probes: int | None = None, conn=None, iterative_scan: str | None = None) -> SearchResult:
    """Top-k rows of each query through the collection's vector index (``search``) or an exact scan.

    Parameters
    ----------
    spec : MilvusSpec
    queries : numpy.ndarray, shape (n_queries, dims)
    k : int
    mode : {"approximate", "exact"}
        ``approximate``: ``client.search`` one query at a time, in the index's metric, with ``ef``
        (HNSW) = ``ef_search`` and ``nprobe`` (IVF) = ``probes`` when given. ``exact``: every vector
        streamed with ``query_iterator`` and ranked in the same metric
        (:func:`audit.stores.scan.exact_topk`), ties by id.
    iterative_scan
        A pgvector setting: not applied (the note says so).

    Returns
    -------
    SearchResult
        Cosine distances in [0, 2] (1 − COSINE similarity, squared L2 / 2, 1 − IP; NaN for L2/IP rows
        that are not unit length).

    Raises
    ------
    StoreError
        Bad arguments, query dims not the collection's, a bad filter value.
    """
    q = check_search(queries, k, mode)
    notes: list[str] = []
    if iterative_scan is not None:
        notes.append("iterative scans are a pgvector setting: not applied")
    with _use(spec, conn) as o:
        dims = table_dims(spec, o)
        if dims is not None and dims != q.shape[1]:
            raise StoreError(f"query vectors have {q.shape[1]} dimensions, field {o.vector_field!r} of "
                             f"{spec.table!r} has {dims}: embed the queries with the collection's model")
        expr = _filter(o)
        ids, raw, vecs, texts, ms = [], [], [], [], []
        if mode == "approximate":
            params = {}
            if ef_search is not None:
                params["ef"] = int(ef_search)
            if probes is not None:
                params["nprobe"] = int(probes)
            for x in q:
                t0 = time.perf_counter()
                r = o.client.search(spec.table, data=[x.tolist()], limit=int(k), anns_field=o.vector_field,
                                    filter=expr, output_fields=[spec.text_column, o.vector_field],
                                    search_params={"metric_type": o.metric_type, "params": params})
                ms.append((time.perf_counter() - t0) * 1000.0)
                hits = list(r[0])
                # the engine's order is the metric's: similarity (COSINE, IP) descending, L2 ascending
                sign = 1.0 if o.metric_type == "L2" else -1.0
                hits.sort(key=lambda h: (sign * float(h["distance"]), str(h["id"])))
                ids.append([str(h["id"]) for h in hits])
                raw.append([float(h["distance"]) for h in hits])
                texts.append([h["entity"].get(spec.text_column) for h in hits])
                vecs.append([np.asarray(h["entity"].get(o.vector_field), np.float32) for h in hits])
            index = (str(o.index.get("index_name") or o.vector_field) if o.index and
                     str(o.index.get("index_type", "")).upper() not in ("FLAT", "BRUTE_FORCE") else None)
            settings = {f"milvus.{k_}": str(v) for k_, v in params.items()}
            if index is None:
                notes.append(_index_detail(o))
            if spec.filters:
                notes.append("filtered: Milvus Lite applies the filter before the vector search")
        else:
            t0 = time.perf_counter()
            kind = {"COSINE": "cosine", "L2": "l2sq", "IP": "ip_distance"}[o.metric_type]
            batches = (([str(r[o.id_field]) for r in b], np.asarray([r[o.vector_field] for r in b], np.float32))
                       for b in _iterate(o, [o.id_field, o.vector_field], expr))
            ids, raw, vecs = exact_topk(batches, q, int(k), kind)
            ms = [(time.perf_counter() - t0) * 1000.0 / len(q)] * len(q)
            text_of = _texts(o, {i for row in ids for i in row})
            texts = [[text_of.get(i) for i in row] for row in ids]
            index, settings, raw_kind = None, {}, kind
        if mode == "approximate":
            raw_kind = o.kind
    return search_result(mode, int(k), o.metric, raw_kind, index, ids, raw, vecs, q, texts, ms, settings, notes)


def _rows_by_id(o: _Opened, ids: set[str], fields: list[str]) -> list[dict]:
    if not ids:
        return []
    pk_type = o.types.get(o.id_field, "VARCHAR")
    out = []
    want = sorted(ids)
    for i in range(0, len(want), 500):
        lits = ", ".join(_literal(x, pk_type, o.id_field) for x in want[i:i + 500])
        out += o.client.query(o.spec.table, filter=f"{o.id_field} in [{lits}]", output_fields=fields)
    return out


def _texts(o: _Opened, ids: set[str]) -> dict[str, str]:
    return {str(r[o.id_field]): r.get(o.spec.text_column) for r in _rows_by_id(o, ids, [o.id_field, o.spec.text_column])}


def chunks(spec: MilvusSpec, o: _Opened, ids: set[str]) -> list[UserChunk]:
    """The rows ``ids`` of the opened collection as UserChunks (text, document and offsets from its fields)."""
    fields = list(dict.fromkeys([o.id_field, spec.text_column] + [c for c in (spec.doc_column, spec.start_column,
                                                                               spec.end_column) if c]))
    out = []
    for r in sorted(_rows_by_id(o, ids, fields), key=lambda r: str(r[o.id_field])):
        doc = r.get(spec.doc_column) if spec.doc_column else None
        s = r.get(spec.start_column) if spec.start_column else None
        e = r.get(spec.end_column) if spec.end_column else None
        ok = isinstance(s, int) and isinstance(e, int)
        out.append(UserChunk(str(r[o.id_field]), "" if doc is None else str(doc), r.get(spec.text_column) or "",
                             None, s if ok else None, e if ok else None))
    return out


def stream_rows(spec: MilvusSpec, o: _Opened):
    """``(id, text, doc id)`` of every row of the opened collection, streamed with ``query_iterator``."""
    fields = list(dict.fromkeys([o.id_field, spec.text_column] + ([spec.doc_column] if spec.doc_column else [])))
    for b in _iterate(o, fields):
        for r in b:
            d = r.get(spec.doc_column) if spec.doc_column else None
            yield str(r[o.id_field]), r.get(spec.text_column), None if d is None else str(d)
