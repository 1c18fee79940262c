"""A FAISS index file and its rows file: opened read-only, searched through its index or scanned exactly.

:func:`open_index` reads the index into memory (``faiss.read_index``; the file is never written, so the team's
process keeps using it) and the rows that say what each label is (:mod:`audit.stores.faiss.rows`). The exact
scan ranks the index's own vectors: the rows file's flat vectors where it has them, else the vectors
reconstructed from the index (exact for flat storage — ``IndexFlat*``, ``IndexIVFFlat``, ``IndexHNSWFlat`` —
and the codes' decoding for PQ/SQ variants, which the note says). Search settings applied: ``probes`` as the
IVF ``nprobe`` and ``ef_search`` as the HNSW ``efSearch``, each on this process's copy of the index.
"""

from __future__ import annotations

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
from ..spec import check_offsets, described
from .rows import NO_RESULT, FaissRow, llamaindex_rows, read_rows, refuse_pickle

__all__ = ["FaissSpec", "check_health", "chunks", "open_index", "search", "stream_rows", "table_dims"]

#: LlamaIndex's persisted FAISS index (binary, despite the name) and its two JSON stores.
LLAMAINDEX = ("default__vector_store.json", "docstore.json", "index_store.json")


@dataclass(frozen=True)
class FaissSpec:
    """Which index file, which rows file, and the rows file's columns.

    Parameters
    ----------
    uri : str
        ``faiss:PATH``: the index file (``index.faiss``, any name), or a folder holding ``index.faiss`` or
        LlamaIndex's persisted stores.
    table : str or None
        The rows file (JSONL or Parquet) in the index's folder (a relative name is taken from there); None,
        ``docstore.json`` or ``index_store.json``: LlamaIndex's stores beside the index.
    id_column, text_column, vector_column, doc_column, start_column, end_column, model_column : str or None
        The rows file's columns (``id``, ``text`` by default; a flat ``vector`` column makes the exact scan use
        the team's vectors rather than the index's reconstruction); for LlamaIndex, metadata keys.

    Raises
    ------
    StoreError
        Offsets without a document column, a filter (FAISS has no metadata to filter on).
    """

    uri: str
    table: str | None = None
    id_column: str | None = None
    text_column: str | None = None
    vector_column: str | None = None
    doc_column: str | None = None
    start_column: str | None = None
    end_column: str | None = None
    model_column: str | None = None
    filters: tuple = ()

    def __post_init__(self) -> None:
        if not isinstance(self.uri, str) or not self.uri.strip():
            raise StoreError("no FAISS index: give faiss:PATH (the index file, or its folder)")
        if self.filters:
            raise StoreError("a FAISS index has no metadata to filter on: drop --filter")
        check_offsets(self, "columns")

    @property
    def path(self) -> Path:
        u = self.uri.strip()
        return Path(u[len("faiss:"):] if u.startswith("faiss:") else u)

    def files(self) -> tuple[Path, Path | None, str]:
        """``(index file, rows file or LlamaIndex folder, "rows" | "llamaindex")``.

        Raises
        ------
        StoreError
            No index; a LangChain folder (``index.pkl``) without a rows file; a ``.pkl`` rows file.
        """
        p = self.path
        folder = p if p.is_dir() else p.parent
        if p.is_dir():
            if (p / LLAMAINDEX[0]).is_file():
                p = p / LLAMAINDEX[0]
            elif (p / "index.faiss").is_file():
                p = p / "index.faiss"
            else:
                raise StoreError(f"{p.name}: no FAISS index in the folder (index.faiss, or LlamaIndex's "
                                 f"{LLAMAINDEX[0]})")
        elif not p.is_file():
            raise StoreError(f"{p.name}: FAISS index file not found")
        if self.table and Path(self.table).name not in LLAMAINDEX[1:]:
            t = Path(self.table)
            t = t if t.is_absolute() else folder / t
            if t.suffix.lower() in (".pkl", ".pickle"):
                refuse_pickle(t)
            # beside its index: the folder named is the one an operator allowed, and nothing outside it is read
            if not t.resolve().is_relative_to(folder.resolve()):
                raise StoreError(f"{t.name}: the rows file must lie in the index's folder ({folder.name}), beside "
                                 "the index")
            return p, t, "rows"
        if all((folder / f).is_file() for f in LLAMAINDEX[1:]):
            return p, folder, "llamaindex"
        if (folder / "index.pkl").exists():
            refuse_pickle(folder / "index.pkl")
        raise StoreError(f"{p.name}: which row is which? give the rows file (--table FILE: JSONL or Parquet with "
                         "row, id, text)")

    @property
    def columns(self) -> dict[str, str]:
        roles = {"id": self.id_column or "id", "text": self.text_column or "text", "vector": self.vector_column,
                 "doc": self.doc_column, "start": self.start_column, "end": self.end_column,
                 "model": self.model_column}
        return {k: v for k, v in roles.items() if v is not None}

    @property
    def provenance(self) -> str:
        rows = Path(self.table).name if self.table else "LlamaIndex's stores"
        return f"FAISS index {self.path.name} (rows {rows})"

    def to_dict(self) -> dict:
        return described(f"faiss:{self.path.name}", self.table and Path(self.table).name or "", "the index's",
                         self.columns, (), "faiss")


class _Opened:
    """The index in memory, its rows by label, and the vectors the exact scan ranks."""

    def __init__(self, spec: FaissSpec, index, rows: list[FaissRow], source: str) -> None:
        import faiss

        self.index = index
        self.metric = {faiss.METRIC_INNER_PRODUCT: "ip", faiss.METRIC_L2: "l2"}.get(index.metric_type)
        if self.metric is None:
            raise StoreError(f"{spec.path.name}: metric type {index.metric_type} is neither inner product nor L2")
        self.labels, self.base = self._labels(index)
        self.rows = {r.label: r for r in rows}
        missing = [int(x) for x in self.labels if int(x) not in self.rows]
        if missing:
            raise StoreError(f"{source}: {len(missing)} of the index's {len(self.labels)} rows have no id (rows "
                             f"{', '.join(map(str, missing[:5]))}{' …' if len(missing) > 5 else ''}): every row "
                             "the index can return must be mapped")
        self.extra = len(self.rows) - len(self.labels)
        self.vectors, self.reconstructed = self._vectors(spec)
        self.ivf = faiss.try_extract_index_ivf(index)
        self.hnsw = next((x for x in (index, self.base) if hasattr(x, "hnsw")), None)
        self.name = type(self.base).__name__

    @staticmethod
    def _labels(index):
        import faiss

        if isinstance(index, (faiss.IndexIDMap, faiss.IndexIDMap2)):
            return faiss.vector_to_array(index.id_map).astype(np.int64), faiss.downcast_index(index.index)
        return np.arange(index.ntotal, dtype=np.int64), index

    def _vectors(self, spec: FaissSpec):
        """The vectors of the labels' rows, in label order, and whether they were reconstructed."""
        d = self.index.d
        if spec.vector_column:
            vecs = np.stack([self.rows[int(x)].vector for x in self.labels]) if len(self.labels) else \
                np.zeros((0, d), np.float32)
            if vecs.shape[1] != d:
                raise StoreError(f"{spec.table}: column {spec.vector_column!r} has {vecs.shape[1]} dimensions, the "
                                 f"index {d}")
            return vecs.astype(np.float32), False
        base = self.base
        try:
            if hasattr(base, "make_direct_map"):  # IVF: reconstruct needs the direct map (in memory only)
                base.make_direct_map()
            vecs = base.reconstruct_n(0, base.ntotal) if base.ntotal else np.zeros((0, d), np.float32)
        except RuntimeError as e:
            raise StoreError(f"{spec.path.name}: {type(base).__name__} cannot give its vectors back "
                             f"({str(e).splitlines()[0][:120]}); give them in the rows file (vector column)") from None
        return np.asarray(vecs, np.float32), True

    @property
    def flat_storage(self) -> bool:
        """Whether the index stores its vectors as they were added (reconstruction is exact)."""
        return "Flat" in self.name and "PQ" not in self.name and "SQ" not in self.name

    def row_ids(self, labels) -> list[str]:
        return [self.rows[int(x)].id for x in labels]


@contextmanager
def open_index(spec: FaissSpec) -> Iterator[_Opened]:
    """The index read into memory and its rows (the file is read once, never written).

    Raises
    ------
    StoreError
        faiss not installed, the index unreadable, a rows file that cannot be read, a row the index can return
        without an id, a LangChain pickle.
    """
    try:
        import faiss
    except ImportError:
        raise StoreError("a FAISS index needs its extra: pip install 'retrieval-audit[faiss]'") from None
    index_file, rows_at, how = spec.files()
    try:
        index = faiss.read_index(str(index_file), faiss.IO_FLAG_READ_ONLY)
    except RuntimeError as e:
        raise StoreError(f"{index_file.name}: not a FAISS index ({str(e).splitlines()[0][:120]})") from None
    if how == "llamaindex":
        rows = llamaindex_rows(rows_at, doc_column=spec.doc_column, start_column=spec.start_column,
                               end_column=spec.end_column, model_column=spec.model_column)
        source = "index_store.json"
    else:
        rows = read_rows(rows_at, id_column=spec.id_column or "id", text_column=spec.text_column or "text",
                         doc_column=spec.doc_column, start_column=spec.start_column, end_column=spec.end_column,
                         model_column=spec.model_column, vector_column=spec.vector_column)
        source = rows_at.name
    yield _Opened(spec, index, rows, source)


def _use(spec: FaissSpec, conn):
    from ..spec import opened_or

    return opened_or(conn, open_index, spec)


def _describe(o: _Opened) -> str:
    parts = [f"{o.name}, {o.index.ntotal} vectors of {o.index.d} dimensions, {o.metric}"]
    if o.ivf is not None:
        parts.append(f"nlist {o.ivf.nlist}, nprobe {o.ivf.nprobe}")
    if o.hnsw is not None:
        parts.append(f"efSearch {o.hnsw.hnsw.efSearch}")
    return "; ".join(parts)


def check_health(spec: FaissSpec, corpus=None, model_dims: int | None = None, model_name: str | None = None,
                 conn=None):
    """The index's health: the store findings of every engine over its rows and vectors.

    The vectors are the ones the exact scan ranks (:class:`_Opened`). ``null_vectors`` and ``duplicate_ids``
    as the rows say; ``approximate_index`` describes the index (type, nlist/nprobe, efSearch).

    Raises
    ------
    StoreError
        As :func:`open_index`.
    """
    with _use(spec, conn) as o:
        def batches():
            rows = [o.rows[int(x)] for x in o.labels]
            yield {"ids": [r.id for r in rows], "texts": [r.text for r in rows], "vectors": list(o.vectors),
                   "docs": [r.doc_id for r in rows], "starts": [r.start for r in rows],
                   "ends": [r.end for r in rows], "models": [r.model for r in rows]}

        detail = _describe(o) + ("" if not o.extra else f"; the rows file maps {o.extra} rows the index does not "
                                                        "hold")
        return health_from_rows(spec, batches(), spec_dict={**spec.to_dict(), "metric": o.metric}, kind="index",
                                index_detail=detail, corpus=corpus, model_dims=model_dims, model_name=model_name,
                                not_applicable={"null_vectors": "a FAISS index stores a vector for every row"})


def table_dims(spec: FaissSpec, conn=None) -> int | None:
    """The index's dimension."""
    with _use(spec, conn) as o:
        return int(o.index.d)


def search(spec: FaissSpec, queries: np.ndarray, k: int, mode: str = "approximate", ef_search: int | None = None,
           probes: int | None = None, conn=None, iterative_scan: str | None = None) -> SearchResult:
    """Top-k rows of each query through the index (``approximate``) or an exact scan of its vectors.

    Parameters
    ----------
    spec : FaissSpec
    queries : numpy.ndarray, shape (n_queries, dims)
    k : int
    mode : {"approximate", "exact"}
        ``approximate``: ``index.search`` one query at a time (its wall time in ``ms``). ``exact``: every vector
        ranked in the index's metric (:func:`audit.stores.scan.exact_topk`: squared L2, or 1 − inner product),
        ties by id.
    ef_search, probes
        ``efSearch`` of an HNSW index and ``nprobe`` of an IVF one, set on this process's copy; named in the
        note and not applied where the index has no such setting.
    iterative_scan
        pgvector's: named in the note, not applied.

    Returns
    -------
    SearchResult
        Distances converted to cosine distance in [0, 2] (squared L2 / 2, 1 − inner product; NaN for rows that
        are not unit length), rows scored by the one rule (:func:`audit.stores.base.rescore`).

    Raises
    ------
    StoreError
        Bad arguments, query dims not the index's.
    """
    q = check_search(queries, k, mode)
    notes: list[str] = []
    with _use(spec, conn) as o:
        if q.shape[1] != o.index.d:
            raise StoreError(f"query vectors have {q.shape[1]} dimensions, FAISS index {spec.path.name} has "
                             f"{o.index.d}: embed the queries with the index's model")
        if iterative_scan is not None:
            notes.append("iterative scans are a pgvector setting: not applied")
        pos = {int(x): i for i, x in enumerate(o.labels)}
        kind = "l2sq" if o.metric == "l2" else ("ip" if mode == "approximate" else "ip_distance")
        settings: dict = {}
        saved = (o.ivf.nprobe if o.ivf is not None else None, o.hnsw.hnsw.efSearch if o.hnsw is not None else None)
        try:
            return _search(o, q, k, mode, ef_search, probes, kind, pos, settings, notes)
        finally:  # the copy in memory keeps the file's settings between searches
            if o.ivf is not None:
                o.ivf.nprobe = saved[0]
            if o.hnsw is not None:
                o.hnsw.hnsw.efSearch = saved[1]


def _search(o: _Opened, q, k, mode, ef_search, probes, kind, pos, settings, notes) -> SearchResult:
    """:func:`search` on the opened index (the caller restores its settings)."""
    if mode == "approximate":
        if probes is not None:
            if o.ivf is None:
                notes.append(f"probes not applied: {o.name} is not an IVF index")
            else:
                o.ivf.nprobe = int(probes)
        if ef_search is not None:
            if o.hnsw is None:
                notes.append(f"ef_search not applied: {o.name} is not an HNSW index")
            else:
                o.hnsw.hnsw.efSearch = int(ef_search)
        if o.ivf is not None:
            settings["nprobe"] = int(o.ivf.nprobe)
        if o.hnsw is not None:
            settings["efSearch"] = int(o.hnsw.hnsw.efSearch)
        ids, raw, vecs, ms = [], [], [], []
        for x in q:
            t0 = time.perf_counter()
            dist, lab = o.index.search(x[None, :], int(k))
            ms.append((time.perf_counter() - t0) * 1000.0)
            keep = lab[0] != NO_RESULT  # an IndexIDMap's ids are signed: only -1 is "no result"
            lab, dist = lab[0][keep], dist[0][keep]
            ids.append(o.row_ids(lab))
            raw.append([float(v) for v in dist])
            vecs.append([o.vectors[pos[int(v)]] for v in lab])
        index = _describe(o)
        if "Flat" in o.name and o.ivf is None and o.hnsw is None:
            notes.append(f"{o.name} searches exactly: approximate equals exact")
    else:
        t0 = time.perf_counter()
        ids, raw, vecs = exact_topk([(o.row_ids(o.labels), o.vectors)], q, int(k),
                                    "l2sq" if o.metric == "l2" else "ip_distance")
        ms = [(time.perf_counter() - t0) * 1000.0 / len(q)] * len(q)
        index = None
        if o.reconstructed and not o.flat_storage:
            notes.append(f"the exact scan ranks the vectors {o.name} reconstructs from its codes (lossy); give "
                         "the flat vectors in the rows file (vector column) to rank the vectors as embedded")
    text_of = {r.id: r.text for r in o.rows.values()}
    texts = [[text_of.get(i) for i in row] for row in ids]
    return search_result(mode, int(k), o.metric, kind, index, ids, raw, vecs, q, texts, ms, settings, notes)


def chunks(spec: FaissSpec, o: _Opened, ids: set[str]) -> list[UserChunk]:
    """The rows ``ids`` as UserChunks (text, document and offsets from the rows file), id order."""
    by_id = {r.id: r for r in o.rows.values()}
    return [UserChunk(i, by_id[i].doc_id or "", by_id[i].text, None, by_id[i].start, by_id[i].end)
            for i in sorted(ids) if i in by_id]


def stream_rows(spec: FaissSpec, o: _Opened):
    """``(id, text, doc id)`` of every row the index holds, in label order."""
    for x in o.labels:
        r = o.rows[int(x)]
        yield r.id, r.text, r.doc_id
