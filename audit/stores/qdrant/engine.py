"""Qdrant local mode behind the store protocol: a folder (``qdrant-local:FOLDER``) read as a temporary copy.

The engine's work is :mod:`audit.stores.qdrant` (the folder copied, since the client writes a lock file; its
points read with ``scroll`` and ``query_points``); :class:`QdrantStore` keeps the copy open until :meth:`close`.
Offered in single-user mode only (``Engine.shared`` is False): local mode's storage is pickled, and opening a
folder unpickles it.
"""

from __future__ import annotations

from ..base import StoreError
from ..protocol import ClientStore, Engine, Locator

__all__ = ["ENGINE", "STORE", "QdrantStore"]

#: The options a Qdrant collection takes: payload keys, and the named vector (its ids are the points').
_KEYS = ("text_column", "vector_column", "doc_column", "start_column", "end_column", "model_column")


def _spec(uri, table, *, filters=(), id_column=None, **keys):
    """A collection's :class:`audit.stores.qdrant.QdrantSpec` (the metric is read from the collection).

    Raises
    ------
    StoreError
        An id column given: Qdrant points have their own ids.
    """
    if id_column:
        raise StoreError("Qdrant points have their own ids: drop the id column option")
    from .store import QdrantSpec

    given = {k: v for k, v in keys.items() if k in _KEYS and v}
    return QdrantSpec(uri, table, **given, filters=tuple(filters))


ENGINE = Engine("qdrant", "Qdrant local-mode folder", "qdrant", ("qdrant_client",), "audit.stores.qdrant.engine",
                "qdrant-local:./qdrant", noun="Qdrant collection", table="Collection", prefixes=("qdrant-local:",),
                columns=_KEYS, column_word="payload key", defaults=(("text_column", "text"),),
                locator=Locator("Qdrant local-mode folder", "The folder QdrantClient(path=…) was given, read as a "
                                "copy (the client writes a lock file). Single-user mode only: local mode's storage "
                                "is pickled, and opening it unpickles it. Local mode searches exactly. It must lie "
                                "under an allowed root.", folder="qdrant-local:"),
                spec=_spec, shared=False)


class QdrantStore(ClientStore):
    """A Qdrant local-mode collection (:class:`audit.stores.qdrant.QdrantSpec`), its folder copied at the first call."""

    engine = ENGINE.name
    noun = ENGINE.noun
    not_a_setting = "not a Qdrant local-mode setting"

    @staticmethod
    def code():
        from .. import qdrant

        return qdrant

    def open(self):
        return self.code().open_collection(self.spec)


STORE = QdrantStore
