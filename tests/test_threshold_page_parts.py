"""The parts of the Threshold page a slider move reuses or recomputes (audit.views.threshold), by hand.

The histogram's bins anchored on the cut, the sweep's window that stays put while the cut moves inside it, a
sweep view moved to another cut, and the page's base computed once (issue 27).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from test_threshold import qd

from audit.evaluation.threshold import GateCounts
from audit.views.threshold import (
    gate_distance_frame,
    histogram_bins,
    sweep_view,
    sweep_window,
)



def test_bins_start_at_the_cut_and_count_each_outcome():
    # gate values 0.30 (answered), 0.40 (answered without), 0.60 (abandoned: at the cut), 0.649 (abandoned),
    # 0.71 (abandoned) at cut 0.6, step 0.05: bins [0.3, 0.35), [0.4, 0.45), [0.6, 0.65) twice, [0.7, 0.75)
    qs = [qd("a", [0.30, 0.5], [True, False]), qd("b", [0.40], [False]), qd("c", [0.60], [True]),
          qd("d", [0.649], [False]), qd("e", [0.71], [False]), qd("o", [0.2], in_domain=False)]
    f = gate_distance_frame(qs, 0.6)
    b = histogram_bins(f, "in-domain", 0.6, 0.05)
    assert b["bin start"].round(9).tolist() == [0.3, 0.4, 0.6, 0.7]
    assert b["bin end"].round(9).tolist() == [0.35, 0.45, 0.65, 0.75]
    assert b["outcome"].tolist() == ["answered", "answered without", "abandoned", "abandoned"]
    assert b["queries"].tolist() == [1, 1, 2, 1]
    assert b["outcome order"].tolist() == [0, 1, 2, 2]
    o = histogram_bins(f, "out-of-domain", 0.6, 0.05)
    assert (o["bin start"].round(9).tolist(), o["outcome"].tolist(), o["queries"].tolist()) == ([0.2], ["bluff"], [1])


def test_a_value_on_a_bin_edge_is_placed_by_its_rounded_quotient():
    # 0.1 + 0.2 is 0.30000000000000004: (v - 0.2) / 0.05 is 2.0000000000000004 → bin 2 ([0.3, 0.35)); 0.35 - 1e-12
    # is within 9 decimals of the edge, so it counts as on it: bin 3 ([0.35, 0.4)), with 0.35 itself
    f = pd.DataFrame({"domain": ["in-domain"] * 3, "outcome": ["abandoned"] * 3,
                      "gate distance": [0.1 + 0.2, 0.35 - 1e-12, 0.35]})
    b = histogram_bins(f, "in-domain", 0.2, 0.05)
    assert b["bin start"].round(9).tolist() == [0.3, 0.35] and b["queries"].tolist() == [1, 2]


def test_empty_and_bad_steps():
    f = pd.DataFrame({"domain": ["in-domain"], "outcome": ["abandoned"], "gate distance": [math.nan]})
    assert histogram_bins(f, "in-domain", 0.5, 0.025).empty
    with pytest.raises(ValueError, match="positive"):
        histogram_bins(f, "in-domain", 0.5, 0.0)


def _hand_sweep():
    t = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, math.inf]
    return pd.DataFrame({"threshold": t, "answered": [0] * 7, "answered without": [0] * 7,
                         "bluff": [0, 0, 1, 2, 5, 9, 10], "abandoned": [20, 12, 6, 3, 1, 0, 0],
                         "abandoned answerable": [0] * 7})


def test_the_window_stays_while_the_cut_moves_inside_it():
    sw = _hand_sweep()
    f = sw[np.isfinite(sw["threshold"])]
    # bend (0.3, 0.5) with the balanced cut 0.3, margin 10 % of 0.2 = 0.02 → (0.28, 0.52), whatever cut lies in it
    for cut in (0.28, 0.3, 0.45, 0.52):
        assert sweep_window(f, cut, 0.3) == pytest.approx((0.28, 0.52))
    # a cut outside widens it: (0.1, 0.5) and a margin of 0.04
    assert sweep_window(f, 0.1, 0.3) == pytest.approx((0.06, 0.54))
    assert sweep_window(f, 0.1, 0.3, whole=0.9) == (0.0, 0.9)


def test_a_sweep_view_moved_to_another_cut_keeps_its_curve():
    sw = _hand_sweep()
    a = GateCounts(0.3, abandoned=6, bluff=1, in_domain=20, out_of_domain=10)
    b = GateCounts(0.45, abandoned=3, bluff=2, in_domain=20, out_of_domain=10)
    v = sweep_view(sw, a, balanced=0.3)
    w = v.at(b)
    assert (w.lo, w.hi) == (v.lo, v.hi) and w.curve is v.curve and w.lines is v.lines
    assert set(w.here["threshold"]) == {0.45} and w.current["abandoned"] == 3
    assert w.here.set_index("outcome")["queries"].to_dict() == sweep_view(sw, b, balanced=0.3).here.set_index(
        "outcome")["queries"].to_dict()


def test_token_bins_count_chunks_per_strategy_and_bin():
    from audit.views.tokens import token_bins

    # step 8: 0..7 → bin 0, 8 → bin 1, 512 (a chunk drawn at the cap) → bin 64
    drawn = pd.DataFrame({"strategy": ["E", "E", "E", "A", "E"], "tokens (drawn)": [3, 7, 8, 512, 512]})
    b = token_bins(drawn, 8)
    assert b.to_dict("list") == {"strategy": ["E", "E", "E", "A"], "bin start": [0, 8, 512, 512],
                                 "bin end": [8, 16, 520, 520], "chunks": [2, 1, 1, 1]}
    assert token_bins(drawn.iloc[:0], 8).empty
    with pytest.raises(ValueError, match="positive integer"):
        token_bins(drawn, 0)
