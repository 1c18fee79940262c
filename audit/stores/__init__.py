"""Every place vectors live, behind one protocol: SQLite index files, Lance datasets, PostgreSQL + pgvector,
Chroma, Milvus Lite.

Modules (this package imports none of them itself, so importing one costs only what it needs):

- :mod:`.protocol` — the interface every engine implements (:class:`~audit.stores.protocol.VectorStore`:
  ``search``, ``health``, ``runset``, ``load``, ``dims``, ``rows``, ``chunks``) and the declaration each
  engine makes of itself (:class:`~audit.stores.protocol.Engine`: its noun, URI prefixes, column options,
  metrics, search settings, :class:`~audit.stores.protocol.Locator`, spec, what its stores offer beyond the
  protocol, :data:`~audit.stores.protocol.OFFERS`; ``is_available``, ``install``, ``supports``).
- :mod:`.base` — its vocabulary: :class:`~audit.stores.base.StoreError`, the two modes, the
  :class:`~audit.stores.base.SearchResult`, the one rule every engine's distances go through
  (:func:`~audit.stores.base.rescore`: canonical cosine distances of the rows' own vectors, ties by id), and
  where a configured store's URI comes from (``$AUDIT_STORE_URI``, ``env:VARIABLE``).
- :mod:`.registry` — the one door to engine code: :data:`~audit.stores.registry.ENGINES`,
  :func:`~audit.stores.registry.engine_for` (a URI → its engine), :func:`~audit.stores.registry.make_spec`,
  :func:`~audit.stores.registry.open_store`.
- What the engines share, each written once: :mod:`.runsets` (the store asked as a
  :class:`~audit.runset.RunSet`, two stores as an upgrade, needle judgments over the rows), :mod:`.scan` (an
  engine's distance as cosine distance, the exact scan over streamed vectors, a raw answer as a
  ``SearchResult``), :mod:`.quotes` (rows quoted for citations), :mod:`.spec` (a spec as data, the offset
  rule), :mod:`.filters` (``--filter COLUMN=VALUE``), :mod:`.query_vectors` (the questions' vectors from a
  hosted model, JSONL or ``.npy`` + ids).
- One package per live engine, holding all its code: :mod:`.pgvector`, :mod:`.chroma`, :mod:`.milvus` (each
  with an ``engine`` module: its ``ENGINE`` declaration and its ``STORE`` class).
- The audit's own index behind the protocol: :mod:`.sqlite` (an index file, :mod:`audit.index`; the dashboard's
  built-in source reads through it, and it offers the manifest, retry, upgrade preview …) and :mod:`.lance` (a
  Lance dataset, :mod:`audit.index.lance`).

Every store's health is the one report of :mod:`audit.health`. A new live engine is one package here (its code
and an ``engine`` module with ``ENGINE`` and a ``VectorStore`` subclass as ``STORE``), a line in
:data:`~audit.stores.registry.ENGINES`, and a parameter of the shared protocol tests
(``tests/test_store_protocol.py``), which every engine runs.
"""
