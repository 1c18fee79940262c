"""Per-query first-correct ranks of a (strategy, retriever) column, Success@k / MRR@20, paired tests.

With one needle per query the specification's recall@k is ir_measures' Success@k: the share of
queries with a correct chunk in the top k (docs/definitions.md, *Metrics*).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable

import numpy as np

from .stats import Interval, holm, queries_needed, sign_test, wilson

__all__ = ["KS", "MRR_DEPTH", "ColumnResult", "PairedTest", "QueryResult", "holm_adjusted", "paired_on_hits",
           "paired_test", "paired_tests",
           "summary_rows"]


#: The cut-offs reported everywhere.
KS = (1, 4, 8, 20)
MRR_DEPTH = 20


@dataclass(frozen=True)
class QueryResult:
    """One query of one column.

    ``rank`` is the 1-based rank of the first correct chunk, ``None`` when no
    correct chunk was returned.
    """

    query_id: str
    needle_id: str
    phrasing: str
    rank: int | None

    def hit(self, k: int) -> bool:
        return self.rank is not None and self.rank <= k


@dataclass(frozen=True)
class ColumnResult:
    """Per-query results of one (strategy, retriever) column.

    ``available`` is False (with ``reason``) when the retriever could not run,
    e.g. no cross-encoder on this machine; then ``per_query`` is empty.
    """

    strategy: str
    retriever: str
    per_query: tuple[QueryResult, ...]
    available: bool = True
    reason: str = ""

    @property
    def name(self) -> str:
        return f"{self.strategy}/{self.retriever}"

    def subset(self, phrasing: str | None) -> "ColumnResult":
        """Only the queries of one phrasing (``None`` or ``"both"``: all)."""
        if phrasing in (None, "both", "all"):
            return self
        return ColumnResult(self.strategy, self.retriever,
                            tuple(q for q in self.per_query if q.phrasing == phrasing),
                            self.available, self.reason)

    def hits(self, k: int) -> np.ndarray:
        """Boolean array, one per query: a correct chunk within the top ``k``."""
        return np.array([q.hit(k) for q in self.per_query], dtype=bool)

    def recall(self, k: int, level: float = 0.95) -> Interval:
        """recall@k with its Wilson interval."""
        h = self.hits(k)
        return wilson(int(h.sum()), int(h.size), level)

    def mrr(self, depth: int = MRR_DEPTH) -> float:
        """MRR@depth (reciprocal rank of the first correct chunk, 0 beyond ``depth``); NaN if no query."""
        if not self.per_query:
            return math.nan
        return float(np.mean([1.0 / q.rank if q.rank is not None and q.rank <= depth else 0.0
                              for q in self.per_query]))


@dataclass(frozen=True)
class PairedTest:
    """Sign test of column ``a`` against column ``b`` on hit@k.

    ``wins``: queries ``a`` hits and ``b`` misses; ``losses``: the reverse;
    ``p``: exact two-sided sign test; ``p_holm``: Holm-adjusted within the
    family it was computed in (equal to ``p`` for a single test);
    ``queries_needed``: see :func:`queries_needed` (None = never);
    ``discordant``: the query ids, wins first.
    """

    a: str
    b: str
    k: int
    wins: int
    losses: int
    n: int
    p: float
    p_holm: float
    queries_needed: int | None
    win_ids: tuple[str, ...] = ()
    loss_ids: tuple[str, ...] = ()

    @property
    def significant(self) -> bool:
        return self.p_holm < 0.05


def paired_test(a: ColumnResult, b: ColumnResult, k: int) -> PairedTest:
    """Sign test of ``a`` vs ``b`` at ``k`` over the queries both answered.

    Raises
    ------
    ValueError
        The columns do not hold the same queries (unpaired).
    """
    return paired_on_hits(a.name, b.name, k, [q.query_id for q in a.per_query], [q.query_id for q in b.per_query],
                          a.hits(k), b.hits(k), "columns")


def paired_on_hits(name_a: str, name_b: str, k: int, ids_a, ids_b, hits_a, hits_b, what: str = "columns") -> PairedTest:
    """The exact sign test of ``a`` against ``b`` on per-query hits at ``k`` (shared by columns and runs).

    ``wins``: queries ``a`` hits and ``b`` misses; ``losses``: the reverse; ``p_holm`` equals ``p``
    (one test; :func:`holm_adjusted` adjusts a family).

    Raises
    ------
    ValueError
        ``ids_a`` and ``ids_b`` differ (unpaired): the message names both and ``what`` they are.
    """
    ida, idb = list(ids_a), list(ids_b)
    if ida != idb:
        raise ValueError(f"{what} {name_a} and {name_b} do not hold the same queries; a paired test needs them")
    wins = tuple(i for i, x, y in zip(ida, hits_a, hits_b) if x and not y)
    losses = tuple(i for i, x, y in zip(ida, hits_a, hits_b) if y and not x)
    p = sign_test(len(wins), len(losses))
    return PairedTest(name_a, name_b, k, len(wins), len(losses), len(ida), p, p,
                      queries_needed(len(wins), len(losses), len(ida)), wins, losses)


def holm_adjusted(tests: list[PairedTest]) -> list[PairedTest]:
    """The same tests with ``p_holm`` adjusted over the family (Holm 1979)."""
    adj = holm([t.p for t in tests])
    return [PairedTest(t.a, t.b, t.k, t.wins, t.losses, t.n, t.p, q, t.queries_needed, t.win_ids, t.loss_ids)
            for t, q in zip(tests, adj)]


def paired_tests(columns: Iterable[ColumnResult], k: int) -> list[PairedTest]:
    """Every pair (i < j) of available columns at ``k``, Holm-adjusted together."""
    cols = [c for c in columns if c.available]
    return holm_adjusted([paired_test(cols[i], cols[j], k) for i in range(len(cols)) for j in range(i + 1, len(cols))])


def summary_rows(columns: Iterable[ColumnResult], phrasing: str | None = None) -> list[dict]:
    """One dict per column: recall@k estimate/low/high for each k, MRR@20, n.

    Keys: ``strategy``, ``retriever``, ``n_queries``, ``recall@K``,
    ``recall@K_low``, ``recall@K_high`` (K in :data:`KS`), ``mrr``,
    ``available``, ``reason``.
    """
    rows = []
    for c in columns:
        c = c.subset(phrasing)
        row = {"strategy": c.strategy, "retriever": c.retriever, "n_queries": len(c.per_query),
               "available": c.available, "reason": c.reason}
        for k in KS:
            iv = c.recall(k) if c.available else wilson(0, 0)
            row[f"recall@{k}"], row[f"recall@{k}_low"], row[f"recall@{k}_high"] = iv.estimate, iv.low, iv.high
        row["mrr"] = c.mrr() if c.available else math.nan
        rows.append(row)
    return rows
