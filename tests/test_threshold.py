"""The gate and its sweep on hand-made distances."""

from __future__ import annotations

import math

import numpy as np

from audit.threshold import QueryDistances, counts_at, gate, separation, sweep, sweep_cuts


def qd(qid, dists, correct=None, in_domain=True):
    d = np.array(dists, dtype=float)
    c = np.array(correct if correct is not None else [False] * len(dists))
    nc = float(d[c].min()) if c.any() else None
    return QueryDistances(qid, qid, "documentation" if in_domain else "out-of-domain", in_domain,
                          np.arange(len(d)), d, c, float(d.min()), nc)


QS = [
    qd("a", [0.30, 0.40, 0.50, 0.60, 0.70], [False, True, False, False, False]),  # answer at 0.40
    qd("b", [0.55, 0.60, 0.65, 0.70, 0.75], [False] * 5),  # answer not in top 4
    qd("c", [0.62, 0.80, 0.9, 1.0, 1.1], [True, False, False, False, False]),  # answer at 0.62
    qd("o1", [0.50, 0.9, 1.0, 1.1, 1.2], in_domain=False),
    qd("o2", [0.80, 0.9, 1.0, 1.1, 1.2], in_domain=False),
]


def test_gate_outcomes_by_hand():
    assert gate(QS[0], 0.45).outcome == "answered" and gate(QS[0], 0.45).kept == (0, 1)
    assert gate(QS[0], 0.40).outcome == "answered without"  # strictly below: 0.40 is cut
    assert gate(QS[0], 0.30).outcome == "abandoned" and gate(QS[0], 0.30).answerable
    assert gate(QS[1], 0.50).outcome == "abandoned" and not gate(QS[1], 0.50).answerable
    assert gate(QS[3], 0.51).outcome == "bluff" and gate(QS[3], 0.50).outcome == "refused"
    assert len(gate(QS[0], 2.0).kept) == 4  # never more than four


def test_counts_at_a_cut():
    row = counts_at(QS, 0.6)
    # a: kept 0.30,0.40,0.50 with answer -> answered; b: kept 0.55 -> without; c: none -> abandoned answerable
    assert row["answered"] == 1 and row["answered without"] == 1 and row["abandoned"] == 1
    assert row["abandoned answerable"] == 1
    assert row["bluff"] == 1 and row["refused"] == 1


def test_sweep_covers_observed_distances_and_grid_and_no_threshold():
    cuts = sweep_cuts(QS)
    assert 0.62 in cuts and 0.025 in cuts and math.inf in cuts and 0.70 in cuts
    rows = sweep(QS)
    assert rows[-1]["threshold"] == math.inf and rows[-1]["bluff"] == 2
    bluffs = [r["bluff"] for r in rows]
    assert bluffs == sorted(bluffs)  # a higher cut never bluffs less
    assert rows[0]["abandoned"] == 3


def test_separation():
    s = separation(QS)
    assert s["worst_in_domain"] == 0.62 and s["best_out_of_domain"] == 0.50 and s["overlap"]
