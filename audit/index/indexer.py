"""The indexer: corpus → chunks → vectors (cached) → the persisted index, incrementally, one document a transaction.

A document is re-chunked and re-embedded only when its source bytes, extractor version, model,
pipeline version or strategy changed (or it failed before); a model change builds a new
generation and swaps it in when complete (docs/definitions.md, *Generations*). An unchanged row of
an older file gets its structure and extraction notes in place, when its stored text is the text
extracted now.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

from ..chunking import chunk_document
from .cache import embed
from .stamp import IndexRunResult, Stamp
from .store import IndexStore

__all__ = ["index_corpus", "retry_failed_documents"]


def index_corpus(store: IndexStore, corpus, strategy, encoder, retry_failed: bool = False,
                 progress: Callable[[str, int, int], None] | None = None, batch_size: int = 32) -> IndexRunResult:
    """Index ``corpus`` with ``strategy`` and ``encoder`` into index ``strategy.name``.

    Incremental: a document is re-chunked and re-embedded only when its
    source bytes, extractor version, model, pipeline version or strategy
    changed (or it failed before); chunk texts already embedded come from
    the cache. A model change (name, weights, dims or window) builds a new
    generation, resumed if a previous run was interrupted, and swaps it in
    when every document is done.

    ``retry_failed`` re-runs only the documents whose row in the active
    generation is ``failed``, in that generation, with its own model: every
    other document stays as it is (even a changed or new one), the
    generation's stamp is not rewritten and no new generation is built.

    ``corpus`` is a :class:`~audit.ingest.Corpus` (its ``failures`` are
    recorded as failed documents with their reasons).

    Raises
    ------
    ValueError
        ``retry_failed`` and the index has no active generation, or
        ``encoder`` is not the model the active generation is stamped with
        (name, weights digest, dims, window), or ``strategy`` is not its
        strategy: the message names both; nothing is written.
    """
    with store.lock:
        return _index(store, corpus, strategy, encoder, retry_failed, progress, batch_size)


def _index(store, corpus, strategy, encoder, retry_failed, progress, batch_size) -> IndexRunResult:
    t0 = time.perf_counter()
    report = progress or (lambda stage, done, total: None)
    name = strategy.name
    stamp = Stamp.current(encoder, strategy)
    active = store.generation(name)
    if retry_failed:
        _check_retry(store, name, active, stamp)  # before any write: a refused retry changes nothing
    store.set_corpus(corpus.name)
    new_gen = False
    if retry_failed:
        gen = int(active["id"])  # the generation as stamped: only failed rows are rewritten
    elif active is None:
        gen = store.new_generation(name, stamp, corpus.name, "active")
    elif (active["model"], active["model_digest"], active["dims"], active["window"]) != stamp.model_key:
        building = store.generation(name, "building")
        if building and (building["model"], building["model_digest"], building["dims"],
                         building["window"]) == stamp.model_key:
            gen = int(building["id"])  # resume an interrupted model change
        else:
            if building:
                store.drop_generation(int(building["id"]))
            gen = store.new_generation(name, stamp, corpus.name, "building")
        new_gen = True
    else:
        gen = int(active["id"])
        if active["strategy"] != stamp.strategy or active["pipeline_version"] != stamp.pipeline_version:
            store.restamp(gen, stamp)
    existing = {d.doc_id: d for d in store.documents(name, gen)}
    bare = store.without_structure(gen)  # rows of an older file: their structure is filled in place
    items = [(d.doc_id, d, None) for d in corpus.documents] + [(f.source, f, f.reason) for f in corpus.failures]
    items.sort(key=lambda x: x[0])
    reindexed, failed, embedded, from_cache, unchanged = [], [], 0, 0, 0
    for i, (doc_id, doc, failure) in enumerate(items):
        old = existing.get(doc_id)
        if retry_failed and (old is None or old.status != "failed"):
            unchanged += 1
            report(f"index {name}", i + 1, len(items))
            continue
        same = (old is not None and old.status == "indexed" and failure is None
                and old.content_sha256 == doc.source_sha256 and old.extractor_version == doc.extractor_version
                and old.stamp == stamp)
        if same:
            unchanged += 1
            if doc_id in bare:  # same text, so the same chunks and vectors: store only what the row lacks
                store.fill_structure(gen, doc)
        elif failure is not None:
            store.write_document(gen, _FailedDoc(doc_id, doc.source_sha256), stamp, [], [], "failed", failure)
            failed.append((doc_id, failure))
        else:
            chunks = chunk_document(doc, strategy)
            vecs, n_enc = embed(encoder, [c.text for c in chunks], store.cache, None, batch_size)
            store.write_document(gen, doc, stamp, chunks, vecs)
            reindexed.append(doc_id)
            embedded += n_enc
            from_cache += len(chunks) - n_enc
        report(f"index {name}", i + 1, len(items))
    if new_gen:
        store.activate(name, gen)
    return IndexRunResult(name, gen, new_gen, len(items), tuple(reindexed), unchanged, tuple(failed),
                          embedded, from_cache, (time.perf_counter() - t0) * 1000.0)


def retry_failed_documents(store: IndexStore, name: str, corpus, load_encoder: Callable[[str], object],
                           progress: Callable[[str, int, int], None] | None = None) -> IndexRunResult:
    """Re-index only the failed documents of index ``name``, with the model and strategy its active
    generation is stamped with (never the caller's current model).

    ``load_encoder(model_name)`` returns the encoder for the stamped model name (e.g.
    :func:`audit.models.load_encoder`, or the dashboard's cached loader); ``corpus`` is read again by
    the caller so a file fixed since the last run is seen. Only documents whose row is ``failed`` go
    through the chunker and the model; the generation, its stamp and every other row stay as they are.

    Raises
    ------
    ValueError
        No index ``name``, or the loaded model's weights digest, dims or window differ from the stamp
        (a model directory changed since): nothing is written.
    audit.models.ModelUnavailable
        The stamped model cannot be loaded.
    """
    import json

    from ..chunking import Strategy

    gen = store.generation(name)
    if gen is None:
        raise ValueError(f"{store.path}: no index {name!r} to retry; index the corpus first")
    encoder = load_encoder(gen["model"])
    return index_corpus(store, corpus, Strategy(**json.loads(gen["strategy"])), encoder, retry_failed=True,
                        progress=progress)


def _check_retry(store, name, active, stamp) -> None:
    """Refuse a retry that could not write into the active generation as it is stamped."""
    if active is None:
        raise ValueError(f"{store.path}: no index {name!r} to retry; index the corpus first")
    if (active["model"], active["model_digest"], active["dims"], active["window"]) != stamp.model_key:
        raise ValueError(f"{store.path}: index {name!r} was built with {active['model']} ({active['dims']} dims, "
                         f"weights {active['model_digest']}); the retry was given {stamp.model} ({stamp.dims} dims, "
                         f"weights {stamp.model_digest}). A retry re-embeds the failed documents with the index's "
                         "own model only; nothing was changed")
    if active["strategy"] != stamp.strategy:
        raise ValueError(f"{store.path}: index {name!r} was chunked with {active['strategy']}, the retry was given "
                         f"{stamp.strategy}; nothing was changed")


@dataclass(frozen=True)
class _FailedDoc:
    doc_id: str
    source_sha256: str

    @property
    def source(self) -> str:
        return self.doc_id
