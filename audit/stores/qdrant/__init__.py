"""A Qdrant collection in a local-mode folder (``QdrantClient(path=…)``), audited as a temporary copy.

The engine code behind the store protocol (:class:`audit.stores.qdrant.engine.QdrantStore`): :func:`open_collection`
copies the folder and opens the copy with ``qdrant-client``'s local mode; :func:`search` asks ``query_points`` or
scans every vector streamed with ``scroll``; :func:`check_health` gives the store findings every engine gives.
:class:`QdrantSpec` names the store: ``qdrant-local:FOLDER`` and the collection.

Two facts decide how it is offered. The client writes a ``.lock`` file into the folder it opens, so the audit
opens a **copy** (the team's folder is never written, and its process is never blocked). And local mode keeps
its points **pickled** in ``collection/NAME/storage.sqlite``: opening a folder unpickles them, which runs code
if the folder was crafted, so the engine is offered in **single-user mode only** (the person auditing owns the
folder), never on a shared dashboard. Local mode searches by brute force: its approximate search *is* exact,
and the note says so. A Qdrant **server** is audited through the endpoint source's ``qdrant`` mapping.
Runtime extra: ``pip install 'retrieval-audit[qdrant]'``.
"""

from .store import QdrantSpec, check_health, chunks, open_collection, search, stream_rows, table_dims

__all__ = ["QdrantSpec", "check_health", "chunks", "open_collection", "search", "stream_rows", "table_dims"]
