"""The audit's own SQLite index file behind the store protocol: one index (strategy) of one file.

The engine's work is :mod:`audit.index` (the file's generations, documents and chunks; its health checks,
:mod:`audit.index.health`); :class:`SqliteStore` reads one index of the file. It has no approximate index: a
search is the exact scan of :func:`audit.scores.cosine_distances` over every stored vector (the built-in
dense retriever's), so ``approximate`` equals ``exact`` and the note says so. :meth:`SqliteStore.load` gives
the chunks and vectors whole, which the built-in pipelines run over (``report``, ``compare``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from .base import SearchResult, StoreError, check_search
from .protocol import Engine, VectorStore

__all__ = ["ENGINE", "STORE", "SqliteSpec", "SqliteStore"]



def _spec(uri: str, table: str | None = None, *, strip_running_lines: bool = False, **_):
    """``sqlite:PATH`` and the index (strategy) name as a :class:`SqliteSpec` (the column options do not apply:
    an index file has its own)."""
    return SqliteSpec(uri[len("sqlite:"):], table or None, strip_running_lines)


ENGINE = Engine("sqlite", "SQLite index (the audit's own)", None, ("sqlite3",), "audit.stores.sqlite",
                "sqlite:.audit/index-docs.sqlite", noun="SQLite index", table="Index", prefixes=("sqlite:",),
                spec=_spec)


@dataclass(frozen=True)
class SqliteSpec:
    """Which index of which index file.

    Attributes
    ----------
    path : str
        The index file (``.audit/index-<corpus>.sqlite`` by default).
    index : str or None
        The index (strategy) name; None: the file's only index (or its first, in name order).
    strip_running_lines : bool
        The current extraction option health judges the PDFs' extractor version against.
    """

    path: str
    index: str | None = None
    strip_running_lines: bool = False

    vector_column = "vector"
    doc_column = "doc_id"

    @property
    def uri(self) -> str:
        return f"sqlite:{self.path}"

    @property
    def table(self) -> str:
        return self.index or ""

    @property
    def provenance(self) -> str:
        return f"SQLite index {self.index} in {self.path}"


class SqliteStore(VectorStore):
    """One index of a SQLite index file.

    Parameters
    ----------
    spec : SqliteSpec
    store : IndexStore, optional
        The file already opened (the CLI's); by default it is opened read-only
        (:meth:`audit.index.IndexStore.open_readonly`: nothing is created or written).

    Raises
    ------
    StoreError
        No such file or not an index file; no index in it, or not the one named.
    """

    engine = ENGINE.name
    noun = ENGINE.noun

    def __init__(self, spec: SqliteSpec, store=None) -> None:
        from ..index import IndexStore, IndexUnusable

        self._own = store is None
        try:
            self.index_store = store if store is not None else IndexStore.open_readonly(spec.path)
        except IndexUnusable as e:
            raise StoreError(str(e)) from None
        names = self.index_store.indexes()
        name = spec.index or (names[0] if names else None)
        if name is None or name not in names:
            raise StoreError(f"{spec.path}: no index {name!r} (indexes here: {', '.join(names) or 'none'})")
        from dataclasses import replace

        super().__init__(replace(spec, index=name))
        self._loaded = None

    def load(self):
        """The index read back (:meth:`audit.index.IndexStore.load`: corpus, chunks, vectors, stamp).

        Raises
        ------
        StoreError
            The index mixes models or dims (querying it is refused; the message names both).
        """
        if self._loaded is None:
            from ..index import IndexUnusable

            try:
                self._loaded = self.index_store.load(self.spec.index)
            except IndexUnusable as e:
                raise StoreError(str(e)) from None
        return self._loaded

    def search(self, queries, k: int, mode: str = "approximate", **settings) -> SearchResult:
        """The exact scan (both modes: a SQLite index has no approximate index), ties by chunk id; ``settings``
        (an approximate index's) are named in the note, not applied."""
        from ..scores import cosine_distances

        q = check_search(queries, k, mode)
        loaded = self.load()
        vectors = loaded.vectors
        if vectors.shape[0] and q.shape[1] != vectors.shape[1]:
            raise StoreError(f"query vectors have {q.shape[1]} dimensions, index {self.spec.index!r} of "
                             f"{self.spec.path} has {vectors.shape[1]}: embed the queries with its model")
        chunks = loaded.chunks.chunks
        ids, dist, texts, ms = [], [], [], []
        for x in q:
            t0 = time.perf_counter()
            d = cosine_distances(x, vectors) if vectors.shape[0] else np.zeros(0)
            order = np.lexsort((np.arange(len(d)), d))[:k]  # canonical distances, ties by chunk id
            ms.append((time.perf_counter() - t0) * 1000.0)
            ids.append(tuple(str(chunks[i].chunk_id) for i in order))
            dist.append(tuple(float(d[i]) for i in order))
            texts.append(tuple(chunks[i].text for i in order))
        notes = ["a SQLite index has no approximate index: approximate equals exact"] if mode == "approximate" else []
        notes.append(self.not_applied(settings, "a SQLite index has no approximate index"))
        return SearchResult(mode, int(k), "cosine", None, tuple(ids), tuple(dist), tuple(dist), tuple(texts),
                            tuple(ms), {}, "; ".join(n for n in notes if n))

    def health(self, *, corpus=None, encoder=None, model_dims: int | None = None, model_name: str | None = None):
        """Every check of :data:`audit.index.health.CHECKS` (``encoder``: the current model, for staleness and
        tokens; the corpus is the one the index recorded, read as it is now, so ``corpus`` is not used)."""
        from ..index.health import check_index
        from ..index.stamp import Stamp

        current = None
        if encoder is not None:
            current = Stamp.from_generation(self.index_store.generation(self.spec.index)).with_model(encoder)
        return check_index(self.index_store, self.spec.index, current, encoder,
                           strip_running_lines=self.spec.strip_running_lines)

    def dims(self) -> int | None:
        return int(self.load().stamp.dims) or None

    def rows(self):
        for c in self.load().chunks.chunks:
            yield str(c.chunk_id), c.text, c.doc_id

    def chunks(self, ids) -> list:
        from ..sources.imported.chunks import UserChunk

        want = {str(i) for i in ids}
        return [UserChunk(str(c.chunk_id), c.doc_id, c.text, c.content, c.start, c.end)
                for c in self.load().chunks.chunks if str(c.chunk_id) in want]

    def close(self) -> None:
        if self._own:
            self.index_store.close()


STORE = SqliteStore
