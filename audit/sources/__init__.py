"""Where run sets come from: every source returns a :class:`~audit.runset.RunSet` and nothing else.

:mod:`.builtin` (the built-in pipelines: chunk, embed, retrieve), :mod:`.imported` (a team's runs,
judgments, queries and chunks from files), :mod:`.endpoint` (a team's HTTP retrieval service) and live
vector stores: :mod:`.pgvector`, :mod:`.chroma`, :mod:`.milvus`, one front picked by :mod:`.engines`,
their shared parts in :mod:`.vectorstore`.
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
