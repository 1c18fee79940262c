"""How far reviewers agree: Cohen's κ for two, Krippendorff's α (ordinal) for any number, each with a bootstrap interval.

- **Cohen's κ** (Cohen 1960) over the items both reviewers graded: ``κ = (p_o − p_e) / (1 − p_e)``,
  ``p_o`` the share of items given the same grade, ``p_e = Σ_g p_A(g) · p_B(g)`` the agreement their own
  grade frequencies give by chance; undefined (NaN) when ``p_e = 1`` (both gave one and the same grade
  throughout). Unweighted: a grade 3 against a 2 counts as much as against a 0 (scikit-learn's
  ``cohen_kappa_score`` without weights, the tests' oracle).
- **Krippendorff's α** (Krippendorff 2011, *Computing Krippendorff's Alpha-Reliability*), ordinal metric,
  over every item at least two reviewers graded (missing labels allowed), computed by the ``krippendorff``
  package (Castro 2017) on the grade scale in use; ``α = 1 − D_o / D_e``.
- **Bootstrap interval**: the items resampled with replacement ``n_boot`` times (a ``numpy`` generator seeded
  with ``seed``, both echoed in the result), the statistic recomputed on each resample, the
  ``(1 − level) / 2`` and ``(1 + level) / 2`` percentiles of the finite values (a resample that leaves a
  statistic undefined is skipped and counted).

Items are ``(space, query id, chunk id)`` keys; grades are integers (traffic's "answerable / not in the corpus"
is 1 / 0). A disagreement is an item graded differently by two reviewers (:func:`disagreements`).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

__all__ = ["Agreement", "AgreementReport", "N_BOOT", "agreement", "cohen_kappa", "krippendorff_alpha"]

#: Bootstrap resamples by default.
N_BOOT = 1000


@dataclass(frozen=True)
class Agreement:
    """One agreement statistic with its bootstrap interval.

    Attributes
    ----------
    statistic : str
        ``kappa`` or ``alpha``.
    reviewers : tuple of str
    value, low, high : float
        NaN when undefined (fewer than two shared items, a single grade throughout).
    n_items : int
        Items the statistic reads (both graded for κ; at least two graders for α).
    level : float
    n_boot, seed : int
        The resampling, echoed.
    n_undefined : int
        Resamples on which the statistic was undefined (left out of the percentiles).
    """

    statistic: str
    reviewers: tuple
    value: float
    low: float
    high: float
    n_items: int
    level: float
    n_boot: int
    seed: int
    n_undefined: int = 0

    def to_dict(self) -> dict:
        def f(x):
            return None if not math.isfinite(x) else x
        return {"statistic": self.statistic, "reviewers": list(self.reviewers), "value": f(self.value),
                "low": f(self.low), "high": f(self.high), "n_items": self.n_items, "level": self.level,
                "n_boot": self.n_boot, "seed": self.seed, "n_undefined": self.n_undefined}

    def line(self) -> str:
        """``κ 0.615 [0.286, 0.901] over 12 items (ana, ben; 1000 resamples, seed 0)``; the resamples on which the
        statistic was undefined are named as the JSON's ``n_undefined`` counts them (``1000 resamples, 37
        undefined and left out of the interval``)."""
        sym = "κ" if self.statistic == "kappa" else "α (ordinal)"
        if not math.isfinite(self.value):
            return f"{sym} undefined over {self.n_items} items ({', '.join(self.reviewers)})"
        iv = ("" if not (math.isfinite(self.low) and math.isfinite(self.high))
              else f" [{self.low:.3f}, {self.high:.3f}]")
        dropped = (f", {self.n_undefined} undefined and left out of the interval" if self.n_undefined else "")
        return (f"{sym} {self.value:.3f}{iv} over {self.n_items} items ({', '.join(self.reviewers)}; "
                f"{self.n_boot} resamples{dropped}, seed {self.seed})")


def cohen_kappa(a: Sequence[int], b: Sequence[int]) -> float:
    """Cohen's κ of two equal-length grade sequences (the same items in the same order); NaN when undefined.

    Raises
    ------
    ValueError
        Sequences of different lengths.
    """
    if len(a) != len(b):
        raise ValueError(f"cohen_kappa needs the same items graded twice: {len(a)} grades against {len(b)}")
    n = len(a)
    if n == 0:
        return math.nan
    po = sum(1 for x, y in zip(a, b) if x == y) / n
    grades = set(a) | set(b)
    pe = math.fsum((sum(1 for x in a if x == g) / n) * (sum(1 for y in b if y == g) / n) for g in grades)
    return math.nan if pe >= 1.0 else (po - pe) / (1.0 - pe)


def krippendorff_alpha(matrix: np.ndarray, domain: Sequence[int] | None = None) -> float:
    """Krippendorff's ordinal α of a reviewers × items matrix (NaN = not graded); NaN when undefined.

    ``domain``: the grade scale (default the grades present), so the ordinal distances know the levels between.
    """
    import krippendorff

    m = np.asarray(matrix, dtype=float)
    graded = (~np.isnan(m)).sum(axis=0) >= 2
    m = m[:, graded]
    vals = np.unique(m[~np.isnan(m)])
    if m.shape[1] == 0 or len(vals) < 2:
        return math.nan
    dom = sorted(set(int(v) for v in vals) | set(int(d) for d in (domain or ())))
    return float(krippendorff.alpha(reliability_data=m, level_of_measurement="ordinal", value_domain=dom))


def _interval(stat, n_items: int, n_boot: int, seed: int, level: float) -> tuple[float, float, int]:
    rng = np.random.default_rng(seed)
    vals, undefined = [], 0
    for _ in range(n_boot):
        v = stat(rng.integers(0, n_items, n_items))
        if math.isfinite(v):
            vals.append(v)
        else:
            undefined += 1
    if not vals:
        return math.nan, math.nan, undefined
    lo, hi = np.percentile(np.array(vals), [100 * (1 - level) / 2, 100 * (1 + level) / 2])
    return float(lo), float(hi), undefined


@dataclass(frozen=True)
class AgreementReport:
    """The agreement of one queue (or of several qrels files): ``alpha`` over every reviewer, ``kappa`` of the
    first pair, ``pairs`` (κ of every pair, reviewer order), ``disagreements`` (item → reviewer → grade)."""

    queue: str
    reviewers: tuple
    alpha: Agreement
    kappa: Agreement
    pairs: tuple
    disagreements: Mapping

    def to_dict(self) -> dict:
        return {"queue": self.queue, "reviewers": list(self.reviewers), "kappa": self.kappa.to_dict(),
                "alpha": self.alpha.to_dict(), "pairs": [p.to_dict() for p in self.pairs],
                "disagreements": [{"item": list(k), "grades": dict(v)} for k, v in self.disagreements.items()],
                "seed": self.alpha.seed, "n_boot": self.alpha.n_boot}

    def lines(self) -> list[str]:
        out = [f"{self.queue}: {len(self.reviewers)} reviewers ({', '.join(self.reviewers)})", "  " + self.alpha.line()]
        out += ["  " + p.line() for p in self.pairs]
        out.append(f"  {len(self.disagreements)} disagreement{'s' if len(self.disagreements) != 1 else ''} "
                   "to adjudicate" + (":" if self.disagreements else ""))
        for item, grades in self.disagreements.items():
            out.append("    " + " / ".join(str(x) for x in item if x != "") + ": "
                       + ", ".join(f"{r} {g}" for r, g in grades.items()))
        return out


def agreement(grades: Mapping[str, Mapping[tuple, int]], queue: str = "", n_boot: int = N_BOOT, seed: int = 0,
              level: float = 0.95, domain: Sequence[int] | None = None) -> AgreementReport:
    """κ, α and the disagreements of ``grades`` (reviewer → item → grade), reviewers in mapping order.

    Raises
    ------
    ValueError
        Fewer than two reviewers, ``n_boot`` < 1 or a level outside (0, 1).
    """
    reviewers = tuple(grades)
    if len(reviewers) < 2:
        raise ValueError(f"agreement needs at least two reviewers, got {len(reviewers)} ({', '.join(reviewers)})")
    if int(n_boot) < 1 or not 0 < level < 1:
        raise ValueError(f"n_boot must be >= 1 and level in (0, 1), got {n_boot} and {level}")
    items = sorted({i for g in grades.values() for i in g}, key=lambda t: tuple(map(str, t)))
    m = np.array([[grades[r].get(i, np.nan) for i in items] for r in reviewers], dtype=float)
    multi = (~np.isnan(m)).sum(axis=0) >= 2
    mm = m[:, multi]
    a_val = krippendorff_alpha(mm, domain)
    lo, hi, und = _interval(lambda idx: krippendorff_alpha(mm[:, idx], domain), mm.shape[1], n_boot, seed, level) \
        if mm.shape[1] else (math.nan, math.nan, 0)
    alpha = Agreement("alpha", reviewers, a_val, lo, hi, int(mm.shape[1]), level, int(n_boot), int(seed), und)
    pairs = []
    for x, y in itertools.combinations(range(len(reviewers)), 2):
        both = ~np.isnan(m[x]) & ~np.isnan(m[y])
        ax, ay = m[x, both].astype(int).tolist(), m[y, both].astype(int).tolist()
        v = cohen_kappa(ax, ay)
        lo, hi, und = _interval(lambda idx: cohen_kappa([ax[i] for i in idx], [ay[i] for i in idx]), len(ax),
                                n_boot, seed, level) if ax else (math.nan, math.nan, 0)
        pairs.append(Agreement("kappa", (reviewers[x], reviewers[y]), v, lo, hi, len(ax), level, int(n_boot),
                               int(seed), und))
    dis = {}
    for j, item in enumerate(items):
        got = {r: int(m[i, j]) for i, r in enumerate(reviewers) if not np.isnan(m[i, j])}
        if len(set(got.values())) > 1:
            dis[item] = got
    return AgreementReport(queue, reviewers, alpha, pairs[0], tuple(pairs), dis)
