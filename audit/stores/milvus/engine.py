"""Milvus Lite 3 behind the store protocol: a data folder (``milvus-lite:PATH``) read as a temporary copy.

The engine's work is :mod:`audit.stores.milvus` (the folder copied, so the team's process keeps its lock;
the collection's index through ``search``, the exact scan over the vectors streamed with
``query_iterator``, health over the streamed rows); :class:`MilvusStore` keeps the copy open until
:meth:`close`.
"""

from __future__ import annotations

from ..protocol import ClientStore, Engine

__all__ = ["ENGINE", "STORE", "MilvusStore"]

ENGINE = Engine("milvus", "Milvus Lite", "milvus", ("pymilvus", "milvus_lite"), "audit.stores.milvus.engine",
                "milvus-lite:./rag.db")


class MilvusStore(ClientStore):
    """A Milvus Lite collection (:class:`audit.stores.milvus.MilvusSpec`), its folder copied at the first call."""

    engine = "milvus"
    noun = "Milvus Lite collection"
    not_a_setting = "not a Milvus Lite setting"

    @staticmethod
    def code():
        from .. import milvus

        return milvus

    def open(self):
        return self.code().open_collection(self.spec)


STORE = MilvusStore
