"""Where run sets come from: every source returns a :class:`~audit.runset.RunSet` and nothing else.

:mod:`.builtin` (the built-in pipelines: chunk, embed, retrieve), :mod:`.imported` (a team's system: its runs,
judgments, queries and chunks from files) and :mod:`.endpoint` (a team's HTTP retrieval service), 
:mod:`.traffic` (production traffic read alone), :mod:`.sweep` (a chunking sweep's configurations, each through the
built-in pipelines). A
vector
store is asked its questions through the store protocol (:meth:`audit.stores.protocol.VectorStore.runset`),
each engine in its own package of :mod:`audit.stores`.
"""

__all__ = ["RETRIEVER_KINDS", "UnhealthyIndex", "base_strategy", "column_name", "pairs_over_window", "run_audit",
           "vector_problems"]


def __getattr__(name: str):
    """The built-in pipelines' names, imported on first use (PEP 562): a team's files (:mod:`.imported`) are read
    without the models, index, chunking and ingest modules :mod:`.builtin` imports (~0.14 s)."""
    if name in __all__:
        from . import builtin

        return getattr(builtin, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
