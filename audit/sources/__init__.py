"""Where rankings come from: the built-in strategies (:mod:`.strategies`: chunk, embed, retrieve), a team's
files (:mod:`.imported`) and live vector stores: :mod:`.pgvector`, :mod:`.chroma`, :mod:`.milvus`, one front
picked by :mod:`.engines`, their shared parts in :mod:`.vectorstore`.

Every source yields per-query rankings over chunks with a stated score, which the evaluation
and the report read the same way.
"""

from .strategies import (
                         AuditRun,
                         StrategyRun,
                         UnhealthyIndex,
                         base_strategy,
                         pairs_over_window,
                         run_audit,
                         vector_problems,
)

__all__ = ["AuditRun", "StrategyRun", "UnhealthyIndex", "base_strategy", "pairs_over_window", "run_audit",
           "vector_problems"]
