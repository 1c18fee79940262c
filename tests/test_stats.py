"""``audit.evaluation.stats`` in closed form against scipy, its oracle (equal to 1e-12), and off the warm path.

The specification's own figures (Wilson 38/64, the four sign tests) are in tests/test_evaluation.py.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from conftest import ROOT
from hypothesis import given, settings
from hypothesis import strategies as st

from audit.evaluation.stats import Z95, sign_test, wilson

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
