"""A Chroma collection audited where it lives: a Chroma server (``chroma run``) or a persistent folder.

The engine code behind the store protocol (:class:`audit.stores.chroma.engine.ChromaStore`), as
:mod:`audit.stores.pgvector` is for pgvector: :func:`check_health` (the same findings, computed over the rows
streamed with ``get``), :func:`search` (through the collection's HNSW index with ``query``, or an exact scan
over the streamed vectors; cosine distances in [0, 2]), :func:`table_dims`, :func:`stream_rows` and
:func:`chunks`. :class:`ChromaSpec` names the store:
``chroma://HOST:PORT`` for a server, ``chroma:FOLDER`` (or a folder path) for a persistent folder.

Read-only and offline by construction: a folder is opened as a temporary **copy** (the client would
migrate the user's folder otherwise), no embedding function is ever attached (always vectors, so no model
is downloaded), telemetry is off (``anonymized_telemetry=False`` and ``$ANONYMIZED_TELEMETRY``), and only
``count``, ``get`` and ``query`` are called. Runtime extra: ``pip install 'retrieval-audit[chroma]'``.
"""

from .store import ChromaSpec, check_health, chunks, open_collection, search, stream_rows, table_dims

__all__ = ["ChromaSpec", "check_health", "chunks", "open_collection", "search",
           "stream_rows", "table_dims"]
