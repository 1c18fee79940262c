"""The certified cut (issue 52): exact Clopper-Pearson bounds against scipy's beta quantile, the fixed-sequence scan
against a plain reimplementation, the questions needed at zero errors, and a seeded simulation showing the certified
cut breaks its promise in at most δ of repetitions where the naive "observed rate ≤ α" cut breaks it far more."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import beta as beta_dist

from audit.evaluation.guarantee import certified_range, certify, questions_at_zero, upper_bound


def _cp_upper(k, n, delta):
    """The one-sided Clopper-Pearson upper bound as its definition: the 1 − δ quantile of Beta(k + 1, n − k)."""
    return 1.0 if k == n else float(beta_dist.ppf(1 - delta, k + 1, n - k))


@pytest.mark.parametrize("k,n,delta", [(0, 30, 0.05), (1, 30, 0.05), (2, 30, 0.05), (5, 64, 0.025), (29, 30, 0.05),
                                       (30, 30, 0.05), (0, 1, 0.1), (3, 1000, 0.01)])
def test_upper_bound_is_the_beta_quantile(k, n, delta):
    assert upper_bound(k, n, delta) == pytest.approx(_cp_upper(k, n, delta), rel=1e-10, abs=1e-12)


def test_the_issue_figures():
    # 30 out-of-domain questions, none bluffed: 1 − 0.05^(1/30) ≈ 9.5%, so 5% cannot be certified
    assert upper_bound(0, 30, 0.05) == pytest.approx(0.0950339, abs=1e-6)
    # ln 0.05 / ln 0.95 = 58.4 → 59; and 59 is the first n where zero errors certify 5%
    assert questions_at_zero(0.05, 0.05) == 59
    assert upper_bound(0, 59, 0.05) <= 0.05 < upper_bound(0, 58, 0.05)
    for target, delta in [(0.01, 0.05), (0.1, 0.025), (0.05, 0.01)]:
        n = questions_at_zero(target, delta)
        assert n == math.ceil(math.log(delta) / math.log(1 - target))
        assert _cp_upper(0, n, delta) <= target < _cp_upper(0, n - 1, delta)


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="delta"):
        upper_bound(0, 10, 1.5)
    with pytest.raises(ValueError, match="errors"):
        upper_bound(11, 10, 0.05)
    assert math.isnan(upper_bound(0, 0, 0.05))


def _scan(cuts, errors, n, target, delta):
    """The scan as the issue states it, with scipy: from the first cut, stop at the first whose bound exceeds α."""
    best = None
    for c, e in zip(cuts, errors):
        if _cp_upper(e, n, delta) > target:
            break
        best = (c, _cp_upper(e, n, delta))
    return best


def test_certify_equals_the_scan_on_random_sweeps():
    rng = np.random.default_rng(52)
    for _ in range(200):
        n = int(rng.integers(1, 400))
        m = int(rng.integers(1, 40))
        errors = np.sort(rng.integers(0, n + 1, m) * rng.random() * 0.2).astype(int)  # grows with the cut
        cuts = np.sort(rng.random(m)).tolist()
        target, delta = float(rng.choice([0.01, 0.05, 0.1])), float(rng.choice([0.025, 0.05, 0.1]))
        got = certify(cuts, errors.tolist(), n, target, delta)
        want = _scan(cuts, errors.tolist(), n, target, delta)
        if want is None:
            assert got.cut is None and got.bound is None
        else:
            assert got.cut == want[0] and got.bound == pytest.approx(want[1], rel=1e-9)
        assert got.needed_at_zero == questions_at_zero(target, delta)


def test_the_scan_stops_at_the_first_failure():
    # a later cut passing again (it cannot for a monotone count, but the order is fixed in advance) is not taken
    got = certify([0.1, 0.2, 0.3], [0, 3, 0], 100, 0.05, 0.05)
    assert got.cut == 0.1


def test_certified_range_spends_half_of_delta_each_side():
    gate = [0.1, 0.2, 0.3, 0.4, 0.5]
    bluffs = [0, 0, 0, 2, 20]
    abandoned = [50, 10, 0, 0, 0]
    r = certified_range(gate, gate, bluffs, 200, abandoned, 100, 0.05, 0.10, 0.05)
    assert r.bluff.delta == r.abandoned.delta == 0.025
    want_up = _scan(gate, bluffs, 200, 0.05, 0.025)[0]
    want_down = _scan(gate[::-1], abandoned[::-1], 100, 0.10, 0.025)[0]
    assert (r.strictest, r.loosest, r.empty) == (want_down, want_up, False)
    # with few out-of-domain questions the bluff side certifies nothing: empty, and said in one sentence
    r = certified_range(gate, gate, bluffs, 30, abandoned, 100, 0.05, 0.10, 0.05)
    assert r.empty and r.strictest is None and "No cut meets both" in r.sentence()


def test_certified_cut_keeps_its_promise_in_simulation():
    """Each repetition draws 200 out-of-domain questions whose best scores are uniform on [0, 1] (so the bluff rate at
    cut c is c), sweeps every observed score, and checks whether the chosen cut's true rate exceeds α = 5%. The
    certified cut must break its promise in at most δ = 5% of repetitions (plus Monte Carlo error: 3 standard errors
    of a 5% proportion over 2,000 repetitions is 1.5 points); the naive cut (largest whose observed rate is ≤ α)
    breaks it about half of the time."""
    rng = np.random.default_rng(20211005)
    alpha, delta, n, reps = 0.05, 0.05, 200, 2000
    certified_bad = naive_bad = 0
    for _ in range(reps):
        s = np.sort(rng.random(n))
        cuts = np.concatenate([[0.0], s + 1e-12])  # a cut just above each score keeps it (strictly below the cut)
        bluffs = np.arange(n + 1)  # at the i-th cut, i questions score below it
        c = certify(cuts.tolist(), bluffs.tolist(), n, alpha, delta)
        true_rate = 0.0 if c.cut is None else min(c.cut, 1.0)
        certified_bad += true_rate > alpha
        ok = np.flatnonzero(bluffs / n <= alpha)
        naive_bad += min(cuts[ok[-1]], 1.0) > alpha
    se = math.sqrt(delta * (1 - delta) / reps)
    assert certified_bad / reps <= delta + 3 * se
    assert naive_bad / reps > 0.3
