"""Statistics with their sources: Wilson score intervals, exact sign tests, Holm, "queries needed".

Wilson (1927) for a proportion; the exact two-sided binomial sign test on discordant pairs; Holm
(1979) for families of tests; all on scipy (docs/definitions.md, *Metrics*, *Paired tests*).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

__all__ = ["Interval", "holm", "queries_needed", "sign_test", "wilson"]


@dataclass(frozen=True)
class Interval:
    """A proportion with its Wilson score interval.

    Attributes
    ----------
    estimate, low, high : float
        In [0, 1]; NaN when ``n == 0``.
    level : float
        Confidence level (0.95).
    successes, n : int
    """

    estimate: float
    low: float
    high: float
    level: float
    successes: int
    n: int

    def __str__(self) -> str:
        if self.n == 0:
            return "n/a"
        return f"{self.estimate:.3f} [{self.low:.3f}, {self.high:.3f}]"


def wilson(successes: int, n: int, level: float = 0.95) -> Interval:
    """Wilson score interval for ``successes`` out of ``n`` (scipy ``binomtest``).

    The specification's figures: 38/64 → [0.471, 0.705]; 53/64 → [0.718, 0.901].

    Raises
    ------
    ValueError
        ``successes`` outside ``[0, n]``.
    """
    if n < 0 or not 0 <= successes <= max(n, 0):
        raise ValueError(f"successes must be within [0, n], got {successes}/{n}")
    if n == 0:
        return Interval(math.nan, math.nan, math.nan, level, 0, 0)
    from scipy.stats import binomtest

    ci = binomtest(int(successes), int(n)).proportion_ci(confidence_level=level, method="wilson")
    return Interval(successes / n, float(ci.low), float(ci.high), level, int(successes), int(n))


def sign_test(wins: int, losses: int) -> float:
    """Exact two-sided sign test p-value on discordant pairs (1.0 when there are none).

    The specification's figures: +18/−3 → 0.0015; +12/−2 → 0.0129; +8/−6 → 0.79; +10/−6 → 0.45.
    """
    if wins < 0 or losses < 0:
        raise ValueError(f"wins and losses must be ≥ 0, got +{wins}/-{losses}")
    if wins + losses == 0:
        return 1.0
    from scipy.stats import binomtest

    return float(binomtest(int(wins), int(wins + losses), 0.5, alternative="two-sided").pvalue)


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm–Bonferroni adjusted p-values (Holm 1979), same order as given, capped at 1."""
    m = len(pvalues)
    order = sorted(range(m), key=lambda i: pvalues[i])
    out = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * pvalues[i]))
        out[i] = running
    return out


def queries_needed(wins: int, losses: int, n_queries: int, alpha: float = 0.05) -> int | None:
    """Queries needed for p < ``alpha`` if the observed wins and losses scaled up.

    The discordant count ``D = wins + losses`` is raised one at a time, keeping
    the win share (wins rounded), until the sign test gives p < alpha; the
    answer is ``ceil(n_queries * D' / D)``. ``None`` ("never") when wins equal
    losses or there is no discordant pair. Returns ``n_queries`` when already
    significant. A scaling of the observed ratio, not a power analysis.
    """
    d = wins + losses
    if d == 0 or wins == losses:
        return None
    if sign_test(wins, losses) < alpha:
        return n_queries
    share = wins / d
    for dd in range(d + 1, 100 * d + 10_000):
        w = int(round(share * dd))
        if sign_test(w, dd - w) < alpha:
            return int(math.ceil(n_queries * dd / d))
    return None
