"""The engines, each behind the store protocol, and the one function that opens a store from its URI or spec.

:data:`ENGINES` lists every place vectors live (``sqlite``, ``lance``, ``pgvector``, ``chroma``, ``milvus``);
:data:`LIVE_ENGINES` the three a team runs (the dashboard's *Live vector store* source, ``--store``).
An engine is an extra of the package (``pip install 'retrieval-audit[chroma]'``):
:meth:`~audit.stores.protocol.Engine.is_available` says whether its client library is importable
without importing it, :attr:`~audit.stores.protocol.Engine.install` how to get it.

URIs (:func:`engine_for`): ``postgresql://…`` (or a libpq ``key=value`` string, or nothing: then
``$AUDIT_STORE_URI``) → pgvector; ``chroma://HOST:PORT`` (a server) or ``chroma:FOLDER`` → Chroma;
``milvus-lite:PATH`` → Milvus Lite; ``sqlite:PATH`` → a SQLite index file; ``lance:URI`` → a Lance dataset.
"""

from __future__ import annotations

from . import lance, sqlite
from .chroma import engine as chroma
from .milvus import engine as milvus
from .pgvector import engine as pgvector
from .base import StoreError
from .protocol import Engine, VectorStore

__all__ = ["ENGINES", "LIVE_ENGINES", "available_engines", "engine_for", "make_spec", "open_store"]

#: Every engine, in the order the dashboard and the docs list them.
ENGINES: dict[str, Engine] = {e.name: e for e in (pgvector.ENGINE, chroma.ENGINE, milvus.ENGINE, sqlite.ENGINE,
                                                  lance.ENGINE)}
#: The stores a team runs, audited where they live (``--store``).
LIVE_ENGINES: dict[str, Engine] = {n: ENGINES[n] for n in ("pgvector", "chroma", "milvus")}


def available_engines(engines=None) -> list[Engine]:
    """The engines (default :data:`ENGINES`) whose extra is installed, in their order."""
    return [e for e in (ENGINES.values() if engines is None else engines) if e.is_available()]


def engine_for(uri: str | None) -> Engine:
    """The engine of a store URI (pgvector for anything that is not ``chroma…:``, ``milvus-lite:``, ``sqlite:``
    or ``lance:``)."""
    u = (uri or "").strip()
    for prefix, name in (("chroma:", "chroma"), ("chromas:", "chroma"), ("milvus-lite:", "milvus"),
                         ("sqlite:", "sqlite"), ("lance:", "lance")):
        if u.startswith(prefix):
            return ENGINES[name]
    return ENGINES["pgvector"]


def make_spec(uri: str | None, table: str | None = None, *, id_column=None, text_column=None, vector_column=None,
              doc_column=None, start_column=None, end_column=None, model_column=None, metric: str = "cosine",
              filters=(), name: str | None = None):
    """The spec of the store at ``uri`` for its engine.

    pgvector needs the id, text and vector columns and the metric (``uri`` None → ``$AUDIT_STORE_URI``), and
    keeps ``name`` (the store's configured name: what its provenance shows instead of its host);
    Chroma has its own ids, texts and vectors (the other names are metadata keys) and reads its metric from
    the collection; Milvus Lite defaults to the primary key, the only vector field and a ``text`` field; a
    SQLite index file takes the index (strategy) name as ``table``; a Lance dataset takes nothing more.

    Raises
    ------
    StoreError
        What the engine's spec refuses; an id/text/vector column given to Chroma.
    """
    engine = engine_for(uri)
    if engine.name == "chroma":
        given = [n for n, v in (("id", id_column), ("text", text_column), ("vector", vector_column)) if v]
        if given:
            raise StoreError(f"a Chroma collection has its own ids, documents and embeddings: drop the "
                             f"{', '.join(given)} column option(s)")
        from .chroma.store import ChromaSpec

        return ChromaSpec(uri, table, doc_column, start_column, end_column, model_column, tuple(filters))
    if engine.name == "milvus":
        from .milvus.store import MilvusSpec

        return MilvusSpec(uri, table, id_column, text_column or "text", vector_column, doc_column, start_column,
                          end_column, model_column, tuple(filters))
    if engine.name == "sqlite":
        return sqlite.SqliteSpec(uri[len("sqlite:"):], table or None)
    if engine.name == "lance":
        return lance.LanceSpec(uri[len("lance:"):])
    from .pgvector.connection import StoreSpec

    return StoreSpec(uri, table, id_column, text_column, vector_column, doc_column, start_column, end_column,
                     model_column, metric, filters=tuple(filters), name=name)


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
