"""Milvus Lite 3 behind the store protocol: a data folder (``milvus-lite:PATH``) read as a temporary copy.

The engine's work is :mod:`audit.stores.milvus` (the folder copied, so the team's process keeps its lock;
the collection's index through ``search``, the exact scan over the vectors streamed with
``query_iterator``, health over the streamed rows); :class:`MilvusStore` keeps the copy open until
:meth:`close`.
"""

from __future__ import annotations

from ..protocol import COLUMNS, ClientStore, Engine, Locator

__all__ = ["ENGINE", "STORE", "MilvusStore"]


def _spec(uri, table, *, filters=(), text_column=None, **columns):
    """A collection's :class:`audit.stores.milvus.MilvusSpec`: the primary key, the only vector field and a
    ``text`` field unless named (the metric is read from the collection's index)."""
    from .store import MilvusSpec

    columns["text_column"] = text_column or "text"
    return MilvusSpec(uri, table, *(columns.get(c) for c in COLUMNS), tuple(filters))


ENGINE = Engine("milvus", "Milvus Lite", "milvus", ("pymilvus", "milvus_lite"), "audit.stores.milvus.engine",
                "milvus-lite:./rag.db", noun="Milvus Lite collection", table="Collection", prefixes=("milvus-lite:",),
                columns=COLUMNS, defaults=(("text_column", "text"),), settings=("ef_search", "probes"),
                locator=Locator("Milvus Lite data folder", "A folder is read as a copy (the audit never writes it) "
                                "and must lie under an allowed root.", folder="milvus-lite:"),
                spec=_spec)


class MilvusStore(ClientStore):
    """A Milvus Lite collection (:class:`audit.stores.milvus.MilvusSpec`), its folder copied at the first call."""

    engine = ENGINE.name
    noun = ENGINE.noun
    not_a_setting = "not a Milvus Lite setting"

    @staticmethod
    def code():
        from .. import milvus

        return milvus

    def open(self):
        return self.code().open_collection(self.spec)


STORE = MilvusStore
