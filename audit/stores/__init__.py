"""Every place vectors live, behind one protocol: SQLite index files, Lance datasets, PostgreSQL + pgvector,
Chroma, Milvus Lite.

Modules (this package imports none of them itself, so importing one costs only what it needs):

- :mod:`.protocol` — the interface every engine implements (:class:`~audit.stores.protocol.VectorStore`:
  ``search``, ``health``, ``runset``, ``load``, ``dims``, ``rows``, ``chunks``) and
  :class:`~audit.stores.protocol.Engine` (``is_available``, ``install``).
- :mod:`.base` — its vocabulary: :class:`~audit.stores.base.StoreError`, the two modes, the
  :class:`~audit.stores.base.SearchResult`, and the one rule every engine's distances go through
  (:func:`~audit.stores.base.rescore`: canonical cosine distances of the rows' own vectors, ties by id).
- :mod:`.health` — the one health report (:class:`~audit.stores.health.HealthReport`) with one finding type
  (:class:`~audit.stores.health.Finding`) and one JSON form.
- :mod:`.shared` — what the engines share, written once: the store asked as a
  :class:`~audit.runset.RunSet`, two stores as an upgrade, needle judgments over the rows, the exact scan
  over streamed vectors, health over streamed rows.
- :mod:`.filters` — ``--filter COLUMN=VALUE``.
- :mod:`.registry` — :data:`~audit.stores.registry.ENGINES`, :func:`~audit.stores.registry.engine_for`
  (a URI → its engine), :func:`~audit.stores.registry.open_store`.
- One module per engine: :mod:`.sqlite`, :mod:`.lance`, :mod:`.pgvector`, :mod:`.chroma`, :mod:`.milvus`
  (each an ``ENGINE`` and its ``STORE`` class over the engine's own code: :mod:`audit.index`,
  :mod:`audit.index.lance`, :mod:`audit.sources.pgvector`, :mod:`audit.sources.chroma`,
  :mod:`audit.sources.milvus`).

A new engine is one module here (its ``ENGINE``, a ``VectorStore`` subclass as ``STORE``), a line in
:data:`~audit.stores.registry.ENGINES`, and a parameter of the shared protocol tests
(``tests/test_store_protocol.py``), which every engine runs.
"""
