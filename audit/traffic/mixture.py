"""How much of the traffic is out of domain: the mixing weight of two labelled gate-distance distributions.

**Assumption** (stated wherever the figure is shown): every real question is like either the labelled
in-domain questions or the labelled out-of-domain ones of the same system, so the traffic's gate values
follow ``π · f_out + (1 − π) · f_in``, where ``f_in`` and ``f_out`` are the densities of the labelled
gate values and ``π`` is the share of traffic that is out of domain. Nothing else about the traffic is
assumed; where the assumption fails, the goodness of fit says so (below).

**Densities.** ``f_in`` and ``f_out`` are Gaussian kernel density estimates of the labelled gate values
(scipy ``gaussian_kde``: bandwidth by Scott's rule, ``h = σ̂ · m^(−1/5)`` with ``σ̂`` the sample standard
deviation, ddof = 1, and ``m`` the number of values; not corrected at the boundary of [0, 2]). They are
evaluated on a grid of :data:`BINS` equal cells spanning every value ± 4 h (a cell is far narrower than
a kernel), the traffic is counted in the same cells, and each density is normalised on the grid.

**Estimate.** ``π̂`` maximises the (binned) log-likelihood ``Σ_j n_j · log(π f_out,j + (1 − π) f_in,j)``
over [0, 1] (Dempster, Laird & Rubin 1977 for the mixing weight of known components; the function is
concave in ``π``, so the root of its slope is found by safeguarded Newton steps). The interval is a percentile
bootstrap (Efron & Tibshirani 1993, ch. 13): :data:`BOOTSTRAP` resamplings of the traffic and of both
labelled sets (the kernels keep their bandwidth), with a fixed seed (both echoed), the 2.5th and 97.5th
percentiles. From ``π̂`` and the labelled error rates at a cut come the **expected bluffs** (``1000 · π ·``
the share of labelled out-of-domain questions the gate lets through) and **expected abandoned answerable
questions** (``1000 · (1 − π) ·`` the share of labelled in-domain questions abandoned although answerable)
per thousand real questions, with the same bootstrap.

**Goodness of fit.** ``D`` = the largest gap between the traffic's cumulative distribution and the fitted
mixture's (the Kolmogorov–Smirnov distance on the grid), with where it lies. Its p-value is a parametric
bootstrap: traffic of the same size drawn from the fitted mixture, the labelled sets resampled, ``π``
fitted again and ``D`` measured again, :data:`BOOTSTRAP` times (a second stream of the same seed);
``p = (1 + #{D* ≥ D}) / (B + 1)``. Below 0.05 the two labelled distributions do not explain the traffic:
the estimate is shown with that warning. Reported numbers are rounded to 6 decimals.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["ASSUMPTION", "BINS", "BOOTSTRAP", "EstimateRefused", "Fit", "Interval", "LEVEL", "MixtureEstimate",
           "SEED", "estimate_mixture", "kde_bandwidth", "kde_on_grid"]

#: Bootstrap resamplings (interval and goodness of fit).
BOOTSTRAP = 1000
#: Seed of the bootstrap's generator (numpy ``default_rng``); echoed with every estimate.
SEED = 0
#: Coverage of the percentile interval.
LEVEL = 0.95
#: Cells of the grid the densities are evaluated on.
BINS = 1024
#: Decimals of every reported number (no figure decided by the last bits of a float).
DECIMALS = 6
#: Significance below which the fit is said to fail.
FIT_ALPHA = 0.05
_STEPS = 30
_BLOCK = 250

ASSUMPTION = ("every real question is like either the labelled in-domain questions or the labelled out-of-domain "
              "ones of the same system, so the traffic's gate values are a mixture of the two labelled "
              "distributions (each smoothed by a Gaussian kernel density estimate, Scott's rule)")


class EstimateRefused(ValueError):
    """The estimate cannot be computed; the message says why."""


def _r(x: float) -> float:
    return round(float(x), DECIMALS) if math.isfinite(x) else float(x)


@dataclass(frozen=True)
class Interval:
    """An estimate with its percentile-bootstrap interval."""

    estimate: float
    low: float
    high: float

    def to_dict(self) -> dict:
        return {"estimate": self.estimate, "low": self.low, "high": self.high}

    def scaled(self, k: float) -> "Interval":
        return Interval(_r(self.estimate * k), _r(self.low * k), _r(self.high * k))


@dataclass(frozen=True)
class Fit:
    """Goodness of fit of the mixture to the traffic.

    Attributes
    ----------
    statistic : float
        ``D``: the largest gap between the traffic's and the mixture's cumulative distributions (in [0, 1]).
    at : float
        The gate value where it lies (lower is better).
    traffic_below, mixture_below : float
        The share of traffic below ``at``, and what the mixture puts there.
    p_value : float
        Parametric bootstrap (see the module docstring).
    simulations, seed : int
    explained : bool
        ``p_value >= 0.05``: the two labelled distributions explain the traffic.
    """

    statistic: float
    at: float
    traffic_below: float
    mixture_below: float
    p_value: float
    simulations: int
    seed: int
    explained: bool

    def to_dict(self) -> dict:
        return {"statistic": self.statistic, "at": self.at, "traffic_below": self.traffic_below,
                "mixture_below": self.mixture_below, "p_value": self.p_value, "simulations": self.simulations,
                "seed": self.seed, "explained": self.explained}


@dataclass(frozen=True)
class MixtureEstimate:
    """The share of traffic out of domain, its interval, the expected errors at a cut, and the fit.

    Attributes
    ----------
    share_out_of_domain : Interval
        ``π̂`` in [0, 1].
    n_traffic, n_in, n_out : int
        Values the estimate used (finite gate values only).
    bandwidth_in, bandwidth_out : float
        Kernel bandwidths, in gate units.
    bins, bootstrap, seed : int
    level : float
    cut : float or None
        The cut (a gate value) of the expected figures.
    bluffs_per_1000, abandoned_answerable_per_1000 : Interval or None
        Expected per thousand real questions at ``cut`` (None without a cut).
    fit : Fit
    grid : numpy.ndarray, shape (bins,)
        Cell centres (gate values).
    density_in, density_out : numpy.ndarray, shape (bins,)
        The two labelled densities on the grid (per gate unit).
    """

    share_out_of_domain: Interval
    n_traffic: int
    n_in: int
    n_out: int
    bandwidth_in: float
    bandwidth_out: float
    bins: int
    bootstrap: int
    seed: int
    level: float
    cut: float | None
    bluffs_per_1000: Interval | None
    abandoned_answerable_per_1000: Interval | None
    fit: Fit
    grid: np.ndarray
    density_in: np.ndarray
    density_out: np.ndarray

    @property
    def assumption(self) -> str:
        return ASSUMPTION

    def mixture_density(self) -> np.ndarray:
        """The fitted mixture ``π̂ f_out + (1 − π̂) f_in`` on :attr:`grid`."""
        p = self.share_out_of_domain.estimate
        return p * self.density_out + (1 - p) * self.density_in

    def to_dict(self) -> dict:
        """Every figure and setting, JSON-ready (gate units; no grid)."""
        return {"share_out_of_domain": self.share_out_of_domain.to_dict(), "n_traffic": self.n_traffic,
                "n_in_domain": self.n_in, "n_out_of_domain": self.n_out,
                "bandwidth_in": self.bandwidth_in, "bandwidth_out": self.bandwidth_out,
                "bandwidth_rule": "scott", "bins": self.bins, "bootstrap": self.bootstrap, "seed": self.seed,
                "level": self.level, "method": "maximum likelihood mixing weight, percentile bootstrap",
                "assumption": ASSUMPTION,
                "bluffs_per_1000": self.bluffs_per_1000.to_dict() if self.bluffs_per_1000 else None,
                "abandoned_answerable_per_1000": (self.abandoned_answerable_per_1000.to_dict()
                                                  if self.abandoned_answerable_per_1000 else None),
                "fit": self.fit.to_dict()}


def kde_bandwidth(values: np.ndarray) -> float:
    """The kernel bandwidth ``h`` of scipy's ``gaussian_kde`` (Scott's rule) for 1-D ``values``, in their units.

    Raises
    ------
    EstimateRefused
        Fewer than 2 distinct values.
    """
    from scipy.stats import gaussian_kde

    v = np.asarray(values, dtype=np.float64)
    if len(np.unique(v)) < 2:
        raise EstimateRefused(f"a density needs at least 2 distinct values, got {len(np.unique(v))}")
    return float(math.sqrt(gaussian_kde(v).covariance[0, 0]))


def _kernel(centres: np.ndarray, values: np.ndarray, h: float) -> np.ndarray:
    """``K[j, i] = φ((c_j − x_i) / h) / h``, shape (len(centres), len(values))."""
    z = (centres[:, None] - values[None, :]) / h
    return np.exp(-0.5 * z * z) / (h * math.sqrt(2 * math.pi))


def kde_on_grid(values: np.ndarray, centres: np.ndarray, h: float | None = None) -> np.ndarray:
    """The Gaussian KDE of ``values`` at ``centres`` (bandwidth :func:`kde_bandwidth` unless given), per unit.

    Equals scipy's ``gaussian_kde(values)(centres)`` (tests check it); not normalised on the grid.
    """
    v = np.asarray(values, dtype=np.float64)
    h = kde_bandwidth(v) if h is None else h
    return _kernel(np.asarray(centres, dtype=np.float64), v, h).mean(axis=1)


def _normalise(f: np.ndarray, width: float) -> np.ndarray:
    s = f.sum(axis=-1, keepdims=True) * width
    return np.divide(f, s, out=np.zeros_like(f), where=s > 0)


def _mle(counts: np.ndarray, f_in: np.ndarray, f_out: np.ndarray) -> np.ndarray:
    """The mixing weight maximising ``Σ n_j log(π fo_j + (1 − π) fi_j)`` for each row, shape (b,).

    The log-likelihood is concave in ``π``: ``π = 0`` when its slope there is ≤ 0, ``π = 1`` when its slope
    there is ≥ 0, otherwise the root of the slope, found by Newton steps kept inside a bisection bracket
    (at most :data:`_STEPS`, until a step moves ``π`` by less than 1e-13). Cells where both densities are 0 add nothing.
    """
    diff = f_out - f_in
    occupied = counts > 0
    # the slope at the ends: +inf at 0 when traffic sits where only f_out is positive, -inf at 1 the reverse
    inf0 = (occupied & (f_in == 0) & (f_out > 0)).any(axis=1)
    inf1 = (occupied & (f_out == 0) & (f_in > 0)).any(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        s0 = np.where(f_in > 0, counts * diff / np.where(f_in > 0, f_in, 1.0), 0.0).sum(axis=1)
        s1 = np.where(f_out > 0, counts * diff / np.where(f_out > 0, f_out, 1.0), 0.0).sum(axis=1)
    at0, at1 = ~inf0 & (s0 <= 0), ~inf1 & (s1 >= 0)
    b = len(counts)
    lo, hi, p = np.zeros(b), np.ones(b), np.full(b, 0.5)
    for _ in range(_STEPS):
        mix = f_in + p[:, None] * diff
        r = np.where(mix > 0, diff / np.where(mix > 0, mix, 1.0), 0.0)
        slope, curve = (counts * r).sum(axis=1), -(counts * r * r).sum(axis=1)
        up = slope > 0
        lo, hi = np.where(up, p, lo), np.where(up, hi, p)
        with np.errstate(divide="ignore", invalid="ignore"):
            newton = p - slope / curve
        inside = np.isfinite(newton) & (newton > lo) & (newton < hi)
        step = np.where(inside, newton, (lo + hi) / 2)
        done = np.abs(step - p).max(initial=0.0) < 1e-13
        p = step
        if done:
            break
    return np.where(at0, 0.0, np.where(at1, 1.0, p))


def estimate_mixture(traffic: np.ndarray, labelled_in: np.ndarray, labelled_out: np.ndarray,
                     errors_in: np.ndarray | None = None, errors_out: np.ndarray | None = None,
                     cut: float | None = None, bootstrap: int = BOOTSTRAP, seed: int = SEED, bins: int = BINS,
                     level: float = LEVEL) -> MixtureEstimate:
    """Estimate the share of out-of-domain questions in ``traffic`` (see the module docstring).

    Parameters
    ----------
    traffic : numpy.ndarray, shape (n,)
        The traffic's gate distances (lower is better); non-finite ones (no result) are left out.
    labelled_in, labelled_out : numpy.ndarray, shape (m_in,), (m_out,)
        The same system's labelled gate distances, in domain and out of domain; non-finite ones are left out.
    errors_in, errors_out : numpy.ndarray of bool, optional
        Aligned with ``labelled_in`` / ``labelled_out``: abandoned answerable (in domain) and bluff (out of
        domain) at ``cut`` (:meth:`audit.traffic.labelled.Labelled.errors_at`). With both and ``cut``, the
        expected errors per thousand real questions are computed.
    cut : float, optional
        The cut they were computed at (a gate value; echoed).
    bootstrap : int
        Resamplings B (interval and goodness of fit), at least 100.
    seed : int
        numpy ``default_rng`` seed.
    bins : int
        Grid cells.

    Returns
    -------
    MixtureEstimate

    Raises
    ------
    EstimateRefused
        No finite traffic value; fewer than 2 distinct finite values in a labelled set; ``bootstrap`` < 100.
    """
    t = np.asarray(traffic, dtype=np.float64)
    li, lo_ = np.asarray(labelled_in, dtype=np.float64), np.asarray(labelled_out, dtype=np.float64)
    fin_i, fin_o = np.isfinite(li), np.isfinite(lo_)
    t = t[np.isfinite(t)]
    x_in, x_out = li[fin_i], lo_[fin_o]
    if not len(t):
        raise EstimateRefused("no traffic question has a result: nothing to estimate")
    if bootstrap < 100:
        raise EstimateRefused(f"bootstrap must be at least 100 resamplings, got {bootstrap}")
    try:
        h_in = kde_bandwidth(x_in)
    except EstimateRefused as e:
        raise EstimateRefused(f"labelled in-domain questions: {e}") from None
    try:
        h_out = kde_bandwidth(x_out)
    except EstimateRefused as e:
        raise EstimateRefused(f"labelled out-of-domain questions: {e}") from None
    both = errors_in is not None and errors_out is not None and cut is not None
    e_in = np.asarray(errors_in, dtype=np.float64)[fin_i] if both else np.zeros(len(x_in))
    e_out = np.asarray(errors_out, dtype=np.float64)[fin_o] if both else np.zeros(len(x_out))

    pad = 4 * max(h_in, h_out)
    lo, hi = float(min(t.min(), x_in.min(), x_out.min()) - pad), float(max(t.max(), x_in.max(), x_out.max()) + pad)
    edges = np.linspace(lo, hi, bins + 1)
    width = (hi - lo) / bins
    centres = (edges[:-1] + edges[1:]) / 2
    counts = np.histogram(t, bins=edges)[0].astype(np.float64)
    n, m_in, m_out = len(t), len(x_in), len(x_out)
    k_in, k_out = _kernel(centres, x_in, h_in), _kernel(centres, x_out, h_out)
    f_in, f_out = _normalise(k_in.mean(axis=1), width), _normalise(k_out.mean(axis=1), width)
    occ = counts > 0  # empty cells add nothing to the likelihood, and stay empty in every resampling
    pi = float(_mle(counts[None, occ], f_in[None, occ], f_out[None, occ])[0])

    rng = np.random.default_rng(seed)
    pis, bl, aa = [], [], []
    for start in range(0, bootstrap, _BLOCK):
        b = min(_BLOCK, bootstrap - start)
        wt = rng.multinomial(n, counts / n, size=b).astype(np.float64)
        wi = rng.multinomial(m_in, np.full(m_in, 1 / m_in), size=b) / m_in
        wo = rng.multinomial(m_out, np.full(m_out, 1 / m_out), size=b) / m_out
        fi, fo = _normalise(wi @ k_in.T, width), _normalise(wo @ k_out.T, width)
        p = _mle(wt[:, occ], fi[:, occ], fo[:, occ])
        pis.append(p)
        bl.append(1000 * p * (wo @ e_out))
        aa.append(1000 * (1 - p) * (wi @ e_in))
    pis_a = np.concatenate(pis)
    q = [100 * (1 - level) / 2, 100 * (1 + level) / 2]

    def interval(point: float, draws: np.ndarray) -> Interval:
        low, high = np.percentile(draws, q)
        return Interval(_r(point), _r(low), _r(high))

    share = interval(pi, pis_a)
    bluffs = interval(1000 * pi * float(e_out.mean()), np.concatenate(bl)) if both else None
    aband = interval(1000 * (1 - pi) * float(e_in.mean()), np.concatenate(aa)) if both else None

    # goodness of fit: the traffic's CDF against the fitted mixture's, and the same distance under the model
    cell = (pi * f_out + (1 - pi) * f_in) * width
    cell = cell / cell.sum()
    gaps = np.cumsum(counts) / n - np.cumsum(cell)
    j = int(np.argmax(np.abs(np.round(gaps, 9))))
    d_obs = round(abs(float(gaps[j])), 9)
    rng2 = np.random.default_rng([seed, 1])
    exceed = 0
    for start in range(0, bootstrap, _BLOCK):
        b = min(_BLOCK, bootstrap - start)
        ws = rng2.multinomial(n, cell, size=b).astype(np.float64)
        wi = rng2.multinomial(m_in, np.full(m_in, 1 / m_in), size=b) / m_in
        wo = rng2.multinomial(m_out, np.full(m_out, 1 / m_out), size=b) / m_out
        fi, fo = _normalise(wi @ k_in.T, width), _normalise(wo @ k_out.T, width)
        p = _mle(ws, fi, fo)
        fitted = (p[:, None] * fo + (1 - p[:, None]) * fi) * width
        fitted = fitted / fitted.sum(axis=1, keepdims=True)
        d = np.abs(np.cumsum(ws, axis=1) / n - np.cumsum(fitted, axis=1)).max(axis=1)
        exceed += int((np.round(d, 9) >= d_obs).sum())
    p_fit = (1 + exceed) / (bootstrap + 1)
    fit = Fit(_r(d_obs), _r(edges[j + 1]), _r(np.cumsum(counts)[j] / n), _r(np.cumsum(cell)[j]), _r(p_fit),
              bootstrap, seed, p_fit >= FIT_ALPHA)
    return MixtureEstimate(share, n, m_in, m_out, _r(h_in), _r(h_out), bins, bootstrap, seed, level,
                           cut, bluffs, aband, fit, centres, f_in, f_out)
