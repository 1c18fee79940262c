"""LanceDB behind the store protocol: a table a team created with ``lancedb`` (``lancedb:FOLDER``, its columns).

The engine's work is :mod:`audit.stores.lancedb` (the table opened with ``lancedb.connect``, its ANN index
through ``search`` with ``nprobes``/``refine_factor``, the exact scan over its batches, health over the streamed
rows); :class:`LanceDBStore` keeps the table open until :meth:`close`.
"""

from __future__ import annotations

from ..base import noted
from ..protocol import COLUMNS, ClientStore, Engine, Locator

__all__ = ["ENGINE", "STORE", "LanceDBStore"]


def _spec(uri, table, *, filters=(), **columns):
    """A table's :class:`audit.stores.lancedb.LanceDBSpec` (id, text and vector columns default to ``id``,
    ``text`` and ``vector``; the metric is read from the table's index)."""
    from .store import LanceDBSpec

    given = {c: v for c, v in ((c, columns.get(c)) for c in COLUMNS) if v}
    return LanceDBSpec(uri, table, **given, filters=tuple(filters))


ENGINE = Engine("lancedb", "LanceDB table", "lancedb", ("lancedb",), "audit.stores.lancedb.engine",
                "lancedb:./lancedb", noun="LanceDB table", table="Table", prefixes=("lancedb:",), columns=COLUMNS,
                defaults=(("id_column", "id"), ("text_column", "text"), ("vector_column", "vector")),
                settings=("probes", "nprobes", "refine_factor"),
                locator=Locator("LanceDB database folder", "The folder lancedb.connect was given; it is read, never "
                                "written, and must lie under an allowed root.", folder="lancedb:"),
                spec=_spec)


class LanceDBStore(ClientStore):
    """A LanceDB table (:class:`audit.stores.lancedb.LanceDBSpec`), opened at the first call."""

    engine = ENGINE.name
    noun = ENGINE.noun
    not_a_setting = "not a LanceDB setting"

    @staticmethod
    def code():
        from .. import lancedb

        return lancedb

    def open(self):
        return self.code().open_table(self.spec)

    def search(self, queries, k: int, mode: str = "approximate", ef_search: int | None = None,
               probes: int | None = None, iterative_scan: str | None = None, nprobes: int | None = None,
               refine_factor: int | None = None, **settings):
        """LanceDB's search (``nprobes`` — or ``probes`` — and ``refine_factor`` applied; others named in the note)."""
        result = self.code().search(self.spec, queries, k, mode, ef_search, probes, conn=self.opened,
                                    iterative_scan=iterative_scan, nprobes=nprobes, refine_factor=refine_factor)
        return noted(result, self.not_applied(settings, self.not_a_setting))


STORE = LanceDBStore
