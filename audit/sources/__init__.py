"""Where run sets come from: every source returns a :class:`~audit.runset.RunSet` and nothing else.

:mod:`.builtin` (the built-in pipelines: chunk, embed, retrieve), :mod:`.imported` (a team's system: its runs,
judgments, queries and chunks from files) and :mod:`.endpoint` (a team's HTTP retrieval service), 
:mod:`.traffic` (production traffic read alone), :mod:`.sweep` (a chunking sweep's configurations, each through the
built-in pipelines). A
vector
store is asked its questions through the store protocol (:meth:`audit.stores.protocol.VectorStore.runset`),
each engine in its own package of :mod:`audit.stores`.
"""

from .builtin import (
                      RETRIEVER_KINDS,
                      UnhealthyIndex,
                      base_strategy,
                      column_name,
                      pairs_over_window,
                      run_audit,
                      vector_problems,
)

__all__ = ["RETRIEVER_KINDS", "UnhealthyIndex", "base_strategy", "column_name", "pairs_over_window", "run_audit",
           "vector_problems"]
