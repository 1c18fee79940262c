"""Chroma 1.x behind the store protocol: a server (``chroma://HOST:PORT``) or a persistent folder read as a copy.

The engine's work is :mod:`audit.stores.chroma` (the collection opened without telemetry or an embedding
function, its HNSW through ``query``, the exact scan over the vectors streamed with ``get``, health over
the streamed rows); :class:`ChromaStore` keeps the collection open (a folder's temporary copy included)
until :meth:`close`.
"""

from __future__ import annotations

from ..base import StoreError
from ..protocol import ClientStore, Engine, Locator

__all__ = ["ENGINE", "STORE", "ChromaStore"]

#: The options a Chroma collection takes: metadata keys (its ids, documents and embeddings are its own).
_KEYS = ("doc_column", "start_column", "end_column", "model_column")


def _spec(uri, table, *, filters=(), id_column=None, text_column=None, vector_column=None, **keys):
    """A collection's :class:`audit.stores.chroma.ChromaSpec` (the metric is read from the collection).

    Raises
    ------
    StoreError
        An id, text or vector column given: a Chroma collection has its own.
    """
    given = [n for n, v in (("id", id_column), ("text", text_column), ("vector", vector_column)) if v]
    if given:
        raise StoreError(f"a Chroma collection has its own ids, documents and embeddings: drop the "
                         f"{', '.join(given)} column option(s)")
    from .store import ChromaSpec

    return ChromaSpec(uri, table, *(keys.get(c) for c in _KEYS), tuple(filters))


ENGINE = Engine("chroma", "Chroma", "chroma", ("chromadb",), "audit.stores.chroma.engine", "chroma://127.0.0.1:8000",
                noun="Chroma collection", table="Collection", prefixes=("chroma:", "chromas:"), columns=_KEYS,
                column_word="metadata key",
                locator=Locator("Chroma server (HOST:PORT) or folder", "A folder is read as a copy (the audit never "
                                "writes it) and must lie under an allowed root.", folder="chroma:",
                                server="chroma://"),
                spec=_spec)


class ChromaStore(ClientStore):
    """A Chroma collection (:class:`audit.stores.chroma.ChromaSpec`), opened (a folder: copied) at the first call."""

    engine = ENGINE.name
    noun = ENGINE.noun
    not_a_setting = "not a Chroma setting"

    @staticmethod
    def code():
        from .. import chroma

        return chroma

    def open(self):
        return self.code().open_collection(self.spec)


STORE = ChromaStore
