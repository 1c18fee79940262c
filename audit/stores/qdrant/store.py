"""A local-mode Qdrant collection (``qdrant-local:FOLDER``, payload keys): a copy opened, searched both ways.

Ids are the points' ids (integers or UUIDs, as text); the text, document, offsets and model stamp are payload
keys (``text`` by default; LangChain's Qdrant store writes ``page_content`` and ``metadata.KEY``, named as
``metadata.doc_id``). The vector is the collection's unnamed vector, or the named one ``vector_column`` names.
Scores: Cosine collections answer cosine similarity (Qdrant normalises their vectors on insert), Dot the inner
product, Euclid the Euclidean distance (squared here for :func:`audit.stores.scan.search_result`).
"""

from __future__ import annotations

import shutil
import tempfile
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

__all__ = ["QdrantSpec", "check_health", "chunks", "open_collection", "search", "stream_rows", "table_dims"]

_PAGE = 1000
#: Qdrant's distances → (the store metric, the raw kind of the approximate answer, of the exact scan).
_METRICS = {"Cosine": ("cosine", "cosine_similarity", "cosine"), "Dot": ("ip", "ip", "ip_distance"),
            "Euclid": ("l2", "l2sq", "l2sq")}


@dataclass(frozen=True)
class QdrantSpec:
    """Which local-mode folder and collection, and which payload keys hold the text, document, offsets, model.

    Parameters
    ----------
    uri : str
        ``qdrant-local:FOLDER`` (the folder ``QdrantClient(path=…)`` was given).
    table : str
        The collection's name.
    text_column, doc_column, start_column, end_column, model_column : str or None
        Payload keys (``text`` by default); a dotted key reads a nested one (``metadata.doc_id``).
    vector_column : str or None
        The named vector to read (None: the collection's unnamed vector).

    Raises
    ------
    StoreError
        An empty collection name, an id column (points have their own ids), offsets without a document key, a
        filter (not offered for Qdrant local mode).
    """

    uri: str
    table: str
    text_column: str = "text"
    vector_column: str | None = None
    doc_column: str | None = None
    start_column: str | None = None
    end_column: str | None = None
    model_column: str | None = None
    filters: tuple = ()

    id_column = "id"

    def __post_init__(self) -> None:
        if not isinstance(self.table, str) or not self.table.strip():
            raise StoreError("a Qdrant store needs its collection's name (--table)")
        if self.filters:
            raise StoreError("--filter is not offered for a Qdrant local-mode collection: it is searched whole")
        check_offsets(self, "keys")

    @property
    def folder(self) -> Path:
        u = self.uri.strip()
        return Path(u[len("qdrant-local:"):] if u.startswith("qdrant-local:") else u)

    @property
    def columns(self) -> dict[str, str]:
        roles = {"text": self.text_column, "vector": self.vector_column, "doc": self.doc_column,
                 "start": self.start_column, "end": self.end_column, "model": self.model_column}
        return {k: v for k, v in roles.items() if v is not None}

    @property
    def provenance(self) -> str:
        return f"Qdrant collection {self.table} in qdrant-local:{self.folder.name} (a copy, local mode)"

    def to_dict(self) -> dict:
        return described(f"qdrant-local:{self.folder.name}", self.table, "the collection's", self.columns, (),
                         "qdrant")


def _key(payload, key: str | None):
    if not key:
        return None
    v = payload or {}
    for part in key.split("."):
        if not isinstance(v, dict):
            return None
        v = v.get(part)
    return v


class _Opened:
    def __init__(self, spec: QdrantSpec, client) -> None:
        self.client = client
        try:
            info = client.get_collection(spec.table)
        except (ValueError, KeyError) as e:
            raise StoreError(f"qdrant-local:{spec.folder.name}: no collection {spec.table!r} ({e})") from None
        vectors = info.config.params.vectors
        if isinstance(vectors, dict):
            if spec.vector_column not in vectors:
                raise StoreError(f"collection {spec.table!r} has named vectors {', '.join(sorted(vectors))}: name "
                                 "one (--vector-column)")
            params = vectors[spec.vector_column]
        else:
            if spec.vector_column:
                raise StoreError(f"collection {spec.table!r} has one unnamed vector: drop --vector-column")
            params = vectors
        dist = getattr(params.distance, "value", str(params.distance))
        if dist not in _METRICS:
            raise StoreError(f"collection {spec.table!r}: distance {dist} has no cosine reading (Cosine, Dot or "
                             "Euclid are audited)")
        self.distance = dist
        self.metric, self.kind, self.exact_kind = _METRICS[dist]
        self.dims = int(params.size)
        self.using = spec.vector_column

        self._missing: int | None = None

    def vector(self, v) -> np.ndarray | None:
        """A point's vector under the name read; None when the point has none under it (named vectors are
        optional per point)."""
        if isinstance(v, dict):
            v = v.get(self.using)
        return None if v is None else np.asarray(v, np.float32)

    def missing(self, spec: "QdrantSpec") -> int:
        """Points without a vector under the name read (0 for an unnamed vector, which every point has); counted
        once per opening with ``scroll``."""
        if not self.using:
            return 0
        if self._missing is None:
            self._missing = sum(self.vector(p.vector) is None for pts in _scroll(self, spec, True) for p in pts)
        return self._missing

    def missing_note(self, spec: "QdrantSpec") -> str:
        """The note for :meth:`missing` points ("" when none)."""
        n = self.missing(spec)
        return (f"{n} point{'s' if n != 1 else ''} of {spec.table!r} {'have' if n != 1 else 'has'} no vector named "
                f"{self.using!r}: left out of the search" if n else "")


@contextmanager
def open_collection(spec: QdrantSpec) -> Iterator[_Opened]:
    """The collection, from a temporary copy of the folder (the client writes a lock file; local mode unpickles).

    Raises
    ------
    StoreError
        qdrant-client not installed, no folder, no such collection, a vector name missing.
    """
    try:
        from qdrant_client import QdrantClient
    except ImportError:
        raise StoreError("a Qdrant local-mode folder needs its extra: pip install 'retrieval-audit[qdrant]'") from None
    if not (spec.folder / "collection").is_dir():
        raise StoreError(f"qdrant-local:{spec.folder.name}: not a Qdrant local-mode folder (no collection/)")
    with tempfile.TemporaryDirectory(prefix="audit-qdrant-") as tmp:
        copy = Path(tmp) / spec.folder.name
        shutil.copytree(spec.folder, copy, ignore=shutil.ignore_patterns(".lock"))
        client = QdrantClient(path=str(copy))
        try:
            yield _Opened(spec, client)
        finally:
            client.close()


def _scroll(o: _Opened, spec: QdrantSpec, with_vectors: bool):
    offset = None
    while True:
        pts, offset = o.client.scroll(spec.table, limit=_PAGE, offset=offset, with_payload=True,
                                      with_vectors=[o.using] if (with_vectors and o.using) else with_vectors)
        yield pts
        if offset is None:
            return


def check_health(spec: QdrantSpec, corpus=None, model_dims: int | None = None, model_name: str | None = None,
                 conn=None):
    """The collection's health: the store findings of every engine over its points streamed with ``scroll``.

    Raises
    ------
    StoreError
        As :func:`open_collection`.
    """
    with opened_or(conn, open_collection, spec) as o:
        def batches():  # a point without the named vector is a row without a vector (null_vectors names it)
            for pts in _scroll(o, spec, True):
                yield {"ids": [str(p.id) for p in pts], "texts": [_key(p.payload, spec.text_column) for p in pts],
                       "vectors": [o.vector(p.vector) for p in pts],
                       "docs": [_key(p.payload, spec.doc_column) for p in pts],
                       "starts": [_key(p.payload, spec.start_column) for p in pts],
                       "ends": [_key(p.payload, spec.end_column) for p in pts],
                       "models": [_key(p.payload, spec.model_column) for p in pts]}

        detail = (f"local mode, {o.distance}: searched by brute force (no HNSW in local mode), so approximate "
                  "equals exact")
        return health_from_rows(spec, batches(), spec_dict={**spec.to_dict(), "metric": o.metric},
                                kind="collection", index_detail=detail, corpus=corpus, model_dims=model_dims,
                                model_name=model_name,
                                not_applicable=({} if o.using else {"null_vectors": "Qdrant stores the unnamed "
                                                                                    "vector for every point"})
                                | {"duplicate_ids": "Qdrant point ids are unique"},
                                no_vector=f"have no vector named {o.using!r}" if o.using else "have no vector")


def table_dims(spec: QdrantSpec, conn=None) -> int | None:
    """The collection's vector size."""
    with opened_or(conn, open_collection, spec) as o:
        return o.dims


def search(spec: QdrantSpec, queries: np.ndarray, k: int, mode: str = "approximate", ef_search: int | None = None,
           probes: int | None = None, conn=None, iterative_scan: str | None = None) -> SearchResult:
    """Top-k points of each query through ``query_points`` (local mode: brute force) or an exact scan.

    Parameters
    ----------
    spec : QdrantSpec
    queries : numpy.ndarray, shape (n_queries, dims)
    k : int
    mode : {"approximate", "exact"}
        ``approximate``: ``query_points`` one query at a time (its wall time in ``ms``); ``exact``: every vector
        streamed with ``scroll`` and ranked here (:func:`audit.stores.scan.exact_topk`).
    ef_search, probes, iterative_scan
        Not applied: local mode has no index; the note says so.

    Returns
    -------
    SearchResult
        Cosine distances in [0, 2] (1 − cosine similarity, 1 − inner product, squared Euclidean / 2), rows
        scored by the one rule.

    Raises
    ------
    StoreError
        Bad arguments, query dims not the collection's.

    Points without a vector under the name read (named vectors are optional per point) are left out of both
    modes (``query_points`` never returns them) and counted in the note.
    """
    q = check_search(queries, k, mode)
    notes = ["Qdrant local mode searches by brute force: approximate equals exact"] if mode == "approximate" else []
    if any(x is not None for x in (ef_search, probes, iterative_scan)):
        notes.append("ef_search, probes and iterative scans not applied: local mode has no index")
    with opened_or(conn, open_collection, spec) as o:
        if o.dims != q.shape[1]:
            raise StoreError(f"query vectors have {q.shape[1]} dimensions, collection {spec.table!r} has {o.dims}: "
                             "embed the queries with the collection's model")
        if mode == "approximate":
            ids, raw, vecs, texts, ms = [], [], [], [], []
            for x in q:
                t0 = time.perf_counter()
                r = o.client.query_points(spec.table, query=x.tolist(), using=o.using, limit=int(k),
                                          with_payload=True, with_vectors=[o.using] if o.using else True)
                ms.append((time.perf_counter() - t0) * 1000.0)
                pts = r.points
                ids.append([str(p.id) for p in pts])
                # Euclid answers the distance itself: squared, as the kind reads it
                raw.append([p.score ** 2 if o.distance == "Euclid" else p.score for p in pts])
                texts.append([_key(p.payload, spec.text_column) for p in pts])
                vecs.append([o.vector(p.vector) for p in pts])
            kind, index = o.kind, f"local mode ({o.distance}, brute force)"
        else:
            t0 = time.perf_counter()
            pages = []
            for pts in _scroll(o, spec, True):
                pts = [p for p in pts if o.vector(p.vector) is not None]  # no vector under the name: not ranked
                pages.append((pts, [str(p.id) for p in pts], np.stack([o.vector(p.vector) for p in pts]) if pts
                              else np.zeros((0, o.dims), np.float32)))
            ids, raw, vecs = exact_topk(((i, v) for _, i, v in pages), q, int(k), o.exact_kind)
            ms = [(time.perf_counter() - t0) * 1000.0 / len(q)] * len(q)
            text_of = {str(p.id): _key(p.payload, spec.text_column) for pts, _, _ in pages for p in pts}
            texts = [[text_of.get(i) for i in row] for row in ids]
            kind, index = o.exact_kind, None
        if o.missing_note(spec):
            notes.append(o.missing_note(spec))
        return search_result(mode, int(k), o.metric, kind, index, ids, raw, vecs, q, texts, ms, {}, notes)


def chunks(spec: QdrantSpec, o: _Opened, ids: set[str]) -> list[UserChunk]:
    """The points ``ids`` as UserChunks (text, document and offsets from the payload), id order."""
    out = []
    for pts in _scroll(o, spec, False):
        for p in pts:
            if str(p.id) in ids:
                doc = _key(p.payload, spec.doc_column)
                s, e = _key(p.payload, spec.start_column), _key(p.payload, spec.end_column)
                ok = isinstance(s, int) and isinstance(e, int) and not isinstance(s, bool) and not isinstance(e, bool)
                out.append(UserChunk(str(p.id), "" if doc is None else str(doc),
                                     _key(p.payload, spec.text_column) or "", None, s if ok else None,
                                     e if ok else None))
    return sorted(out, key=lambda c: c.chunk_id)


def stream_rows(spec: QdrantSpec, o: _Opened):
    """``(id, text, doc id)`` of every point, 1,000 a page (no vector travels)."""
    for pts in _scroll(o, spec, False):
        for p in pts:
            d = _key(p.payload, spec.doc_column)
            yield str(p.id), _key(p.payload, spec.text_column), None if d is None else str(d)
