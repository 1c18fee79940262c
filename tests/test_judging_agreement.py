"""Agreement of reviewers: κ against scikit-learn and a hand count, α against the krippendorff documentation's
worked example and an independent coincidence-matrix computation (Krippendorff 2011)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

from audit.judging.agreement import agreement, cohen_kappa, krippendorff_alpha

# The reliability data of the krippendorff package's docstring (Krippendorff's "C" example, 3 coders × 15 units,
# NaN = not coded): its documentation gives nominal α 0.691358 and interval α 0.810845.
C_DATA = [[math.nan, math.nan, math.nan, math.nan, math.nan, 3, 4, 1, 2, 1, 1, 3, 3, math.nan, 3],
          [1, math.nan, 2, 1, 3, 3, 4, 3, math.nan, math.nan, math.nan, math.nan, math.nan, math.nan, math.nan],
          [math.nan, math.nan, 2, 1, 3, 4, 4, math.nan, 2, 1, 1, 3, 3, math.nan, 4]]


def ordinal_alpha_by_hand(data) -> float:
    """Krippendorff (2011), *Computing Krippendorff's Alpha-Reliability*, written out: the coincidence matrix
    o_ck = Σ_u (pairs c-k in unit u) / (m_u − 1) over units with m_u >= 2 values, n_c its margins, n the
    pairable values; ordinal δ²_ck = (Σ_{g=c..k} n_g − (n_c + n_k)/2)²; α = 1 − (n − 1) Σ o_ck δ² / Σ n_c n_k δ²."""
    m = np.asarray(data, dtype=float)
    values = sorted({v for v in m[~np.isnan(m)]})
    at = {v: i for i, v in enumerate(values)}
    o = np.zeros((len(values), len(values)))
    for u in m.T:
        vs = [v for v in u if not math.isnan(v)]
        if len(vs) < 2:
            continue
        for i, a in enumerate(vs):
            for j, b in enumerate(vs):
                if i != j:
                    o[at[a], at[b]] += 1 / (len(vs) - 1)
    nc = o.sum(axis=1)
    n = nc.sum()

    def d2(c, k):
        lo, hi = min(c, k), max(c, k)
        return (nc[lo:hi + 1].sum() - (nc[c] + nc[k]) / 2) ** 2

    L = len(values)
    do = sum(o[c, k] * d2(c, k) for c in range(L) for k in range(L))
    de = sum(nc[c] * nc[k] * d2(c, k) for c in range(L) for k in range(L))
    return 1 - (n - 1) * do / de


def test_krippendorff_package_reproduces_its_documented_worked_example():
    import krippendorff

    assert round(krippendorff.alpha(reliability_data=C_DATA, level_of_measurement="nominal"), 6) == 0.691358
    assert round(krippendorff.alpha(reliability_data=C_DATA, level_of_measurement="interval"), 6) == 0.810845


def test_ordinal_alpha_equals_the_coincidence_matrix_by_hand():
    ours = krippendorff_alpha(np.array(C_DATA))
    assert ours == pytest.approx(ordinal_alpha_by_hand(C_DATA), abs=1e-12)
    assert round(ours, 3) == 0.807  # Krippendorff (2011) reports α_ordinal = .807 for this example


def test_kappa_by_hand_and_against_scikit_learn():
    # 6 items; agree on 4 (p_o = 4/6); each says 1 three times (p_e = 1/2·1/2 + 1/2·1/2 = 1/2) → κ = 1/3
    a, b = [1, 1, 0, 0, 1, 0], [1, 0, 0, 0, 1, 1]
    assert cohen_kappa(a, b) == pytest.approx(1 / 3)
    sk = pytest.importorskip("sklearn.metrics")
    g1, g2 = [0, 1, 2, 3, 3, 2, 1, 0, 2, 2], [0, 1, 2, 2, 3, 1, 1, 0, 3, 2]
    assert cohen_kappa(g1, g2) == pytest.approx(sk.cohen_kappa_score(g1, g2), abs=1e-12)
    assert math.isnan(cohen_kappa([1, 1], [1, 1]))  # one grade throughout: p_e = 1, undefined
    with pytest.raises(ValueError, match="same items graded twice"):
        cohen_kappa([1], [1, 0])


@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), min_size=2, max_size=30))
def test_kappa_matches_scikit_learn_on_any_grades(pairs):
    sk = pytest.importorskip("sklearn.metrics")
    a, b = [p[0] for p in pairs], [p[1] for p in pairs]
    ours = cohen_kappa(a, b)
    if math.isnan(ours):
        assert len(set(a) | set(b)) == 1
    else:
        assert ours == pytest.approx(sk.cohen_kappa_score(a, b), abs=1e-9)


def test_agreement_report_with_a_seeded_bootstrap_and_the_disagreements():
    items = [("", f"q{i}", "c") for i in range(15)]
    grades = {name: {it: int(v) for it, v in zip(items, row) if not math.isnan(v)}
              for name, row in zip(("ana", "ben", "cy"), C_DATA)}
    rep = agreement(grades, "pool", n_boot=200, seed=3)
    assert rep.alpha.value == pytest.approx(ordinal_alpha_by_hand(C_DATA), abs=1e-12)
    assert rep.alpha.n_items == 12  # units 2, 14 have no value and unit 1 one: not pairable (Krippendorff 2011)
    assert rep.alpha.low <= rep.alpha.value <= rep.alpha.high and rep.alpha.seed == 3 and rep.alpha.n_boot == 200
    assert agreement(grades, "pool", n_boot=200, seed=3).to_dict() == rep.to_dict()  # the seed decides
    # pairs: ana–ben share units 6, 7, 8 (0-based 5, 6, 7): 3/3, 4/4, 1/3; ana–cy share 9 units
    ab = next(p for p in rep.pairs if p.reviewers == ("ana", "ben"))
    assert ab.n_items == 3 and ab.value == pytest.approx(cohen_kappa([3, 4, 1], [3, 4, 3]))
    assert rep.kappa is rep.pairs[0]
    # disagreements: unit 6 (ana 3, ben 3, cy 4), unit 8 (ana 1, ben 3), unit 15 (ana 3, cy 4)
    assert {k[1]: v for k, v in rep.disagreements.items()} == {
        "q5": {"ana": 3, "ben": 3, "cy": 4}, "q7": {"ana": 1, "ben": 3}, "q14": {"ana": 3, "cy": 4}}
    js = rep.to_dict()
    assert set(js) >= {"kappa", "alpha", "pairs", "disagreements", "seed"} and js["alpha"]["low"] is not None
    with pytest.raises(ValueError, match="at least two reviewers"):
        agreement({"ana": {}})
