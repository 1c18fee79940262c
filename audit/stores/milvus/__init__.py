"""A Milvus Lite collection audited where it lives (a local data folder, ``MilvusClient("./rag.db")``).

The engine code behind the store protocol (:class:`audit.stores.milvus.engine.MilvusStore`), as
:mod:`audit.stores.pgvector` is for pgvector: :func:`check_health` (the same findings, computed over the rows
streamed with ``query_iterator``), :func:`search` (through the collection's index with ``search``, or an exact
scan over the streamed vectors; cosine distances in [0, 2]), :func:`table_dims`, :func:`stream_rows` and
:func:`chunks`. :class:`MilvusSpec` names the store: ``milvus-lite:PATH``.

Milvus Lite 3 keeps per-segment FAISS indexes (HNSW, IVF_FLAT; segments below its build threshold and
the in-memory memtable are searched brute force): its approximate index is the collection's vector index,
compared here with an exact scan. A data folder belongs to one process (Milvus Lite holds an exclusive
``flock`` on its ``LOCK`` file while it is open), so the audit opens a temporary **copy**: it never waits
for, blocks or writes the team's process's folder; copy while no writer is busy, or the copy may miss
its last inserts. Only ``load_collection`` (into this process's memory, on the copy),
``describe_collection``, ``describe_index``, ``query_iterator``, ``query`` and ``search`` are called. Runtime extra: ``pip install 'retrieval-audit[milvus]'``.
"""

from .store import MilvusSpec, check_health, chunks, open_collection, search, stream_rows, table_dims

__all__ = ["MilvusSpec", "check_health", "chunks", "open_collection", "search",
           "stream_rows", "table_dims"]
