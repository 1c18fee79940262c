"""Where rankings come from. Today: the built-in strategies (:mod:`.strategies`: chunk, embed, retrieve).

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
