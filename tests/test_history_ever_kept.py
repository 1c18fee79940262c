"""The positions a record keeps past rank 20 (audit.history.record._ever_kept), against the rule as first written.

A position is kept at some cut when fewer than ``keep`` earlier values are at or under its own (and it is
finite). The faster form keeps only the ``keep`` smallest values seen and looks only at values under the
``keep``-th smallest of the first ``keep`` (issue 27: the record is written on every warm report); it must
return the same positions on any order: unsorted, ties, infinities, NaN.
"""

from __future__ import annotations

import bisect
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from audit.history.record import _ever_kept


def reference(d: np.ndarray, keep: int) -> list[int]:
    out, seen = [], []
    for i, x in enumerate(d.tolist()):
        if math.isfinite(x) and bisect.bisect_right(seen, x) < keep:
            out.append(i)
        bisect.insort(seen, x)
    return out


def test_by_hand():
    # keep 2: 0.5 and 0.9 are the first two; 0.7 has one earlier value (0.5) at or under it: kept; 0.8 has two
    # (0.5, 0.7): not; 0.1 has none: kept; 0.5 again has 0.5 and 0.1 under or at it: not
    d = np.array([0.5, 0.9, 0.7, 0.8, 0.1, 0.5])
    assert _ever_kept(d, 2).tolist() == [0, 1, 2, 4] == reference(d, 2)


VALUES = st.one_of(st.sampled_from([0.1, 0.2, 0.2, 0.5, 1.0, math.inf, -math.inf, math.nan]),
                   st.floats(min_value=-2, max_value=2, allow_nan=False))


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(st.lists(VALUES, max_size=40), st.integers(1, 6))
def test_the_same_positions_as_the_rule_on_any_order(values, keep):
    d = np.array(values, dtype=np.float64)
    assert _ever_kept(d, keep).tolist() == reference(d, keep)
