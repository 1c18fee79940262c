"""The audit's own indexes: the SQLite index file and what is checked on it, and Lance datasets.

:mod:`.store` (the index file: generations, documents with their stamps, chunks, vectors), :mod:`.stamp`,
:mod:`.cache` (the embedding cache), :mod:`.indexer` (incremental indexing, retry of failed documents),
:mod:`.health` (the checks, a registry), :mod:`.manifest` (the manifest and the upgrade preview),
:mod:`.shipped` (the built-in corpus's shipped vectors), :mod:`.lance` (a Lance dataset, built on one
machine or as a Ray job). Both kinds sit behind the store protocol as :mod:`audit.stores.sqlite` and
:mod:`audit.stores.lance`; the "index file" is the SQLite file, a "store" a place vectors live.
"""

from .cache import EmbeddingCache, cache_key, embed
from .indexer import index_corpus, retry_failed_documents
from .stamp import ChunkRow, DocumentRecord, IndexRunResult, Stamp
from .store import IndexStore, IndexUnusable, LoadedIndex

__all__ = ["ChunkRow", "DocumentRecord", "EmbeddingCache", "IndexRunResult", "IndexStore", "IndexUnusable",
           "LoadedIndex", "Stamp", "cache_key", "embed", "index_corpus",
           "retry_failed_documents"]
