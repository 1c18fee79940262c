"""How well a score separates two groups: the ROC AUC with DeLong's 95% interval.

The AUC is the Mann-Whitney statistic: the share of (positive, negative) pairs the score orders rightly, a tie
counting one half (what ``sklearn.metrics.roc_auc_score`` computes). Its variance is DeLong, DeLong and
Clarke-Pearson (1988)'s, computed from midranks as Sun and Xu (2014) do; the interval is the estimate ± z·√variance,
clipped to [0, 1] (docs/definitions.md, *Separation*).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .stats import Z95

__all__ = ["Auc", "roc_auc"]


@dataclass(frozen=True)
class Auc:
    """ROC AUC (``value``) with its interval (``low``, ``high``; NaN with fewer than two of either group), the
    ``method`` ("DeLong"), ``level`` and the group sizes."""

    value: float
    low: float
    high: float
    method: str
    level: float
    positives: int
    negatives: int

    def to_dict(self) -> dict:
        return {"value": self.value, "low": self.low, "high": self.high, "method": self.method, "level": self.level,
                "positives": self.positives, "negatives": self.negatives}


def _midranks(x: np.ndarray) -> np.ndarray:
    """1-based ranks of ``x``, ties sharing the mean of their ranks."""
    _, inv, counts = np.unique(x, return_inverse=True, return_counts=True)
    ends = np.cumsum(counts).astype(np.float64)
    return ((ends - counts + 1 + ends) / 2)[inv.ravel()]


def roc_auc(positive, negative) -> Auc | None:
    """The AUC of a score (higher = more likely positive) with DeLong's 95% interval.

    Parameters
    ----------
    positive, negative : array-like of float, shapes (m,) and (n,)
        Scores of the positive and negative items (±inf allowed: they rank at the ends; NaN is not).

    Returns
    -------
    Auc or None
        None when a group is empty.

    Raises
    ------
    ValueError
        A NaN score.
    """
    x = np.asarray(positive, dtype=np.float64).ravel()
    y = np.asarray(negative, dtype=np.float64).ravel()
    if np.isnan(x).any() or np.isnan(y).any():
        raise ValueError("a score is NaN: every question needs a score to rank")
    m, n = len(x), len(y)
    if not m or not n:
        return None
    tz = _midranks(np.concatenate([x, y]))
    tx, ty = _midranks(x), _midranks(y)
    auc = float((tz[:m].sum() - m * (m + 1) / 2) / (m * n))
    if m < 2 or n < 2:
        return Auc(auc, math.nan, math.nan, "DeLong", 0.95, m, n)
    v10 = (tz[:m] - tx) / n
    v01 = 1.0 - (tz[m:] - ty) / m
    var = float(np.var(v10, ddof=1) / m + np.var(v01, ddof=1) / n)
    half = Z95 * math.sqrt(max(var, 0.0))
    return Auc(auc, max(0.0, auc - half), min(1.0, auc + half), "DeLong", 0.95, m, n)
