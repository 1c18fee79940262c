"""What an index holds, document by document, and what an upgrade would do to it before running it."""

from __future__ import annotations

from dataclasses import dataclass

from .. import PIPELINE_VERSION
from .cache import cache_key
from .health import check_stale, snapshot
from .stamp import Stamp
from .store import IndexStore

__all__ = ["UpgradePreview", "manifest", "upgrade_preview"]


def manifest(store: IndexStore, name: str):
    """The document manifest of index ``name`` as a DataFrame, one row per document.

    Columns: ``doc_id``, ``status``, ``reason``, ``chunks`` (the indexer's
    stamp), ``rows`` (chunk rows stored), ``model``, ``dims``, ``window``,
    ``pipeline``, ``extractor``, ``indexed at``, ``source``.
    """
    import pandas as pd

    gen = store.generation(name)
    if gen is None:
        return pd.DataFrame(columns=["doc_id", "status", "reason", "chunks", "rows", "model", "dims", "window",
                                     "pipeline", "extractor", "indexed at", "source"])
    counts = store.row_counts(int(gen["id"]))
    return pd.DataFrame([{
        "doc_id": d.doc_id, "status": d.status, "reason": d.reason, "chunks": d.chunk_count,
        "rows": counts.get(d.doc_id, 0), "model": d.stamp.model, "dims": d.stamp.dims, "window": d.stamp.window,
        "pipeline": d.stamp.pipeline_version, "extractor": f"{d.extractor} {d.extractor_version}",
        "indexed at": d.indexed_at, "source": d.source} for d in store.documents(name, int(gen["id"]))])


@dataclass(frozen=True)
class UpgradePreview:
    """What an upgrade would do to index ``name`` before running it.

    ``stale`` lists the documents that would go stale (``doc_id``, ``why``);
    ``chunks_to_embed`` counts the stored chunk texts whose vector under the
    new model is not in the embedding cache (what re-indexing would encode);
    ``chunks_total`` is every stored chunk.
    """

    index: str
    target: Stamp
    stale: tuple[dict, ...]
    chunks_to_embed: int
    chunks_total: int


def upgrade_preview(store: IndexStore, name: str, encoder=None, pipeline_version: str | None = None) -> UpgradePreview:
    """Preview switching index ``name`` to ``encoder`` and/or ``pipeline_version``.

    Only stored information and the embedding cache are read; nothing is
    embedded or written. ``encoder`` None keeps the index's model.

    Raises
    ------
    ValueError
        No such index.
    """
    gen = store.generation(name)
    if gen is None:
        raise ValueError(f"{store.path}: no index {name!r}")
    own = Stamp.from_generation(gen)
    target = Stamp(encoder.name if encoder else own.model, encoder.digest if encoder else own.model_digest,
                   int(encoder.dims) if encoder else own.dims, int(encoder.window) if encoder else own.window,
                   pipeline_version or PIPELINE_VERSION, own.strategy)
    snap = snapshot(store, name, target, None)
    stale = check_stale(snap).documents  # the one check an upgrade changes
    texts = [r.text for r in snap.rows]
    if encoder is None or (encoder.name, encoder.digest, encoder.window) == (own.model, own.model_digest, own.window):
        todo = 0
    else:
        keys = [cache_key(encoder, t) for t in texts]
        found = store.cache.get_many(keys)
        todo = sum(1 for k in set(keys) if k not in found)
    return UpgradePreview(name, target, tuple(stale), todo, len(texts))
