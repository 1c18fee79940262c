"""The ROC AUC of the gate value with DeLong's interval (issue 52): against scikit-learn's roc_auc_score and a
pairwise reimplementation of DeLong, DeLong and Clarke-Pearson (1988)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from audit.evaluation.auc import roc_auc


def _delong_pairwise(x, y):
    """DeLong's variance from its definition: ψ(x, y) = 1, ½, 0 over every pair; V10, V01 their row/column means."""
    psi = (x[:, None] > y[None, :]) + 0.5 * (x[:, None] == y[None, :])
    v10, v01 = psi.mean(axis=1), psi.mean(axis=0)
    return psi.mean(), np.var(v10, ddof=1) / len(x) + np.var(v01, ddof=1) / len(y)


@pytest.mark.parametrize("seed", range(5))
def test_auc_equals_sklearn_and_delong(seed):
    rng = np.random.default_rng(seed)
    x = np.round(rng.normal(1, 1, 40), 1)  # rounded: ties
    y = np.round(rng.normal(0, 1, 25), 1)
    a = roc_auc(x, y)
    want = roc_auc_score(np.r_[np.ones(len(x)), np.zeros(len(y))], np.r_[x, y])
    assert a.value == pytest.approx(want, abs=1e-12)
    auc, var = _delong_pairwise(x, y)
    half = 1.959963984540054 * math.sqrt(var)
    assert (a.low, a.high) == (pytest.approx(max(0, auc - half)), pytest.approx(min(1, auc + half)))
    assert a.method == "DeLong" and (a.positives, a.negatives) == (40, 25)


def test_infinite_scores_rank_at_the_ends_and_groups_must_exist():
    a = roc_auc([1.0, -np.inf, 3.0], [0.5, -np.inf])
    assert a.value == pytest.approx(roc_auc_score([1, 1, 1, 0, 0], [1.0, -1e300, 3.0, 0.5, -1e300]))
    assert roc_auc([], [1.0]) is None
    assert math.isnan(roc_auc([1.0], [0.0, 2.0]).low)
    with pytest.raises(ValueError, match="NaN"):
        roc_auc([np.nan], [1.0])
