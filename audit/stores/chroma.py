"""Chroma 1.x behind the store protocol: a server (``chroma://HOST:PORT``) or a persistent folder read as a copy.

The engine's work is :mod:`audit.sources.chroma` (the collection opened without telemetry or an embedding
function, its HNSW through ``query``, the exact scan over the vectors streamed with ``get``, health over
the streamed rows); :class:`ChromaStore` keeps the collection open (a folder's temporary copy included)
until :meth:`close`.
"""

from __future__ import annotations

from contextlib import ExitStack

from .base import SearchResult, model_of, noted
from .protocol import Engine, VectorStore

__all__ = ["ENGINE", "STORE", "ChromaStore"]

ENGINE = Engine("chroma", "Chroma", "chroma", ("chromadb",), "audit.stores.chroma", "chroma://127.0.0.1:8000")


class ChromaStore(VectorStore):
    """A Chroma collection (:class:`audit.sources.chroma.ChromaSpec`)."""

    engine = "chroma"
    noun = "Chroma collection"

    def __init__(self, spec) -> None:
        super().__init__(spec)
        self._stack, self._opened = ExitStack(), None

    @property
    def opened(self):
        """The opened collection (:func:`audit.sources.chroma.open_collection`, on first use)."""
        if self._opened is None:
            from ..sources.chroma.store import open_collection

            self._opened = self._stack.enter_context(open_collection(self.spec))
        return self._opened

    def search(self, queries, k: int, mode: str = "approximate", ef_search: int | None = None,
               probes: int | None = None, iterative_scan: str | None = None, **settings) -> SearchResult:
        """:func:`audit.sources.chroma.search` (``ef_search``, ``probes``, ``iterative_scan``: named, not applied)."""
        from ..sources.chroma.store import search

        return noted(search(self.spec, queries, k, mode, ef_search, probes, conn=self.opened,
                            iterative_scan=iterative_scan), self.not_applied(settings, "not a Chroma setting"))

    def health(self, *, corpus=None, encoder=None, model_dims: int | None = None, model_name: str | None = None):
        """:func:`audit.sources.chroma.check_health` (pgvector's findings over the streamed rows)."""
        from ..sources.chroma.store import check_health

        dims, name = model_of(encoder, model_dims, model_name)
        return check_health(self.spec, corpus, model_dims=dims, model_name=name, conn=self.opened)

    def dims(self) -> int | None:
        from ..sources.chroma.store import table_dims

        return table_dims(self.spec, self.opened)

    def rows(self):
        from ..sources.chroma.store import stream_rows

        return stream_rows(self.spec, self.opened)

    def chunks(self, ids) -> list:
        from ..sources.chroma.store import chunks

        return chunks(self.spec, self.opened, set(ids))

    def close(self) -> None:
        self._stack.close()
        self._opened = None


STORE = ChromaStore
