"""Chroma: the spec, a read-only opening (a copy of a folder, or a server), health, search and the store system."""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator
from urllib.parse import urlsplit

import numpy as np

from ..filters import check_filters
from ...sources.imported.chunks import UserChunk
from ...health import HealthReport
from ..base import SearchResult, StoreError, check_search
from ...health.rows import health_from_rows
from ..scan import exact_topk, search_result
from ..spec import check_offsets, described, filters_said, opened_or

__all__ = ["ChromaSpec", "check_health", "chunks", "open_collection", "search", "stream_rows", "table_dims"]

#: Chroma's distance spaces → the raw kind of :func:`audit.stores.scan.to_cosine` and the store metric.
SPACES = {"cosine": ("cosine", "cosine"), "l2": ("l2sq", "l2"), "ip": ("ip_distance", "ip")}

_PAGE = 1000


@dataclass(frozen=True)
class ChromaSpec:
    """Which Chroma collection, and which metadata keys hold the document, offsets and model stamp.

    Parameters
    ----------
    uri : str
        ``chroma://HOST:PORT`` (a server, HTTP), ``chroma:FOLDER`` / ``chroma:///abs/folder`` or a
        plain folder path (a persistent client's folder, holding ``chroma.sqlite3``).
    table : str
        The collection's name.
    doc_column, start_column, end_column, model_column : str, optional
        Metadata keys: document id, content offsets (code points of the canonical text, end exclusive;
        both or neither, with ``doc_column``), model stamp. Ids, texts (``documents``) and vectors
        (``embeddings``) are Chroma's own.
    filters : tuple of (str, str)
        ``(key, value)`` pairs every search keeps to (a ``where`` on the metadata): a string value
        equal to it, or a number or boolean whose text is it (``42`` → 42, ``true`` → True); values of
        one key OR-ed, keys AND-ed.

    Raises
    ------
    StoreError
        An empty name, offsets without a document key, a bad filter, a URI that is neither form.
    """

    uri: str
    table: str
    doc_column: str | None = None
    start_column: str | None = None
    end_column: str | None = None
    model_column: str | None = None
    filters: tuple = ()

    id_column = "id"
    text_column = "document"
    vector_column = "embedding"

    def __post_init__(self) -> None:
        if not isinstance(self.table, str) or not self.table.strip():
            raise StoreError(f"collection must be a non-empty name, got {self.table!r}")
        if not isinstance(self.uri, str) or not self.uri.strip():
            raise StoreError("no Chroma store: give chroma://HOST:PORT or a folder")
        check_offsets(self, "keys")
        object.__setattr__(self, "filters", check_filters(self.filters))
        self.server  # noqa: B018 - validates the URI

    @property
    def server(self) -> tuple[str, int, bool] | None:
        """``(host, port, ssl)`` for a server URI, None for a folder."""
        u = self.uri.strip()
        if u.startswith(("chroma://", "chromas://")) and not u.startswith(("chroma:///", "chromas:///")):
            p = urlsplit(u)
            if not p.hostname:
                raise StoreError(f"{u!r}: chroma://HOST:PORT needs a host")
            try:
                port = p.port or (443 if p.scheme == "chromas" else 8000)
            except ValueError:
                raise StoreError(f"{u!r}: the port is not a number") from None
            return p.hostname, port, p.scheme == "chromas"
        return None

    @property
    def folder(self) -> Path | None:
        """The persistent folder for a folder URI, None for a server."""
        if self.server is not None:
            return None
        u = self.uri.strip()
        if u.startswith("chroma:"):
            u = u[len("chroma:"):]
            if u.startswith("//"):
                u = u[2:]
        return Path(u)

    @property
    def columns(self) -> dict[str, str]:
        roles = {"doc": self.doc_column, "start": self.start_column, "end": self.end_column,
                 "model": self.model_column}
        return {k: v for k, v in roles.items() if v is not None}

    @property
    def redacted_uri(self) -> str:
        """The location (a Chroma URI holds no secret: a token comes from Chroma's own environment variables)."""
        return self.uri if self.server is not None else f"chroma:{self.folder.name}"

    @property
    def provenance(self) -> str:
        keys = ", ".join(f"{k}={v}" for k, v in self.columns.items())
        return (f"Chroma collection {self.table} ({keys or 'no metadata keys'}{filters_said(self.filters)}) in "
                f"{self.redacted_uri}")

    def to_dict(self) -> dict:
        return described(self.redacted_uri, self.table, "the collection's", self.columns, self.filters, "chroma")


@dataclass
class _Opened:
    spec: ChromaSpec
    client: object
    collection: object
    space: str
    hnsw: dict

    @property
    def kind(self) -> str:
        return SPACES[self.space][0]

    @property
    def metric(self) -> str:
        return SPACES[self.space][1]


def _chromadb():
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")  # before chromadb reads its settings
    try:
        import chromadb
        from chromadb.config import Settings
    except ImportError:
        raise StoreError("chromadb is not installed: pip install 'retrieval-audit[chroma]' to audit a Chroma "
                         "collection") from None
    return chromadb, Settings(anonymized_telemetry=False, allow_reset=False)


@contextmanager
def open_collection(spec: ChromaSpec) -> Iterator[_Opened]:
    """Open the collection read-only: a server through ``HttpClient``, a folder as a temporary copy.

    The copy is removed on exit, so the user's folder is never migrated or written; no embedding
    function is attached (``embedding_function=None``).

    Raises
    ------
    StoreError
        chromadb missing, the server unreachable, the folder missing or not a Chroma folder, no such
        collection (the message lists the ones there).
    """
    chromadb, settings = _chromadb()
    tmp = None
    try:
        if spec.server is not None:
            host, port, ssl = spec.server
            try:
                client = chromadb.HttpClient(host=host, port=port, ssl=ssl, settings=settings)
                client.heartbeat()
            except Exception as e:  # noqa: BLE001 - one line
                raise StoreError(f"cannot reach the Chroma server {spec.redacted_uri}: "
                                 f"{' '.join(str(e).split()) or type(e).__name__}") from None
        else:
            folder = spec.folder
            if not (folder / "chroma.sqlite3").is_file():
                raise StoreError(f"{folder}: not a Chroma folder (no chroma.sqlite3)" if folder.is_dir()
                                 else f"{folder}: no such folder")
            tmp = Path(tempfile.mkdtemp(prefix="audit-chroma-"))
            shutil.copytree(folder, tmp / "db")
            client = chromadb.PersistentClient(path=str(tmp / "db"), settings=settings)
        try:
            col = client.get_collection(spec.table, embedding_function=None)
        except Exception:  # noqa: BLE001 - NotFoundError across versions
            names = sorted(c.name if hasattr(c, "name") else str(c) for c in client.list_collections())
            raise StoreError(f"collection {spec.table!r} does not exist in {spec.redacted_uri}; its collections: "
                             f"{', '.join(names) or 'none'}") from None
        cfg = dict(getattr(col, "configuration", None) or {})
        hnsw = dict(cfg.get("hnsw") or {})
        meta = dict(col.metadata or {})
        space = str(hnsw.get("space") or meta.get("hnsw:space") or "l2").lower()
        if space not in SPACES:
            raise StoreError(f"collection {spec.table!r}: distance space {space!r} is not cosine, l2 or ip")
        yield _Opened(spec, client, col, space, hnsw)
    finally:
        if tmp is not None:
            try:
                from chromadb.api.shared_system_client import SharedSystemClient

                SharedSystemClient.clear_system_cache()  # release the copy's files before removing them
            except Exception:  # noqa: BLE001 - older layouts
                pass
            shutil.rmtree(tmp, ignore_errors=True)


def _use(spec: ChromaSpec, conn):
    return opened_or(conn, open_collection, spec)


def _typed(value: str) -> list:
    out: list = [value]
    low = value.strip().lower()
    if low in ("true", "false"):
        out.append(low == "true")
    else:
        try:
            out.append(int(value))
        except ValueError:
            try:
                f = float(value)
                if np.isfinite(f):
                    out.append(f)
            except ValueError:
                pass
    return out


def _where(spec: ChromaSpec) -> dict | None:
    """The filters as a Chroma ``where``: per key an ``$or`` of ``$eq`` over the value's forms, keys ``$and``-ed."""
    by_key: dict[str, list] = {}
    for k, v in spec.filters:
        by_key.setdefault(k, []).extend(_typed(v))
    clauses = []
    for k, values in by_key.items():
        eqs = [{k: {"$eq": x}} for x in values]
        clauses.append(eqs[0] if len(eqs) == 1 else {"$or": eqs})
    if not clauses:
        return None
    return clauses[0] if len(clauses) == 1 else {"$and": clauses}


def _pages(o: _Opened, include: list[str], where=None) -> Iterator[dict]:
    offset = 0
    while True:
        got = o.collection.get(include=include, limit=_PAGE, offset=offset, where=where)
        n = len(got["ids"])
        if n == 0:
            return
        yield got
        offset += n
        if n < _PAGE:
            return


def _index_detail(o: _Opened) -> str:
    h = o.hnsw
    parts = [f"space {o.space}"] + [f"{k} {h[k]}" for k in ("max_neighbors", "ef_construction", "ef_search") if k in h]
    return f"hnsw index of collection {o.spec.table} ({', '.join(parts)})"


def check_health(spec: ChromaSpec, corpus=None, model_dims: int | None = None, model_name: str | None = None,
                 conn=None) -> HealthReport:
    """The collection's health: pgvector's findings over its rows streamed with ``get`` (1,000 a page).

    ``null_vectors``, ``non_finite`` and ``duplicate_ids`` are ``ok`` with the reason: Chroma stores one
    vector a row, refuses NaN and ±Inf, and keeps ids unique. See
    :func:`audit.health.rows.health_from_rows` and :func:`audit.stores.pgvector.check_health`.

    Raises
    ------
    StoreError
        As :func:`open_collection`.
    """
    with _use(spec, conn) as o:
        def batches():
            for g in _pages(o, ["embeddings", "documents", "metadatas"]):
                metas = g["metadatas"] or [None] * len(g["ids"])
                meta = [m or {} for m in metas]
                yield {"ids": g["ids"], "texts": g["documents"], "vectors": list(g["embeddings"]),
                       "docs": [m.get(spec.doc_column) for m in meta] if spec.doc_column else None,
                       "starts": [m.get(spec.start_column) for m in meta] if spec.start_column else None,
                       "ends": [m.get(spec.end_column) for m in meta] if spec.end_column else None,
                       "models": [m.get(spec.model_column) for m in meta] if spec.model_column else None}

        return health_from_rows(spec, batches(), spec_dict={**spec.to_dict(), "metric": o.metric},
                                kind="collection", index_detail=_index_detail(o), corpus=corpus,
                                model_dims=model_dims, model_name=model_name,
                                not_applicable={"null_vectors": "Chroma stores one vector a row",
                                                "non_finite": "Chroma refuses NaN and ±Inf on insert",
                                                "duplicate_ids": "Chroma ids are unique"})


def table_dims(spec: ChromaSpec, conn=None) -> int | None:
    """The collection's vector dimension (that of its first row), None when empty."""
    with _use(spec, conn) as o:
        g = o.collection.get(include=["embeddings"], limit=1)
        return len(g["embeddings"][0]) if g["ids"] else None


def search(spec: ChromaSpec, queries: np.ndarray, k: int, mode: str = "approximate", ef_search: int | None = None,
           probes: int | None = None, conn=None, iterative_scan: str | None = None) -> SearchResult:
    """Top-k rows of each query through the collection's HNSW index (``query``) or an exact scan.

    Parameters
    ----------
    spec : ChromaSpec
    queries : numpy.ndarray, shape (n_queries, dims)
    k : int
    mode : {"approximate", "exact"}
        ``approximate``: ``collection.query(query_embeddings=…, n_results=k)`` one query at a time (its
        wall time in ``ms``). ``exact``: every vector streamed with ``get`` and ranked in the collection's
        space (:func:`audit.stores.scan.exact_topk`), ties by id.
    ef_search, probes, iterative_scan
        Not applied: Chroma's ``ef_search`` is a setting of the collection (changing it would write);
        the note says so.

    Returns
    -------
    SearchResult
        Distances converted to cosine distance in [0, 2] (cosine as is, squared L2 / 2, 1 − inner
        product; NaN for L2/IP rows that are not unit length).

    Raises
    ------
    StoreError
        Bad arguments, query dims not the collection's, the store unreachable.
    """
    q = check_search(queries, k, mode)
    notes: list[str] = []
    with _use(spec, conn) as o:
        if ef_search is not None:
            notes.append(f"ef_search is a setting of the Chroma collection (now {o.hnsw.get('ef_search', '?')}), "
                         "which an audit does not change: not applied")
        if probes is not None or iterative_scan is not None:
            notes.append("probes and iterative scans are pgvector settings: not applied")
        dims = table_dims(spec, o)
        if dims is not None and dims != q.shape[1]:
            raise StoreError(f"query vectors have {q.shape[1]} dimensions, collection {spec.table!r} has {dims}: "
                             "embed the queries with the collection's model")
        where = _where(spec)
        ids, raw, vecs, texts, ms = [], [], [], [], []
        if mode == "approximate":
            for x in q:
                t0 = time.perf_counter()
                r = o.collection.query(query_embeddings=[x.tolist()], n_results=int(k), where=where,
                                       include=["distances", "documents", "embeddings"])
                ms.append((time.perf_counter() - t0) * 1000.0)
                rows = sorted(zip(r["distances"][0], r["ids"][0], r["documents"][0], r["embeddings"][0]),
                              key=lambda t: (t[0], t[1]))
                ids.append([t[1] for t in rows])
                raw.append([t[0] for t in rows])
                texts.append([t[2] for t in rows])
                vecs.append([np.asarray(t[3], np.float32) for t in rows])
            index = f"hnsw ({spec.table})"
            settings = {"hnsw.ef_search": str(o.hnsw.get("ef_search", ""))}
            if spec.filters:
                notes.append("filtered: Chroma restricts the HNSW search to the rows that pass the where")
        else:
            t0 = time.perf_counter()
            ids, raw, vecs = exact_topk(((g["ids"], np.asarray(g["embeddings"], np.float32))
                                          for g in _pages(o, ["embeddings"], where)), q, int(k), o.kind)
            ms = [(time.perf_counter() - t0) * 1000.0 / len(q)] * len(q)
            want = sorted({i for row in ids for i in row})
            got = o.collection.get(ids=want, include=["documents"]) if want else {"ids": [], "documents": []}
            text_of = dict(zip(got["ids"], got["documents"]))
            texts = [[text_of.get(i) for i in row] for row in ids]
            index, settings = None, {}
    return search_result(mode, int(k), o.metric, o.kind, index, ids, raw, vecs, q, texts, ms, settings, notes)


def chunks(spec: ChromaSpec, o: _Opened, ids: set[str]) -> list[UserChunk]:
    """The rows ``ids`` of the opened collection as UserChunks (text, document and offsets from the metadata)."""
    if not ids:
        return []
    got = o.collection.get(ids=sorted(ids), include=["documents", "metadatas"])
    out = []
    for rid, text, meta in sorted(zip(got["ids"], got["documents"], got["metadatas"] or [None] * len(got["ids"])),
                                  key=lambda t: t[0]):
        meta = meta or {}
        doc = meta.get(spec.doc_column) if spec.doc_column else None
        s = meta.get(spec.start_column) if spec.start_column else None
        e = meta.get(spec.end_column) if spec.end_column else None
        ok = isinstance(s, int) and isinstance(e, int) and not isinstance(s, bool) and not isinstance(e, bool)
        out.append(UserChunk(rid, "" if doc is None else str(doc), text or "", None, s if ok else None,
                             e if ok else None))
    return out


def stream_rows(spec: ChromaSpec, o: _Opened):
    """``(id, text, doc id)`` of every row of the opened collection, 1,000 a page (no vector travels)."""
    for g in _pages(o, ["documents", "metadatas"]):
        metas = g["metadatas"] or [None] * len(g["ids"])
        for rid, text, meta in zip(g["ids"], g["documents"], metas):
            d = (meta or {}).get(spec.doc_column) if spec.doc_column else None
            yield rid, text, None if d is None else str(d)
