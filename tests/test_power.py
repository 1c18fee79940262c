"""Questions needed, as power (issue 52): the exact power of the two-sided sign test against an independent
computation with scipy's binomtest and binom.pmf; the Wilson half-width's questions against scipy's own interval."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binom, binomtest

from audit.evaluation.power import (
    QuestionsNeeded,
    questions_for_half_width,
    questions_for_power,
    sign_test_power,
)


def _reject_region(D, alpha):
    """Win counts k on D discordant questions where the exact two-sided binomial test (p = ½) gives p < α: scipy's
    binomtest p-value, min(1, 2 · P(Binom(D, ½) ≤ min(k, D − k))), vectorised (binomtest itself checks it below)."""
    k = np.arange(D + 1)
    p = np.minimum(1.0, 2 * binom.cdf(np.minimum(k, D - k), D, 0.5))
    return k[p < alpha].tolist() if D else []


@pytest.mark.parametrize("D", [1, 6, 17, 40, 101])
def test_the_rejection_region_is_binomtests(D):
    assert _reject_region(D, 0.05) == [k for k in range(D + 1) if binomtest(k, D, 0.5).pvalue < 0.05]


_REGIONS: dict = {}


def _power(N, d, w, alpha=0.05):
    """Σ_D Binom(D; N, d) · P(Binom(D, w) falls in the rejection region), straight from the definition."""
    total = 0.0
    for D in range(N + 1):
        if (D, alpha) not in _REGIONS:
            _REGIONS[D, alpha] = _reject_region(D, alpha)
        region = _REGIONS[D, alpha]
        if region:
            total += binom.pmf(D, N, d) * binom.pmf(region, D, w).sum()
    return total


def _needed(wins, losses, n, power=0.8, alpha=0.05, stop=400):
    d, w = (wins + losses) / n, wins / (wins + losses)
    for N in range(1, stop):
        if _power(N, d, w, alpha) >= power:
            return N
    return None


@pytest.mark.parametrize("N,d,w", [(20, 0.3, 0.8), (64, 21 / 64, 18 / 21), (120, 0.2, 0.7), (50, 0.5, 0.5),
                                   (80, 0.1, 1.0)])
def test_power_equals_the_definition(N, d, w):
    assert sign_test_power(N, d, w) == pytest.approx(_power(N, d, w), abs=1e-10)


@pytest.mark.parametrize("wins,losses,n", [(18, 3, 64), (12, 2, 64), (9, 2, 40)])
def test_questions_needed_equal_a_scan_with_scipy(wins, losses, n):
    got = questions_for_power(wins, losses, n)
    want = _needed(wins, losses, n)
    assert got.N == want and got.note is None
    assert got.reached == pytest.approx(_power(want, (wins + losses) / n, wins / (wins + losses)), abs=1e-10)
    assert _power(want - 1, (wins + losses) / n, wins / (wins + losses)) < 0.8 <= got.reached


def test_other_power_and_level():
    got = questions_for_power(12, 2, 64, power=0.9, alpha=0.01)
    assert got.N == _needed(12, 2, 64, power=0.9, alpha=0.01) and got.to_dict() == {"N": got.N, "power": 0.9,
                                                                                     "alpha": 0.01}


def test_equal_wins_and_losses_never_separate():
    # w = ½: the sign test rejects with probability α (or less) whatever N: no N reaches 80%
    q = questions_for_power(5, 5, 64)
    assert q == QuestionsNeeded(None, 0.8, 0.05, "never")
    assert q.to_dict() == {"N": None, "power": 0.8, "alpha": 0.05, "note": "never"}
    assert _power(200, 10 / 64, 0.5) < 0.05  # the definition agrees: power stays under α at w = ½
    assert questions_for_power(0, 0, 64).note == "never"


def test_a_tiny_difference_needs_more_than_the_limit():
    q = questions_for_power(501, 500, 1001)
    assert q.N is None and q.note == "more than 100,000"


def test_large_n_by_bisection_reaches_the_power():
    q = questions_for_power(10, 6, 64)
    d, w = 16 / 64, 10 / 16
    assert q.N > 100 and sign_test_power(q.N, d, w) >= 0.8 > sign_test_power(q.N - 1, d, w)


def _half_width_scipy(p, n):
    """Half of scipy's Wilson interval width at successes p·n (a continuous count, as the formula allows)."""
    z = 1.959963984540054
    centre = (2 * n * p + z * z) / (2 * (n + z * z))
    return z / (2 * (n + z * z)) * np.sqrt(4 * n * p * (1 - p) + z * z), centre


@pytest.mark.parametrize("p,h", [(0.5, 0.05), (0.6, 0.03), (0.9, 0.05), (0.594, 0.1)])
def test_questions_for_half_width(p, h):
    n = questions_for_half_width(p, h)
    # against scipy's own Wilson interval where p·n is a whole count
    k = round(p * n)
    if abs(k - p * n) < 1e-9:
        ci = binomtest(k, n).proportion_ci(method="wilson")
        assert (ci.high - ci.low) / 2 <= h + 1e-12
    assert _half_width_scipy(p, n)[0] <= h < _half_width_scipy(p, n - 1)[0]
    assert questions_for_half_width(float("nan"), h) is None
    with pytest.raises(ValueError, match="half-width"):
        questions_for_half_width(p, 0)
