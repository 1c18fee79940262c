"""Questions needed, as power: the exact power of the two-sided sign test, and the questions a Wilson interval of a
chosen half-width needs.

A paired comparison observed on ``n`` questions has a discordance rate ``d`` (discordant questions / questions) and a
win share ``w`` (wins / discordant). On ``N`` questions drawn alike, the discordant count is ``D ~ Binomial(N, d)``
and, given ``D``, the wins are ``Binomial(D, w)``; the exact two-sided sign test at level α
(:func:`audit.evaluation.stats.sign_test`, p < α) rejects when the wins are at most ``c_D`` or at least ``D − c_D``.
Its power at ``N`` is ``Σ_D P(D) · P(reject | D)``; the questions needed are the smallest ``N`` whose power reaches
the target (docs/definitions.md, *Questions needed*). Binomial probabilities come from ``scipy.special`` (``bdtr``,
``bdtrc``, ``gammaln``), so a report does not import scipy.stats.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from .stats import Z95

__all__ = ["LIMIT", "QuestionsNeeded", "questions_for_half_width", "questions_for_power", "reject_probability",
           "sign_test_power", "wilson_half_width"]

#: Beyond this many questions "questions needed" says "more than 100,000".
LIMIT = 100_000
#: Up to this N every N is tried in turn; beyond it N doubles until the power reaches the target, then bisects.
SCAN_TO = 1024
_BLOCK = 256


@dataclass(frozen=True)
class QuestionsNeeded:
    """The questions a comparison needs: ``N`` (None with ``note`` "never" or "more than 100,000"), the ``power``
    asked, the sign test's ``alpha``; ``reached``: the power at ``N`` (None with it)."""

    N: int | None
    power: float
    alpha: float
    note: str | None = None
    reached: float | None = None

    def to_dict(self) -> dict:
        out = {"N": self.N, "power": self.power, "alpha": self.alpha}
        if self.note is not None:
            out["note"] = self.note
        return out

    @property
    def label(self) -> str:
        """``N`` as shown, or the note."""
        return f"{self.N:,}" if self.N is not None else str(self.note)

    def sentence(self) -> str:
        """The power sentence shown beside a p-value."""
        if self.N is None and self.note == "never":
            return "wins equal losses: no number of questions would tell them apart"
        if self.N is None:
            return (f"more than {LIMIT:,} questions would be needed to detect this difference with "
                    f"{self.power:.0%} power at α = {self.alpha:g}")
        return (f"{self.N:,} questions detect a difference like this one with {self.power:.0%} power "
                f"(two-sided sign test, α = {self.alpha:g})")


def _cutoffs(D: np.ndarray, alpha: float) -> np.ndarray:
    """``c_D`` for each D: the largest k with ``min(1, 2·P(Bin(D, ½) ≤ k)) < alpha`` (−1: none)."""
    from scipy.special import bdtr, ndtri

    D = np.asarray(D, dtype=np.int64)
    half = D // 2

    def ok(k, at):  # k: c_D candidates of the D at positions ``at``
        kk = np.clip(k, 0, None)
        return (k >= 0) & (k <= half[at]) & (np.minimum(1.0, 2.0 * bdtr(kk, D[at], 0.5)) < alpha)

    z = float(ndtri(1 - alpha / 2))
    c = np.clip(np.floor(D / 2 - z * np.sqrt(D) / 2).astype(np.int64) - 3, -1, None)
    # each step tests only the D whose c moved at the step before: a c that stopped stays (ok is elementwise)
    at = np.arange(len(D))
    while len(at):  # down until the start rejects (or none does)
        at = at[(c[at] >= 0) & ~ok(c[at], at)]
        c[at] -= 1
    at = np.arange(len(D))
    while len(at):  # up while the next one rejects
        at = at[ok(c[at] + 1, at)]
        c[at] += 1
    return c.astype(np.int64)


#: ``c_D`` for D = 0, 1, … already computed, per level α (they depend on nothing else).
_CUTOFFS: dict = {}


def _cutoffs_to(dmax: int, alpha: float) -> np.ndarray:
    """``c_D`` for D = 0 … at least ``dmax``, grown by doubling and kept per ``alpha``."""
    have = _CUTOFFS.get(alpha, np.empty(0, dtype=np.int64))
    if len(have) <= dmax:
        size = max(1024, 1 << dmax.bit_length())
        have = np.concatenate([have, _cutoffs(np.arange(len(have), size), alpha)])
        _CUTOFFS[alpha] = have
    return have


def _reject(D: np.ndarray, w: float, alpha: float) -> np.ndarray:
    from scipy.special import bdtr, bdtrc

    D = np.asarray(D, dtype=np.int64)
    c = _cutoffs_to(int(D.max()) if len(D) else 0, alpha)[D]
    cc = np.clip(c, 0, None)
    p = bdtr(cc, D, w) + bdtrc(np.clip(D - cc - 1, 0, None), D, w)
    return np.where(c >= 0, p, 0.0)


def reject_probability(D: int, w: float, alpha: float = 0.05) -> float:
    """P(the exact two-sided sign test at ``alpha`` rejects) on ``D`` discordant questions each a win with
    probability ``w``: ``P(K ≤ c_D) + P(K ≥ D − c_D)``, ``K ~ Binomial(D, w)``."""
    return float(_reject(np.array([int(D)]), float(w), float(alpha))[0])


def _power(Ns: np.ndarray, d: float, w: float, alpha: float) -> np.ndarray:
    from scipy.special import gammaln, xlog1py, xlogy

    Ns = np.asarray(Ns, dtype=np.int64)
    lo_n, hi_n = int(Ns.min()), int(Ns.max())
    sd = math.sqrt(hi_n * d * (1 - d))
    lo = max(0, int(math.floor(lo_n * d - 12 * sd - 12)))
    hi = min(hi_n, int(math.ceil(hi_n * d + 12 * sd + 12)))
    rej = _reject(np.arange(lo, hi + 1), w, alpha)
    D = np.arange(lo, hi + 1, dtype=np.float64)[None, :]
    N = Ns.astype(np.float64)[:, None]
    inside = D <= N
    rest = np.where(inside, N - D, 0)
    logp = gammaln(N + 1) - gammaln(D + 1) - gammaln(rest + 1) + xlogy(D, d) + xlog1py(rest, -d)
    pmf = np.where(inside, np.exp(logp), 0.0)
    return pmf @ rej


def sign_test_power(N: int, d: float, w: float, alpha: float = 0.05) -> float:
    """Exact power of the two-sided sign test at ``alpha`` on ``N`` questions with discordance rate ``d`` and win
    share ``w``: ``Σ_{D=0}^{N} Binom(D; N, d) · P(reject | D)`` (:func:`reject_probability`).

    Raises
    ------
    ValueError
        ``N`` < 0, ``d`` or ``w`` outside [0, 1].
    """
    if N < 0 or not 0 <= d <= 1 or not 0 <= w <= 1:
        raise ValueError(f"need N ≥ 0 and d, w in [0, 1], got N={N}, d={d}, w={w}")
    if N == 0 or d == 0:
        return 0.0
    return float(_power(np.array([N]), float(d), float(w), float(alpha))[0])


@lru_cache(maxsize=4096)
def questions_for_power(wins: int, losses: int, n: int, power: float = 0.8, alpha: float = 0.05) -> QuestionsNeeded:
    """The smallest number of questions whose sign test reaches ``power`` at ``alpha``, for the observed rates.

    ``d = (wins + losses) / n``, ``w = wins / (wins + losses)``; the power at N is :func:`sign_test_power`. Every N
    up to :data:`SCAN_TO` is tried in turn (the first that reaches the target is the answer); beyond it N doubles
    until the power reaches the target, then the last doubling is bisected (the power of the mixed test rises with
    N; the sign test's discreteness only ripples it, and those ripples fade as N grows). ``note`` "never" when
    wins equal losses or no question is discordant; "more than 100,000" when :data:`LIMIT` questions fall short.

    Raises
    ------
    ValueError
        A negative count, more discordant questions than questions, ``power`` or ``alpha`` outside (0, 1).
    """
    if wins < 0 or losses < 0 or n < wins + losses:
        raise ValueError(f"need 0 ≤ wins + losses ≤ n, got +{wins}/-{losses} of {n}")
    if not (0 < power < 1 and 0 < alpha < 1):
        raise ValueError(f"power and alpha must be within (0, 1), got {power}, {alpha}")
    D = wins + losses
    if D == 0 or wins == losses:
        return QuestionsNeeded(None, power, alpha, "never")
    d, w = D / n, wins / D
    start = 1
    while start <= SCAN_TO:
        Ns = np.arange(start, min(SCAN_TO, start + _BLOCK - 1) + 1)
        p = _power(Ns, d, w, alpha)
        hit = np.flatnonzero(p >= power)
        if hit.size:
            return QuestionsNeeded(int(Ns[hit[0]]), power, alpha, None, float(p[hit[0]]))
        start = int(Ns[-1]) + 1
    lo, hi = SCAN_TO, None
    N = SCAN_TO
    while hi is None:
        N = min(2 * N, LIMIT)
        if sign_test_power(N, d, w, alpha) >= power:
            hi = N
        elif N >= LIMIT:
            return QuestionsNeeded(None, power, alpha, f"more than {LIMIT:,}")
        else:
            lo = N
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if sign_test_power(mid, d, w, alpha) >= power:
            hi = mid
        else:
            lo = mid
    return QuestionsNeeded(hi, power, alpha, None, sign_test_power(hi, d, w, alpha))


def wilson_half_width(p: float, n: int, z: float = Z95) -> float:
    """Half-width of the Wilson score interval at proportion ``p`` over ``n`` questions, before clipping to [0, 1]:
    ``z / (2(n + z²)) · √(4np(1 − p) + z²)`` (Wilson 1927; :func:`audit.evaluation.stats.wilson`)."""
    return z / (2 * (n + z * z)) * math.sqrt(4 * n * p * (1 - p) + z * z)


def questions_for_half_width(p: float, half_width: float, z: float = Z95) -> int | None:
    """The smallest n whose 95% Wilson interval at proportion ``p`` has half-width at most ``half_width``.

    The half-width falls as n grows (its square's derivative in n has the sign of ``4p(1 − p)z² − 4np(1 − p) − 2z²``,
    negative), so n is found by bisection. None when ``p`` is not a number (no question to estimate it from).

    Raises
    ------
    ValueError
        ``p`` outside [0, 1] or ``half_width`` outside (0, 1).
    """
    if not 0 < half_width < 1:
        raise ValueError(f"the half-width must be within (0, 1), got {half_width!r}")
    if p is None or not math.isfinite(p):
        return None
    if not 0 <= p <= 1:
        raise ValueError(f"p must be within [0, 1], got {p!r}")
    lo, hi = 0, 1
    while wilson_half_width(p, hi, z) > half_width:
        lo, hi = hi, hi * 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if wilson_half_width(p, mid, z) <= half_width:
            hi = mid
        else:
            lo = mid
    return hi
