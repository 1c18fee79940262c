"""Paired sign tests between runs of the same queries (the specification's "test apparié"), Holm-adjusted.

At a cut-off k, a **win** is a query run ``a`` hits (a relevant chunk within the first k) and run
``b`` misses, a **loss** the reverse; the exact two-sided sign test runs on the discordant queries
(docs/definitions.md, *Paired tests*; :func:`audit.evaluation.stats.sign_test`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Sequence

import numpy as np

from .measures import QueryTable
from .power import QuestionsNeeded, questions_for_power
from .stats import holm, sign_test

__all__ = ["PairedTest", "holm_adjusted", "paired_on_hits", "paired_test", "paired_tests"]


@dataclass(frozen=True)
class PairedTest:
    """Sign test of run ``a`` against run ``b`` on hit@k.

    ``wins``: queries ``a`` hits and ``b`` misses; ``losses``: the reverse; ``p``: exact two-sided
    sign test; ``p_holm``: Holm-adjusted within the family it was computed in (equal to ``p`` for a
    single test); ``win_ids`` / ``loss_ids``: the discordant query ids.
    """

    a: str
    b: str
    k: int
    wins: int
    losses: int
    n: int
    p: float
    p_holm: float
    win_ids: tuple[str, ...] = ()
    loss_ids: tuple[str, ...] = ()

    @property
    def significant(self) -> bool:
        return self.p_holm < 0.05

    def needed(self, power: float = 0.8, alpha: float = 0.05) -> QuestionsNeeded:
        """The questions a sign test needs to detect a difference like this one with ``power`` at ``alpha``
        (:func:`audit.evaluation.power.questions_for_power` on the observed discordance rate and win share)."""
        return questions_for_power(self.wins, self.losses, self.n, power, alpha)

    def oriented(self, a: str, b: str) -> "PairedTest":
        """This test read as ``a`` against ``b`` (wins and losses swapped when it was computed the other way).

        Raises
        ------
        ValueError
            It does not compare ``a`` and ``b``.
        """
        if (self.a, self.b) == (a, b):
            return self
        if (self.a, self.b) == (b, a):
            return replace(self, a=a, b=b, wins=self.losses, losses=self.wins, win_ids=self.loss_ids,
                           loss_ids=self.win_ids)
        raise ValueError(f"this test compares {self.a!r} with {self.b!r}, not {a!r} with {b!r}")


def paired_on_hits(name_a: str, name_b: str, k: int, ids_a, ids_b, hits_a, hits_b, what: str = "runs") -> PairedTest:
    """The exact sign test of ``a`` against ``b`` on per-query hits at ``k``; ``p_holm`` equals ``p``.

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
    return PairedTest(name_a, name_b, k, len(wins), len(losses), len(ida), p, p, wins, losses)


def paired_test(a, b, k: int) -> PairedTest:
    """Sign test of result ``a`` against result ``b`` (:class:`~audit.evaluation.measures.RunResult`) at ``k``.

    Raises
    ------
    ValueError
        The results do not count the same queries in the same order (unpaired).
    """
    ta, tb = a.per_query, b.per_query
    if isinstance(ta, QueryTable) and isinstance(tb, QueryTable):  # columnar results: the hits as arrays
        if ta.query_ids != tb.query_ids:
            raise ValueError(f"runs {a.name} and {b.name} do not hold the same queries; a paired test needs them")
        ha, hb, ids = ta.hits(k), tb.hits(k), ta.query_ids
        wins = tuple(ids[i] for i in np.flatnonzero(ha & ~hb).tolist())
        losses = tuple(ids[i] for i in np.flatnonzero(hb & ~ha).tolist())
        p = sign_test(len(wins), len(losses))
        return PairedTest(a.name, b.name, k, len(wins), len(losses), len(ids), p, p, wins, losses)
    return paired_on_hits(a.name, b.name, k, a.query_ids, b.query_ids, a.hits(k), b.hits(k))


def holm_adjusted(tests: Sequence[PairedTest]) -> list[PairedTest]:
    """The same tests with ``p_holm`` adjusted over the family (Holm 1979)."""
    return [replace(t, p_holm=q) for t, q in zip(tests, holm([t.p for t in tests]))]


def paired_tests(results: Sequence, k: int) -> list[PairedTest]:
    """Every pair (i < j) of available results at ``k``, Holm-adjusted together."""
    rs = [r for r in results if r.available]
    return holm_adjusted([paired_test(rs[i], rs[j], k) for i in range(len(rs)) for j in range(i + 1, len(rs))])
