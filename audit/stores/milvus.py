"""Milvus Lite 3 behind the store protocol: a data folder (``milvus-lite:PATH``) read as a temporary copy.

The engine's work is :mod:`audit.sources.milvus` (the folder copied, so the team's process keeps its lock;
the collection's index through ``search``, the exact scan over the vectors streamed with
``query_iterator``, health over the streamed rows); :class:`MilvusStore` keeps the copy open until
:meth:`close`.
"""

from __future__ import annotations

from contextlib import ExitStack

from .base import SearchResult, model_of, noted
from .protocol import Engine, VectorStore

__all__ = ["ENGINE", "STORE", "MilvusStore"]

ENGINE = Engine("milvus", "Milvus Lite", "milvus", ("pymilvus", "milvus_lite"), "audit.stores.milvus",
                "milvus-lite:./rag.db")


class MilvusStore(VectorStore):
    """A Milvus Lite collection (:class:`audit.sources.milvus.MilvusSpec`)."""

    engine = "milvus"
    noun = "Milvus Lite collection"

    def __init__(self, spec) -> None:
        super().__init__(spec)
        self._stack, self._opened = ExitStack(), None

    @property
    def opened(self):
        """The opened copy (:func:`audit.sources.milvus.open_collection`, on first use)."""
        if self._opened is None:
            from ..sources.milvus.store import open_collection

            self._opened = self._stack.enter_context(open_collection(self.spec))
        return self._opened

    def search(self, queries, k: int, mode: str = "approximate", ef_search: int | None = None,
               probes: int | None = None, iterative_scan: str | None = None, **settings) -> SearchResult:
        """:func:`audit.sources.milvus.search` (``ef`` = ``ef_search``, ``nprobe`` = ``probes``)."""
        from ..sources.milvus.store import search

        return noted(search(self.spec, queries, k, mode, ef_search, probes, conn=self.opened,
                            iterative_scan=iterative_scan), self.not_applied(settings, "not a Milvus Lite setting"))

    def health(self, *, corpus=None, encoder=None, model_dims: int | None = None, model_name: str | None = None):
        """:func:`audit.sources.milvus.check_health` (pgvector's findings over the streamed rows)."""
        from ..sources.milvus.store import check_health

        dims, name = model_of(encoder, model_dims, model_name)
        return check_health(self.spec, corpus, model_dims=dims, model_name=name, conn=self.opened)

    def dims(self) -> int | None:
        from ..sources.milvus.store import table_dims

        return table_dims(self.spec, self.opened)

    def rows(self):
        from ..sources.milvus.store import stream_rows

        return stream_rows(self.spec, self.opened)

    def chunks(self, ids) -> list:
        from ..sources.milvus.store import chunks

        return chunks(self.spec, self.opened, set(ids))

    def close(self) -> None:
        self._stack.close()
        self._opened = None


STORE = MilvusStore
