"""What an index and each of its documents were built with, and what an indexing run did.

Stamps (docs/definitions.md, *Index stamps*): model name, weights digest, dims, window, pipeline
version and strategy parameters, per document and per generation.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from ..words import duration, plural

__all__ = ["ChunkRow", "DocumentRecord", "IndexRunResult", "Stamp"]


@dataclass(frozen=True)
class Stamp:
    """What an index (and each of its documents) was built with (docs/definitions.md, *Index stamps*).

    ``strategy`` is the strategy's parameters as canonical JSON.
    """

    model: str
    model_digest: str
    dims: int
    window: int
    pipeline_version: str
    strategy: str

    @classmethod
    def current(cls, encoder, strategy) -> "Stamp":
        """The stamp an index built now with ``encoder`` and ``strategy`` would carry."""
        from .. import PIPELINE_VERSION

        return cls(encoder.name, encoder.digest, int(encoder.dims), int(encoder.window), PIPELINE_VERSION,
                   json.dumps(strategy.params(), sort_keys=True))

    @classmethod
    def from_generation(cls, gen: dict) -> "Stamp":
        """The stamp of a generation row (:meth:`audit.index.store.IndexStore.generation`)."""
        return cls(gen["model"], gen["model_digest"], int(gen["dims"] or 0), int(gen["window"] or 0),
                   gen["pipeline_version"], gen["strategy"])

    def with_model(self, encoder) -> "Stamp":
        """This stamp with ``encoder``'s model (name, digest, dims, window) and the current pipeline version."""
        from .. import PIPELINE_VERSION

        return Stamp(encoder.name, encoder.digest, int(encoder.dims), int(encoder.window), PIPELINE_VERSION,
                     self.strategy)

    @property
    def model_key(self) -> tuple:
        """What makes vectors comparable: model name, weights digest, dims, window."""
        return (self.model, self.model_digest, self.dims, self.window)


@dataclass(frozen=True)
class DocumentRecord:
    """One document row of an index generation.

    ``status`` is ``indexed`` or ``failed`` (then ``reason`` says why);
    ``chunk_count`` is written by the indexer in the same transaction as the
    document's chunks, never taken from a client.
    """

    doc_id: str
    source: str
    content_sha256: str
    extractor: str
    extractor_version: str
    stamp: Stamp
    status: str
    reason: str
    indexed_at: str
    chunk_count: int
    title: str


@dataclass(frozen=True)
class IndexRunResult:
    """What one ``index`` run did.

    ``embedded`` chunks went through the model; ``from_cache`` came from the
    embedding cache; ``unchanged`` documents were skipped (nothing to do).
    """

    index_name: str
    generation: int
    new_generation: bool
    documents: int
    reindexed: tuple[str, ...]
    unchanged: int
    failed: tuple[tuple[str, str], ...]
    embedded: int
    from_cache: int
    wall_ms: float

    def summary(self) -> str:
        """One line for the CLI and the dashboard."""
        what = ("nothing to embed: every document is unchanged" if not self.reindexed and not self.failed
                else f"re-indexed {plural(len(self.reindexed), 'document')}, {plural(self.embedded, 'chunk')} "
                     f"embedded, {self.from_cache:,} from the cache")
        gen = f" (new generation {self.generation} swapped in)" if self.new_generation else ""
        fail = f"; {len(self.failed):,} failed" if self.failed else ""
        return (f"index {self.index_name}: {plural(self.documents, 'document')}, {what}{fail}{gen} "
                f"in {duration(self.wall_ms / 1000)}")


@dataclass(frozen=True)
class ChunkRow:
    """One stored chunk: document, ordinal within it, and the chunk's fields and vector bytes.

    ``start``/``end`` are the content's range in the document's canonical text (characters, end
    exclusive); ``vector`` is float32 bytes (``dims × 4``).
    """

    doc_id: str
    ordinal: int
    section: str
    text: str
    content: str
    start: int
    end: int
    header: str
    tail: str
    vector: bytes
