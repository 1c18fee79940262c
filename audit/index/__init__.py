"""The persisted index and what is checked on it: embedding cache, stamps, the SQLite store, the indexer,
health checks (a registry), the manifest and upgrade preview, and before/after comparison.
"""

from .cache import EmbeddingCache, cache_key, embed
from .indexer import index_corpus, retry_failed_documents
from .stamp import ChunkRow, DocumentRecord, IndexRunResult, Stamp
from .store import IndexStore, IndexUnusable, LoadedIndex

__all__ = ["ChunkRow", "DocumentRecord", "EmbeddingCache", "IndexRunResult", "IndexStore", "IndexUnusable",
           "LoadedIndex", "Stamp", "cache_key", "embed", "index_corpus",
           "retry_failed_documents"]
