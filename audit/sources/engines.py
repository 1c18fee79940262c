"""The live vector-store engines, each behind the same public front, and what each needs installed.

Every engine package (:mod:`audit.sources.pgvector`, :mod:`audit.sources.chroma`, :mod:`audit.sources.milvus`)
offers ``check_health``, ``search``, ``store_system``, ``store_upgrade_system`` and ``table_dims`` with the
same signatures; :func:`engine_for` picks one from a store's URI and :func:`make_spec` builds its spec. An
engine is a runtime extra of the package (``pip install 'retrieval-audit[chroma]'``): :meth:`Engine.available`
says whether its client library is importable without importing it (``importlib.util.find_spec``), and
:attr:`Engine.install` says how to get it.

URIs: ``postgresql://…`` (or a libpq ``key=value`` string) → pgvector; ``chroma://HOST:PORT`` (a server) or
``chroma:FOLDER`` (a persistent folder) → Chroma; ``milvus-lite:PATH`` → Milvus Lite.
"""

from __future__ import annotations

import importlib
import importlib.util
from dataclasses import dataclass

from .pgvector.connection import StoreError

__all__ = ["ENGINES", "Engine", "available_engines", "engine_for", "make_spec"]


@dataclass(frozen=True)
class Engine:
    """One engine: its name, its extra, the modules it needs and one example store URI.

    Attributes
    ----------
    name : str
        ``pgvector``, ``chroma`` or ``milvus``.
    label : str
        For people (the dashboard's engine choice).
    extra : str
        The package extra that installs it.
    requires : tuple of str
        Top-level modules that must be importable.
    package : str
        The engine's package in :mod:`audit.sources`.
    example : str
        A store URI of this engine.
    """

    name: str
    label: str
    extra: str
    requires: tuple[str, ...]
    package: str
    example: str

    def available(self) -> bool:
        """Whether every required module is importable (nothing is imported)."""
        for m in self.requires:
            try:
                if importlib.util.find_spec(m) is None:
                    return False
            except (ImportError, ValueError):
                return False
        return True

    @property
    def install(self) -> str:
        """The command that installs this engine's extra."""
        return f"pip install 'retrieval-audit[{self.extra}]'"

    def module(self):
        """The engine's package (``check_health``, ``search``, ``store_system``, …).

        Raises
        ------
        StoreError
            The extra is not installed (the message gives :attr:`install`).
        """
        if not self.available():
            raise StoreError(f"{self.label} needs its extra: {self.install}")
        return importlib.import_module(self.package)


ENGINES: dict[str, Engine] = {
    "pgvector": Engine("pgvector", "PostgreSQL + pgvector", "pgvector", ("psycopg",), "audit.sources.pgvector",
                       "postgresql://auditor@db:5432/rag"),
    "chroma": Engine("chroma", "Chroma", "chroma", ("chromadb",), "audit.sources.chroma",
                     "chroma://127.0.0.1:8000"),
    "milvus": Engine("milvus", "Milvus Lite", "milvus", ("pymilvus", "milvus_lite"), "audit.sources.milvus",
                     "milvus-lite:./rag.db"),
}


def available_engines() -> list[Engine]:
    """The engines whose extra is installed, in :data:`ENGINES` order."""
    return [e for e in ENGINES.values() if e.available()]


def engine_for(uri: str | None) -> Engine:
    """The engine of a store URI (pgvector for anything that is not ``chroma…:`` or ``milvus-lite:``)."""
    u = (uri or "").strip()
    if u.startswith(("chroma:", "chromas:")):
        return ENGINES["chroma"]
    if u.startswith("milvus-lite:"):
        return ENGINES["milvus"]
    return ENGINES["pgvector"]


def make_spec(uri: str | None, table: str, *, id_column=None, text_column=None, vector_column=None, doc_column=None,
              start_column=None, end_column=None, model_column=None, metric: str = "cosine", filters=(),
              name: str | None = None):
    """The spec of the store at ``uri`` for its engine.

    pgvector needs the id, text and vector columns and the metric (``uri`` None → ``$AUDIT_STORE_URI``), and
    keeps ``name`` (the store's configured name: what its provenance shows instead of its host);
    Chroma has its own ids, texts and vectors (the other names are metadata keys) and reads its metric from
    the collection; Milvus Lite defaults to the primary key, the only vector field and a ``text`` field.

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
    from .pgvector.connection import StoreSpec

    return StoreSpec(uri, table, id_column, text_column, vector_column, doc_column, start_column, end_column,
                     model_column, metric, filters=tuple(filters), name=name)
