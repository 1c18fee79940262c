"""``audit.evaluation.stats`` in closed form against scipy, its oracle (equal to 1e-12), and off the warm path.

The specification's own figures (Wilson 38/64, the four sign tests) are in tests/test_evaluation.py.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest
from conftest import ROOT
from hypothesis import given, settings
from hypothesis import strategies as st

from audit.evaluation.stats import Z95, queries_needed, sign_test, wilson

scipy_stats = pytest.importorskip("scipy.stats")
scipy_special = pytest.importorskip("scipy.special")

TOL = 1e-12


def _scipy_wilson(k: int, n: int, level: float = 0.95) -> tuple[float, float]:
    ci = scipy_stats.binomtest(k, n).proportion_ci(confidence_level=level, method="wilson")
    return float(ci.low), float(ci.high)


def _scipy_sign(w: int, l: int) -> float:
    return float(scipy_stats.binomtest(w, w + l, 0.5, alternative="two-sided").pvalue)


def test_z95_is_scipys_quantile():
    assert Z95 == float(scipy_special.ndtri(0.5 + 0.5 * 0.95))


# every (s, n) for n ≤ 120, then every s of a few larger n up to 3,000 (odd, even, powers of two)
_GRID_N = list(range(1, 121)) + [255, 256, 1000, 2047, 3000]


@pytest.mark.parametrize("n", _GRID_N)
def test_wilson_equals_scipy_on_a_grid(n):
    for k in range(n + 1):
        iv = wilson(k, n)
        lo, hi = _scipy_wilson(k, n)
        assert abs(iv.low - lo) <= TOL and abs(iv.high - hi) <= TOL, (k, n)
        assert iv.estimate == k / n and (iv.successes, iv.n) == (k, n)


def test_wilson_at_the_ends_and_other_levels():
    # s = 0 and s = n are clipped exactly as scipy clips them
    assert wilson(0, 7).low == 0.0 and wilson(7, 7).high == 1.0
    for level in (0.8, 0.9, 0.99):
        for k, n in ((0, 5), (3, 10), (38, 64), (64, 64)):
            lo, hi = _scipy_wilson(k, n, level)
            iv = wilson(k, n, level)
            assert abs(iv.low - lo) <= TOL and abs(iv.high - hi) <= TOL and iv.level == level
    with pytest.raises(ValueError, match="level"):
        wilson(3, 10, 1.5)


def test_sign_test_equals_scipy_on_a_grid():
    pairs = [(w, d - w) for d in range(1, 101) for w in range(d + 1)]
    # larger D: both tails, the centre, one-offs around it
    pairs += [(w, d - w) for d in (999, 1000, 2999, 3000) for w in (0, 1, 7, d // 4, d // 2 - 40, d // 2 - 1,
                                                                   d // 2, d // 2 + 1, d - 3, d)]
    for w, l in pairs:
        assert abs(sign_test(w, l) - _scipy_sign(w, l)) <= TOL, (w, l)


def test_sign_test_by_hand():
    # +3/-0: D = 3, tail C(3,0) = 1, p = 2/8
    assert sign_test(3, 0) == 0.25
    # +2/-2: D = 4, tail 1 + 4 + 6 = 11, 2*11/16 > 1 → 1
    assert sign_test(2, 2) == 1.0
    # +5/-1: tail 1 + 6 = 7, p = 14/64
    assert sign_test(5, 1) == 14 / 64
    with pytest.raises(ValueError):
        sign_test(-1, 2)


def _queries_needed_by_definition(wins, losses, n_queries, alpha=0.05, max_steps=None):
    """The definition (docs/definitions.md, *Paired tests*) with scipy's p-value at every D'."""
    d = wins + losses
    if d == 0 or wins == losses:
        return None
    if _scipy_sign(wins, losses) < alpha:
        return n_queries
    share = wins / d
    stop = 100 * d + 10_000 if max_steps is None else min(100 * d + 10_000, d + 1 + max_steps)
    for dd in range(d + 1, stop):
        w = int(round(share * dd))
        if _scipy_sign(w, dd - w) < alpha:
            return int(math.ceil(n_queries * dd / d))
    return "beyond" if max_steps is not None and stop < 100 * d + 10_000 else None


def test_queries_needed_equals_the_definition_with_scipy():
    checked = 0
    for d in range(1, 25):
        for w in range(d + 1):
            want = _queries_needed_by_definition(w, d - w, 94, max_steps=300)
            got = queries_needed(w, d - w, 94)
            if want == "beyond":  # the definition needs more than 300 steps: ours must too
                assert got is None or got > math.ceil(94 * (d + 300) / d), (w, d - w, got)
            else:
                assert got == want, (w, d - w)
                checked += 1
    assert checked > 250  # most of the 324 pairs are decided within 300 steps


def test_queries_needed_by_hand():
    # +10/-6 (p = 0.45), share 0.625: D' = 60 gives 38/22 (p = 0.0519), 64 gives 40/24 (0.0599) and 65 gives
    # 41/24 (0.0464), the first below 0.05; so 64 queries scale to ceil(64 * 65 / 16) = 260
    assert sign_test(38, 22) > 0.05 and sign_test(40, 24) > 0.05 > sign_test(41, 24)
    assert all(sign_test(round(0.625 * dd), dd - round(0.625 * dd)) >= 0.05 for dd in range(17, 65))
    assert queries_needed(10, 6, 64) == 260
    assert queries_needed(47, 46, 94) is None  # 47:46 never reaches p < 0.05 below D' = 19,300


def _queries_needed_exact_scan(wins: int, losses: int, n_queries: int, alpha: float = 0.05):
    """Every D' in exact integers, one step at a time (Pascal's rule): the definition without a float."""
    d = wins + losses
    if d == 0 or wins == losses:
        return None
    if sign_test(wins, losses) < alpha:
        return n_queries
    share, k = wins / d, min(wins, losses)
    c, tail = math.comb(d, k), sum(math.comb(d, i) for i in range(k + 1))
    for dd in range(d + 1, 100 * d + 10_000):
        tail, c = 2 * tail - c, c * dd // (dd - k)
        w = round(share * dd)
        while k < min(w, dd - w):
            c, k = c * (dd - k) // (k + 1), k + 1
            tail += c
        if min(1.0, 2 * tail / (1 << dd)) < alpha:
            return math.ceil(n_queries * dd / d)
    return None


@settings(max_examples=60, deadline=None)
@given(w=st.integers(0, 200), l=st.integers(0, 200), exact_to=st.sampled_from([0, 50, 4096]),
       margin=st.sampled_from([1e-6, 0.02]))
def test_queries_needed_screened_equals_the_exact_scan(w, l, exact_to, margin):
    # the float screen (beyond EXACT_SCAN_TO) gives the exact scan's answer; a wide margin sends every
    # count near alpha to the exact integers and changes nothing
    from audit.evaluation import stats

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(stats, "EXACT_SCAN_TO", exact_to)
        mp.setattr(stats, "SCREEN_MARGIN", margin)
        assert queries_needed(w, l, 1000) == _queries_needed_exact_scan(w, l, 1000)


def test_queries_needed_decides_the_band_in_exact_integers(monkeypatch):
    # +10/-6 scaled: D' = 60 has p = 0.0519, inside a 5% band around 0.05 (float alone cannot rule it out),
    # so its tail is summed exactly and found not significant; D' = 65 (p = 0.0464, outside the band) is taken
    # on the float, and the answer is the by-hand one
    from audit.evaluation import stats

    monkeypatch.setattr(stats, "EXACT_SCAN_TO", 0)
    monkeypatch.setattr(stats, "SCREEN_MARGIN", 0.05)
    calls = []
    real = stats._tail
    monkeypatch.setattr(stats, "_tail", lambda d, k: calls.append(d) or real(d, k))
    assert queries_needed(10, 6, 64) == 260
    assert 60 in calls and 65 not in calls


@pytest.mark.slow
def test_queries_needed_at_a_large_runs_scale():
    # 5,100 : 5,000 discordant queries of 10,000 (a 100k-query run's paired test): the screen's answer is the
    # exact scan's (which takes seconds), and the answer scales the counts, not the queries
    assert queries_needed(5100, 5000, 10_000) == _queries_needed_exact_scan(5100, 5000, 10_000) == 38_801
    assert queries_needed(5100, 5000, 20_000) == 77_602


@settings(max_examples=200, deadline=None)
@given(n=st.integers(1, 5000), data=st.data())
@pytest.mark.slow
def test_wilson_properties_and_scipy(n, data):
    k = data.draw(st.integers(0, n))
    iv = wilson(k, n)
    assert 0.0 <= iv.low <= iv.estimate <= iv.high <= 1.0
    lo, hi = _scipy_wilson(k, n)
    assert abs(iv.low - lo) <= TOL and abs(iv.high - hi) <= TOL
    # the interval of n − k failures mirrors it
    mirror = wilson(n - k, n)
    assert abs(mirror.low - (1 - iv.high)) <= 1e-12 and abs(mirror.high - (1 - iv.low)) <= 1e-12


@settings(max_examples=200, deadline=None)
@given(w=st.integers(0, 3000), l=st.integers(0, 3000))
@pytest.mark.slow
def test_sign_test_properties_and_scipy(w, l):
    p = sign_test(w, l)
    assert 0.0 <= p <= 1.0 and p == sign_test(l, w)  # 0.0 only where 2^-D underflows (D > 1,074)
    if w + l:
        assert abs(p - _scipy_sign(w, l)) <= TOL
    # one more win for the side already ahead never raises the p-value
    if w > l:
        assert sign_test(w + 1, l) <= p


def test_a_report_imports_neither_scipy_stats_nor_torch(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "guide.md").write_text("# Guide\n\n## Install\n\nThe installer must be run twice on a fresh machine.\n"
                                   "\n## Usage\n\nCall the tool with a path.\n", encoding="utf-8")
    gt = tmp_path / "gt.jsonl"
    gt.write_text(json.dumps({"id": "n1", "needle": "The installer must be run twice on a fresh machine",
                              "questions": ["How many times must the installer run?", "do i rerun setup?"]}) + "\n",
                  encoding="utf-8")
    ood = tmp_path / "ood.txt"
    ood.write_text("how do I cook paella\n", encoding="utf-8")
    code = ("import sys, io, contextlib\nfrom audit.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            f"    rc = main(['report', '--corpus', {str(docs)!r}, '--ground-truth', {str(gt)!r}, '--out-of-domain', "
            f"{str(ood)!r}, '--model', 'hashing', '--reranker', 'none', '--strategies', 'C,E', '--quiet'])\n"
            "print(rc, 'scipy.stats' in sys.modules, 'torch' in sys.modules)\n")
    env = {"AUDIT_HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1"}
    for _ in range(2):  # cold, then warm
        out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, env=env)
        assert out.stdout.split() == ["0", "False", "False"], out.stderr[-2000:]
