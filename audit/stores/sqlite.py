"""The audit's own SQLite index file behind the store protocol: one index (strategy) of one file.

The engine's work is :mod:`audit.index` (the file's generations, documents and chunks; its health checks,
:mod:`audit.index.health`); :class:`SqliteStore` reads one index of the file. It has no approximate index: a
search is the exact scan of :func:`audit.scores.cosine_distances` over every stored vector (the built-in
dense retriever's), so ``approximate`` equals ``exact`` and the note says so. :meth:`SqliteStore.load` gives
the chunks and vectors whole, which the built-in pipelines run over (``report``, ``compare``).

The dashboard's built-in source opens its own index through this engine like any store (its page context holds
the store); what only an index file can give is what the engine declares it offers (:data:`ENGINE`'s
``offers``, :meth:`~audit.stores.protocol.VectorStore.supports`): another file or index in its place
(:meth:`SqliteStore.at`), the manifest, a retry of failed documents, an upgrade preview, the extraction audit
beside the health checks (:meth:`SqliteStore.health_view`) and two indexes compared by the built-in retrievers.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ..shownpaths import display_path
from .base import SearchResult, StoreError, check_search
from .protocol import Engine, VectorStore

__all__ = ["ENGINE", "STORE", "SqliteSpec", "SqliteStore"]



def _spec(uri: str, table: str | None = None, *, strip_running_lines: bool = False, cache_paths=(), **_):
    """``sqlite:PATH`` and the index (strategy) name as a :class:`SqliteSpec` (the column options do not apply:
    an index file has its own)."""
    return SqliteSpec(uri[len("sqlite:"):], table or None, strip_running_lines, tuple(str(p) for p in cache_paths))


ENGINE = Engine("sqlite", "SQLite index (the audit's own)", None, ("sqlite3",), "audit.stores.sqlite",
                "sqlite:.audit/index-docs.sqlite", noun="SQLite index", table="Index", prefixes=("sqlite:",),
                spec=_spec, offers=("files", "indexes", "manifest", "retry", "upgrade_preview", "extraction",
                                    "index_pair"))


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
    cache_paths : tuple of str
        Embedding caches the upgrade preview also looks vectors up in, read-only (e.g. ``$AUDIT_HOME/cache.sqlite``).
    """

    path: str
    index: str | None = None
    strip_running_lines: bool = False
    cache_paths: tuple[str, ...] = ()

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
        return f"SQLite index {self.index} in {display_path(self.path)}"


class SqliteStore(VectorStore):
    """One index of a SQLite index file, opened read-only at the first call and released by :meth:`close`
    (opened again at the next call, as a live store's client is).

    Parameters
    ----------
    spec : SqliteSpec
    store : IndexStore, optional
        The file already opened (the CLI's; never closed here); by default it is opened read-only at the first
        call (:meth:`audit.index.IndexStore.open_readonly`: nothing is created or written).

    Every call but :attr:`path` and :meth:`at` opens the file, and raises :class:`StoreError` when it cannot:
    no such file or not an index file; no index in it, or not the one named.
    """

    engine = ENGINE.name
    noun = ENGINE.noun

    def __init__(self, spec: SqliteSpec, store=None) -> None:
        super().__init__(spec)
        self._given, self._opened, self._loaded, self._checked = store, None, None, False
        if store is not None:
            self._resolve(store)
            self._checked = True

    # -- the file, opened at the first call ------------------------------------------------------------
    def _resolve(self, opened) -> None:
        """The spec's index named (its only or first index when none is) and checked against the file."""
        from dataclasses import replace

        names = opened.indexes()
        name = self.spec.index or (names[0] if names else None)
        if name is None or name not in names:
            raise StoreError(f"{self.spec.path}: no index {name!r} (indexes here: {', '.join(names) or 'none'})")
        self.spec = replace(self.spec, index=name)

    def _open_file(self):
        from ..index import IndexStore, IndexUnusable

        try:
            return IndexStore.open_readonly(self.spec.path, cache_paths=tuple(self.spec.cache_paths))
        except IndexUnusable as e:
            raise StoreError(str(e)) from None

    @property
    def file(self):
        """The opened file (:class:`audit.index.IndexStore`, read-only), opened at the first use; its index is not
        checked (what :meth:`indexes` reads).

        Raises
        ------
        StoreError
            No such file, not an index file.
        """
        if self._given is not None:
            return self._given
        if self._opened is None:
            self._opened = self._open_file()
        return self._opened

    @property
    def index_store(self):
        """:attr:`file`, its index named and checked (its only or first index when the spec names none).

        Raises
        ------
        StoreError
            No such file, not an index file, no such index in it.
        """
        opened = self.file
        if self.spec.index is None or not self._checked:
            self._resolve(opened)
            self._checked = True
        return opened

    @property
    def path(self):
        """The index file (``files``), as given (nothing is opened)."""
        from pathlib import Path

        return Path(self.spec.path)

    def at(self, path=None, index: str | None = None) -> "SqliteStore":
        """The same engine's store for another file (``files``) and/or another index of it (``indexes``), with the
        same options; nothing is opened until its first call (the file given to this store is shared when only
        the index changes)."""
        from dataclasses import replace

        if path is None:
            return SqliteStore(replace(self.spec, index=index), self._given)
        return SqliteStore(replace(self.spec, path=str(path), index=index))

    def indexes(self) -> list[str]:
        """The index (strategy) names the file holds (``indexes``), in name order."""
        return list(self.file.indexes())

    # -- what only an index file offers (ENGINE.offers) ------------------------------------------------
    def manifest(self):
        """One row per document of the index (``manifest``: :func:`audit.index.manifest.manifest`)."""
        from ..index.manifest import manifest

        return manifest(self.index_store, self.table)

    def upgrade_preview(self, encoder=None, pipeline_version: str | None = None):
        """What switching the index to ``encoder`` and/or ``pipeline_version`` would make stale (``upgrade_preview``:
        :func:`audit.index.manifest.upgrade_preview`; nothing is embedded or written)."""
        from ..index.manifest import upgrade_preview

        return upgrade_preview(self.index_store, self.table, encoder, pipeline_version)

    def generation(self) -> dict:
        """The index's active generation (its stamp's fields), what the page's cache keys on."""
        return dict(self.index_store.generation(self.table) or {})

    def corpus_spec(self) -> str | None:
        """The corpus the file was indexed from (a folder, ``python-reference``), as it recorded it."""
        return self.file.corpus_spec()

    def health_view(self, encoder=None, sources: dict | None = None):
        """``(snapshot, report)``: the index read once for the checks and the extraction audit (``extraction``),
        against its own stamp with ``encoder``'s model (:func:`audit.index.health.snapshot`); ``sources`` (doc id
        → sha256 of the source now, e.g. an upload's bytes) stands for the files. The report is :meth:`health`'s
        when ``sources`` is None."""
        from ..index.health import check_snapshot, snapshot

        snap = snapshot(self.index_store, self.table, self._current(encoder), encoder,
                        strip_running_lines=self.spec.strip_running_lines, sources=sources)
        return snap, check_snapshot(snap)

    def _current(self, encoder):
        from ..index.stamp import Stamp

        if encoder is None:
            return None
        return Stamp.from_generation(self.index_store.generation(self.spec.index)).with_model(encoder)

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

        store = self.index_store
        return check_index(store, self.spec.index, self._current(encoder), encoder,
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
        """Release the file this store opened (a file given to it stays open); the next call opens it again."""
        if self._opened is not None:
            self._opened.close()
            self._opened, self._checked = None, False


STORE = SqliteStore
