"""Where run sets come from: every source returns a :class:`~audit.runset.RunSet` and nothing else.

:mod:`.builtin` (the built-in pipelines: chunk, embed, retrieve), :mod:`.imported` (a team's runs,
judgments, queries and chunks from files), :mod:`.endpoint` (a team's HTTP retrieval service) and the engine
code of the live vector stores, :mod:`.pgvector`, :mod:`.chroma` and :mod:`.milvus`, which the store protocol
(:mod:`audit.stores`) puts behind one front with the audit's own indexes.
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
