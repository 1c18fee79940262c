"""Drift: has the traffic moved away from the labelled questions, or from an earlier window of itself?

Two-sample Kolmogorov–Smirnov tests (scipy ``ks_2samp``, two-sided, ``method="auto"``: exact for small
samples, asymptotic otherwise) on gate distances: the traffic against the labelled in-domain questions
of the same system, and one window of traffic against a baseline window. The statistic is the largest
gap between the two empirical cumulative distributions, the same on gate values as on the system's own
scores (it does not depend on the direction of the scale). Only finite gate distances take part
(a question with no result has none).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["KSTest", "WindowShift", "ks_test", "window_shift"]


@dataclass(frozen=True)
class KSTest:
    """A two-sample Kolmogorov–Smirnov test.

    Attributes
    ----------
    a, b : str
        What was compared (``traffic``, ``labelled in-domain``, ``window``, ``baseline``).
    n_a, n_b : int
    statistic : float
        The largest gap between the two empirical CDFs, in [0, 1] (rounded to 6 decimals).
    p_value : float
        Two-sided (rounded to 6 decimals); NaN when a side is empty.
    """

    a: str
    b: str
    n_a: int
    n_b: int
    statistic: float
    p_value: float

    def to_dict(self) -> dict:
        return {"a": self.a, "b": self.b, "n_a": self.n_a, "n_b": self.n_b, "statistic": self.statistic,
                "p_value": self.p_value}


def ks_test(a: np.ndarray, b: np.ndarray, a_name: str, b_name: str) -> KSTest:
    """``ks_2samp`` of the finite values of ``a`` and ``b`` (NaN statistic and p when either is empty)."""
    from scipy.stats import ks_2samp

    x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    x, y = x[np.isfinite(x)], y[np.isfinite(y)]
    if not len(x) or not len(y):
        return KSTest(a_name, b_name, len(x), len(y), float("nan"), float("nan"))
    r = ks_2samp(x, y)
    return KSTest(a_name, b_name, len(x), len(y), round(float(r.statistic), 6), round(float(r.pvalue), 6))


@dataclass(frozen=True)
class WindowShift:
    """A window of traffic against a baseline window, at one cut.

    Attributes
    ----------
    ks : KSTest
        Window against baseline.
    cut : float
        In the traffic's own units.
    no_answer_window, no_answer_baseline : float
        Share of each window's questions the gate refuses at the cut (nothing kept), in [0, 1].
    n_window, n_baseline : int
        Questions in each window.
    """

    ks: KSTest
    cut: float
    no_answer_window: float
    no_answer_baseline: float
    n_window: int
    n_baseline: int

    @property
    def shift(self) -> float:
        """``no_answer_window − no_answer_baseline`` (share points, in [−1, 1])."""
        return round(self.no_answer_window - self.no_answer_baseline, 6)

    def to_dict(self) -> dict:
        return {"ks": self.ks.to_dict(), "cut": self.cut, "no_answer_window": self.no_answer_window,
                "no_answer_baseline": self.no_answer_baseline, "shift": self.shift, "n_window": self.n_window,
                "n_baseline": self.n_baseline}


def window_shift(window_gate: np.ndarray, baseline_gate: np.ndarray, window_kept: np.ndarray,
                 baseline_kept: np.ndarray, cut: float) -> WindowShift:
    """The KS test of two windows' gate distances and the shift in their no-answer share at ``cut``.

    ``*_kept``: chunks kept per question at the cut (:meth:`audit.traffic.table.TrafficTable.kept_counts`).
    """
    def share(k: np.ndarray) -> float:
        return round(float((k == 0).mean()), 6) if len(k) else float("nan")

    return WindowShift(ks_test(window_gate, baseline_gate, "window", "baseline"), float(cut), share(window_kept),
                       share(baseline_kept), len(window_kept), len(baseline_kept))
