"""Audit a live PostgreSQL + pgvector table where it lives.

Three things a platform team needs after an upgrade, without copying the
table into Python:

- **Health** (:func:`check_health`): row count, NULL vectors, non-finite
  values (``real[]`` columns only: pgvector refuses NaN and ±Inf on insert),
  dimensions (``vector_dims``), norms (``vector_norm``) against unit length
  (``|norm − 1| > 1e-4``, :data:`audit.health.NORM_TOLERANCE`), empty texts,
  duplicate ids and texts, rows per model stamp, and, given the corpus, rows
  whose document no longer exists or whose text no longer ends with
  ``doc.text[start:end]``. All computed with SQL aggregates; only counts and
  small histograms travel.
- **Retrieval through the table's own index** (:func:`search`): top-k through
  the approximate index (HNSW or IVFFlat, with ``hnsw.ef_search`` /
  ``ivfflat.probes``) and through an exact scan (index scans disabled in the
  transaction), with the distance operator of the metric (``<=>`` cosine,
  ``<->`` L2, ``<#>`` negative inner product) converted to cosine distance.
- **The store as a source** (through the store protocol, :class:`audit.stores.pgvector.engine.PgvectorStore`):
  both searches as the runs ``approximate`` and ``exact`` of one :class:`~audit.runset.RunSet`
  (:meth:`~audit.stores.protocol.VectorStore.runset`; two tables as runs ``before`` and ``after``:
  :func:`audit.stores.runsets.upgrade_runset`); :func:`table_dims`, :func:`stream_rows` and :func:`chunks`
  are what it reads beside the searches. The questions' vectors may come from a hosted model
  (:mod:`audit.stores.query_vectors`).
- **Approximate against exact**: the two searches compared per k by
  :func:`audit.evaluation.approximate.compare_retrieval`, as every engine's are.

- **As deployed** (:mod:`.production`): an HNSW/IVFFlat index on a cast of the column
  (``(emb::vector(384))``) found and queried through, ``--filter COLUMN=VALUE`` under the same
  ``WHERE`` both ways, the extension's version (what an older one lacks is said, not failed on), and
  the dead tuples an index still visits.

Every session is ``READ ONLY`` (:func:`connect`): the audit never writes, temporary tables included.
Identifiers given by the user are always quoted with
``psycopg.sql.Identifier``; values are always bound parameters. Connection
strings are never echoed: every message goes through :func:`audit.secrets.redact`, and
reports name the store by :func:`audit.conninfo.store_label` (its configured name, else
``host/database``; never the user).

Operators and functions: pgvector README (``<->``, ``<#>``, ``<=>``,
``vector_dims``, ``vector_norm``, ``hnsw.ef_search``, ``ivfflat.probes``).
"""

from .connection import (
           OPERATORS,
           IndexInfo,
           StoreError,
           StoreSpec,
           connect,
           find_indexes,
)
from .health import check_health
from .search import search
from .system import chunks, stream_rows, table_dims

__all__ = ["OPERATORS", "IndexInfo", "StoreError", "StoreSpec", "check_health", "chunks", "connect", "find_indexes",
           "search", "stream_rows", "table_dims"]
