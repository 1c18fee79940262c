"""The engines, each behind the store protocol, and the one function that opens a store from its URI or spec.

:data:`ENGINES` lists every place vectors live (``pgvector``, ``chroma``, ``milvus``, ``faiss``, ``lancedb``,
``qdrant``, ``sqlite``, ``lance``); :data:`LIVE_ENGINES` the six a team runs (the dashboard's *Live vector store* source,
``--store``).
An engine is an extra of the package (``pip install 'retrieval-audit[chroma]'``):
:meth:`~audit.stores.protocol.Engine.is_available` says whether its client library is importable
without importing it, :attr:`~audit.stores.protocol.Engine.install` how to get it.

URIs (:func:`engine_for`): ``postgresql://…`` (or a libpq ``key=value`` string, or nothing: then
``$AUDIT_STORE_URI``) → pgvector; ``chroma://HOST:PORT`` (a server) or ``chroma:FOLDER`` → Chroma;
``milvus-lite:PATH`` → Milvus Lite; ``faiss:PATH`` → a FAISS index file (or its folder); ``lancedb:FOLDER`` → a
LanceDB table; ``qdrant-local:FOLDER`` → a Qdrant local-mode folder; ``sqlite:PATH`` → a SQLite index file;
``lance:URI`` → a Lance dataset.
"""

from __future__ import annotations

from . import lance, sqlite
from .chroma import engine as chroma
from .faiss import engine as faiss
from .lancedb import engine as lancedb
from .milvus import engine as milvus
from .pgvector import engine as pgvector
from .qdrant import engine as qdrant
from .protocol import Engine, VectorStore

__all__ = ["ENGINES", "LIVE_ENGINES", "available_engines", "engine_for", "make_spec", "open_store"]

#: Every engine, in the order the dashboard and the docs list them.
ENGINES: dict[str, Engine] = {e.name: e for e in (pgvector.ENGINE, chroma.ENGINE, milvus.ENGINE, faiss.ENGINE,
                                                  lancedb.ENGINE, qdrant.ENGINE, sqlite.ENGINE, lance.ENGINE)}
#: The stores a team runs, audited where they live (``--store``).
LIVE_ENGINES: dict[str, Engine] = {n: ENGINES[n] for n in ("pgvector", "chroma", "milvus", "faiss", "lancedb",
                                                                   "qdrant")}


def available_engines(engines=None) -> list[Engine]:
    """The engines (default :data:`ENGINES`) whose extra is installed, in their order."""
    return [e for e in (ENGINES.values() if engines is None else engines) if e.is_available()]


def engine_for(uri: str | None) -> Engine:
    """The engine of a store URI: the one whose declared prefix it starts with (``chroma:``, ``milvus-lite:``,
    ``sqlite:``, ``lance:`` …), else the engine that declares none (pgvector: a libpq connection string)."""
    u = (uri or "").strip()
    for engine in ENGINES.values():
        if any(u.startswith(p) for p in engine.prefixes):
            return engine
    return next(e for e in ENGINES.values() if not e.prefixes)


def make_spec(uri: str | None, table: str | None = None, *, metric: str = "cosine", filters=(),
              name: str | None = None, **options):
    """The spec of the store at ``uri``, made by its engine's declared ``spec``.

    Parameters
    ----------
    uri : str or None
        The store's URI (None → ``$AUDIT_STORE_URI``, a pgvector table).
    table : str, optional
        The table or collection; a SQLite index file's index (strategy) name; nothing for a Lance dataset.
    metric : str
        The distance a pgvector table is indexed for (the other engines read it from the store).
    filters : sequence of (str, str)
        ``--filter COLUMN=VALUE`` pairs.
    name : str, optional
        The store's configured name (what a pgvector table's provenance shows instead of its host).
    **options
        The column options of :data:`audit.stores.protocol.COLUMNS` (None: not given), and an engine's own
        (a SQLite index's ``strip_running_lines``).

    Raises
    ------
    StoreError
        What the engine's spec refuses (a Chroma collection given an id/text/vector column; a bad table name).
    """
    return engine_for(uri).spec(uri, table, metric=metric, filters=tuple(filters), name=name, **options)


def open_store(spec, **options) -> VectorStore:
    """The store of ``spec`` (an engine's spec, or a URI for :func:`make_spec` with ``options``), opened read-only.

    Use it as a context manager (``with open_store(spec) as store: …``): the connection, client or temporary
    copy is released at the end.

    Raises
    ------
    StoreError
        The engine's extra is not installed (the message gives its ``pip install`` line); what
        :func:`make_spec` or the engine refuses.
    """
    if isinstance(spec, str) or spec is None:
        spec = make_spec(spec, **options)
        options = {}
    return engine_for(getattr(spec, "uri", None)).store_class()(spec, **options)
