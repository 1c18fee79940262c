"""FAISS behind the store protocol: an index file (``faiss:PATH``) and the file that maps its rows to ids and texts.

The engine's work is :mod:`audit.stores.faiss` (the index read into memory, never written; its approximate
search with ``nprobe``/``efSearch``; the exact scan of its own vectors; health over its rows);
:class:`FaissStore` keeps the index in memory until :meth:`close`.
"""

from __future__ import annotations

from ..protocol import COLUMNS, ClientStore, Engine, Locator

__all__ = ["ENGINE", "STORE", "FaissStore"]


def _spec(uri, table, *, filters=(), **columns):
    """An index's :class:`audit.stores.faiss.FaissSpec`: ``table`` is the rows file (None: LlamaIndex's stores
    beside the index); the metric is read from the index."""
    from .store import FaissSpec

    return FaissSpec(uri, table, *(columns.get(c) for c in COLUMNS), tuple(filters))


ENGINE = Engine("faiss", "FAISS index file", "faiss", ("faiss",), "audit.stores.faiss.engine",
                "faiss:./index.faiss", noun="FAISS index", table="Rows file", prefixes=("faiss:",),
                columns=COLUMNS, defaults=(("id_column", "id"), ("text_column", "text")),
                settings=("ef_search", "probes"),
                locator=Locator("FAISS index file or folder", "The index is read into memory (the audit never "
                                "writes it) beside its rows file (JSONL/Parquet of row, id, text) or "
                                "LlamaIndex's stores; LangChain's index.pkl is a pickle and is never loaded. "
                                "It must lie under an allowed root.", folder="faiss:"),
                spec=_spec)


class FaissStore(ClientStore):
    """A FAISS index (:class:`audit.stores.faiss.FaissSpec`), read into memory at the first call."""

    engine = ENGINE.name
    noun = ENGINE.noun
    not_a_setting = "not a FAISS setting (probes is nprobe, ef_search is efSearch)"

    @staticmethod
    def code():
        from .. import faiss

        return faiss

    def open(self):
        return self.code().open_index(self.spec)


STORE = FaissStore
