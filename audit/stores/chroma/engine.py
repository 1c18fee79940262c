"""Chroma 1.x behind the store protocol: a server (``chroma://HOST:PORT``) or a persistent folder read as a copy.

The engine's work is :mod:`audit.stores.chroma` (the collection opened without telemetry or an embedding
function, its HNSW through ``query``, the exact scan over the vectors streamed with ``get``, health over
the streamed rows); :class:`ChromaStore` keeps the collection open (a folder's temporary copy included)
until :meth:`close`.
"""

from __future__ import annotations

from ..protocol import ClientStore, Engine

__all__ = ["ENGINE", "STORE", "ChromaStore"]

ENGINE = Engine("chroma", "Chroma", "chroma", ("chromadb",), "audit.stores.chroma.engine", "chroma://127.0.0.1:8000")


class ChromaStore(ClientStore):
    """A Chroma collection (:class:`audit.stores.chroma.ChromaSpec`), opened (a folder: copied) at the first call."""

    engine = "chroma"
    noun = "Chroma collection"
    not_a_setting = "not a Chroma setting"

    @staticmethod
    def code():
        from .. import chroma

        return chroma

    def open(self):
        return self.code().open_collection(self.spec)


STORE = ChromaStore
