"""The indexer: corpus → chunks → vectors (cached) → the persisted index, incrementally, one document a transaction.

A document is re-chunked and re-embedded only when its source bytes, extractor version, model,
pipeline version or strategy changed (or it failed before); a model change builds a new
generation and swaps it in when complete (docs/definitions.md, *Generations*).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

from ..chunking import chunk_document
from .cache import embed
from .stamp import IndexRunResult, Stamp
from .store import IndexStore

__all__ = ["index_corpus"]


def index_corpus(store: IndexStore, corpus, strategy, encoder, retry_failed: bool = False,
                 progress: Callable[[str, int, int], None] | None = None, batch_size: int = 32) -> IndexRunResult:
    """Index ``corpus`` with ``strategy`` and ``encoder`` into index ``strategy.name``.

    Incremental: a document is re-chunked and re-embedded only when its
    source bytes, extractor version, model, pipeline version or strategy
    changed (or it failed before); chunk texts already embedded come from
    the cache. A model change (name, weights, dims or window) builds a new
    generation, resumed if a previous run was interrupted, and swaps it in
    when every document is done. ``retry_failed`` re-runs only the
    documents that failed.

    ``corpus`` is a :class:`~audit.corpus.Corpus` (its ``failures`` are
    recorded as failed documents with their reasons).
    """
    with store.lock:
        return _index(store, corpus, strategy, encoder, retry_failed, progress, batch_size)


def _index(store, corpus, strategy, encoder, retry_failed, progress, batch_size) -> IndexRunResult:
    t0 = time.perf_counter()
    report = progress or (lambda stage, done, total: None)
    name = strategy.name
    stamp = Stamp.current(encoder, strategy)
    store.set_corpus(corpus.name)
    active = store.generation(name)
    new_gen = False
    if active is None:
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
    items = [(d.doc_id, d, None) for d in corpus.documents] + [(f.source, f, f.reason) for f in corpus.failures]
    items.sort(key=lambda x: x[0])
    reindexed, failed, embedded, from_cache, unchanged = [], [], 0, 0, 0
    for i, (doc_id, doc, failure) in enumerate(items):
        old = existing.get(doc_id)
        if retry_failed and not new_gen and (old is None or old.status != "failed"):
            unchanged += 1
            report(f"index {name}", i + 1, len(items))
            continue
        same = (old is not None and old.status == "indexed" and failure is None
                and old.content_sha256 == doc.source_sha256 and old.extractor_version == doc.extractor_version
                and old.stamp == stamp)
        if same:
            unchanged += 1
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


@dataclass(frozen=True)
class _FailedDoc:
    doc_id: str
    source_sha256: str

    @property
    def source(self) -> str:
        return self.doc_id
