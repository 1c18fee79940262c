"""A LanceDB table as a team creates it with ``lancedb`` (its own schema), audited where it lies.

The engine code behind the store protocol (:class:`audit.stores.lancedb.engine.LanceDBStore`), as
:mod:`audit.stores.chroma` is for Chroma: :func:`open_table` connects to the database folder
(``lancedb.connect``) and opens the table; :func:`search` asks its ANN index (IVF-PQ and the other index types
``create_index`` builds; ``nprobes``, ``refine_factor``) or scans every vector exactly; :func:`check_health`
gives the store findings every engine gives over the rows streamed in batches. :class:`LanceDBSpec` names the
store: ``lancedb:FOLDER`` and the table. Unlike ``lance:`` (the audit's own dataset layout,
:mod:`audit.stores.lance`), the columns are the team's (``--id-column``, ``--text-column``, ``--vector-column``
…). Only reads: ``connect``, ``open_table``, ``list_indices``, ``search`` and the table's batches (``to_lance``).
Runtime extra: ``pip install 'retrieval-audit[lancedb]'``.
"""

from .store import LanceDBSpec, check_health, chunks, open_table, search, stream_rows, table_dims

__all__ = ["LanceDBSpec", "check_health", "chunks", "open_table", "search", "stream_rows", "table_dims"]
