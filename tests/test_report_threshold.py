"""The Threshold page's frames (audit.views.threshold) on hand-made distances."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from audit.evaluation.threshold import (
    GateCounts,
    QueryDistances,
    counts_at,
    gate_distance,
    sweep,
    sweep_frame,
)
from audit.views.threshold import (
    SWEEP_LINES,
    bend_window,
    gate_distance_frame,
    histogram_extent,
    outcome_counts_frame,
    sweep_view,
)


def qd(qid, dists, correct=None, in_domain=True):
    d = np.array(dists, dtype=float)
    c = np.array(correct if correct is not None else [False] * len(dists), dtype=bool)
    nc = float(d[c].min()) if c.any() else None
    return QueryDistances(qid, qid, "documentation" if in_domain else "out-of-domain", in_domain,
                          np.arange(len(d)), d, c, float(d.min()) if len(d) else math.inf, nc)


QS = [
    qd("a", [0.30, 0.40, 0.50, 0.60, 0.70], [False, True, False, False, False]),  # nearest 0.30, answer 0.40
    qd("b", [0.55, 0.60, 0.65, 0.70, 0.75]),  # nearest 0.55, no answer in the order
    qd("c", [0.62, 0.80, 0.9, 1.0, 1.1], [True, False, False, False, False]),  # nearest = answer = 0.62
    qd("o1", [0.50, 0.9, 1.0, 1.1, 1.2], in_domain=False),
    qd("o2", [0.80, 0.9, 1.0, 1.1, 1.2], in_domain=False),
]


def test_gate_distance_is_the_smallest_distance_of_the_order_not_the_answer():
    assert gate_distance(QS[0]) == 0.30  # not 0.40, the answer's
    # a reranked order need not be sorted: the gate still decides on its smallest distance
    assert gate_distance(qd("r", [0.7, 0.2, 0.9])) == 0.2
    assert gate_distance(qd("e", [])) == math.inf


def test_gate_distance_frame_by_hand():
    f = gate_distance_frame(QS, 0.6)
    assert f["gate distance"].tolist() == [0.30, 0.55, 0.62, 0.50, 0.80]
    assert f["distance to the answer"].tolist()[0] == 0.40 and math.isnan(f["distance to the answer"][1])
    # a: kept 0.30..0.50 with the answer; b: kept 0.55, no answer; c: 0.62 ≥ 0.6; o1 kept 0.50; o2 not
    assert f["outcome"].tolist() == ["answered", "answered without", "abandoned", "bluff", "refused"]
    assert f["domain"].tolist() == ["in-domain"] * 3 + ["out-of-domain"] * 2
    # strictly below: at a cut equal to c's nearest distance, c is still abandoned
    assert gate_distance_frame(QS, 0.62)["outcome"][2] == "abandoned"
    assert gate_distance_frame(QS, 0.6201)["outcome"][2] == "answered"


@given(st.lists(st.tuples(st.booleans(), st.lists(st.floats(0, 2), min_size=1, max_size=6)), min_size=1,
                max_size=8),
       st.floats(0, 2))
def test_refused_or_abandoned_exactly_at_or_right_of_the_cut(queries, cut):
    qs = [qd(f"q{i}", d, [j == 0 for j in range(len(d))] if ind else None, ind)
          for i, (ind, d) in enumerate(queries)]
    f = gate_distance_frame(qs, cut)
    right = f["gate distance"] >= cut
    assert (f["outcome"].isin(["abandoned", "refused"]) == right).all()
    # the counts view adds up to the queries of each domain
    oc = outcome_counts_frame(counts_at(qs, cut))
    ind = sum(q.in_domain for q in qs)
    assert oc.groupby("domain")["queries"].sum().reindex(["in-domain", "out-of-domain"]).tolist() == [
        ind, len(qs) - ind]


def test_outcome_counts_frame_by_hand():
    oc = outcome_counts_frame(counts_at(QS, 0.6))
    assert oc[["domain", "outcome", "queries"]].values.tolist() == [
        ["in-domain", "answered", 1], ["in-domain", "answered without", 1], ["in-domain", "abandoned", 1],
        ["out-of-domain", "bluff", 1], ["out-of-domain", "refused", 1]]
    assert oc["share (%)"].tolist() == [33.3, 33.3, 33.3, 50.0, 50.0]  # 1 of 3, 1 of 2
    assert oc["meaning"].str.len().min() > 20
    # no out-of-domain query: shares are 0, not a division by zero
    none = outcome_counts_frame(counts_at(QS[:3], 0.6))
    assert none[none["domain"] == "out-of-domain"]["share (%)"].tolist() == [0.0, 0.0]


def test_histogram_extent_holds_the_data_and_the_cut():
    f = gate_distance_frame(QS, 0.6)
    assert histogram_extent(f, 0.6) == (0.0, 0.85)  # largest gate distance 0.80 + 0.05
    assert histogram_extent(f, 1.0) == (0.0, 1.05)  # the cut is beyond the data: still on the axis
    assert histogram_extent(f, 1.99) == (0.0, 2.0)  # capped at the largest cosine distance


def test_histogram_extent_of_a_similarity_run_pads_its_own_range():
    from audit.runset import SCORE_KINDS

    sim = SCORE_KINDS["similarity"]
    # similarities 0.8 and 0.2 (gate values -0.8, -0.2): the frame shows them back as similarities
    f = gate_distance_frame([qd("a", [-0.8], [True]), qd("o", [-0.2], in_domain=False)], -0.5, kind=sim)
    assert f["gate distance"].tolist() == [0.8, 0.2] and f["outcome"].tolist() == ["answered", "refused"]
    # range [0.2, 0.8] (the cut 0.5 inside it), padded by 5 % of 0.6 = 0.03 on each side
    assert histogram_extent(f, 0.5, sim) == pytest.approx((0.17, 0.83))
    assert histogram_extent(f, 1.4, sim) == pytest.approx((0.14, 1.46))  # a cut beyond the data widens it


def test_bend_window_on_the_real_sweep():
    sw = sweep_frame(sweep(QS))
    # errors = bluffs + abandoned: ≤0.30 → 3; (0.30, 0.50] → 2; (0.50, 0.55] → 3; (0.55, 0.62] → 2;
    # (0.62, 0.80] → 1 (only o1 bluffs); > 0.80 → 2. Fewest 1: the swept cuts 0.625 (grid) to 0.80
    assert bend_window(sw, slack=0) == (0.625, 0.8)
    # within 1 of it: from just above 0.30 (grid 0.325) to the last finite cut, 2.0
    assert bend_window(sw, slack=1) == (0.325, 2.0)
    with pytest.raises(ValueError, match="no finite cut"):
        bend_window(sw[~np.isfinite(sw["threshold"])])


def _hand_sweep():
    t = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, math.inf]
    return pd.DataFrame({"threshold": t, "answered": [0] * 7, "answered without": [0] * 7,
                         "bluff": [0, 0, 1, 2, 5, 9, 10], "abandoned": [20, 12, 6, 3, 1, 0, 0],
                         "abandoned answerable": [0] * 7})


def test_sweep_view_zooms_on_the_bend_and_keeps_the_current_cut():
    sw = _hand_sweep()
    # errors 20, 12, 7, 5, 6, 9: fewest 5, slack max(3, ceil(5/2)) = 3 → cuts with ≤ 8: 0.3 to 0.5
    assert bend_window(sw) == (0.3, 0.5)
    cur = GateCounts(0.1, answered=1, answered_without=2, abandoned=20, bluff=0, refused=10,
                     abandoned_answerable=4, in_domain=23, out_of_domain=10)
    v = sweep_view(sw, cur, balanced=0.3, labels=2)
    # widened to the current cut 0.1, then a margin of 10% of 0.4 on each side
    assert (v.lo, v.hi) == pytest.approx((0.06, 0.54))
    assert v.curve["threshold"].tolist() == [0.1, 0.2, 0.3, 0.4, 0.5]
    # 5 distinct points, 2 labels asked: every 3rd (0.1, 0.4) plus the balanced cut 0.3
    assert v.curve["label"].tolist() == ["0.100", "", "0.300", "0.400", ""]
    assert v.here["outcome"].tolist() == list(SWEEP_LINES)
    assert v.here["queries"].tolist() == [1, 2, 20, 4, 0] and set(v.here["threshold"]) == {0.1}
    assert len(v.lines) == 5 * len(SWEEP_LINES) and set(v.lines["outcome"]) == set(SWEEP_LINES)
    assert v.current["abandoned"] == 20
    # the whole range: [0, 0.9], every finite cut, no infinity
    w = sweep_view(sw, cur, whole=0.9)
    assert (w.lo, w.hi) == (0.0, 0.9) and w.curve["threshold"].tolist() == [0.1, 0.2, 0.3, 0.4, 0.5, 0.6]


def test_two_labelled_points_of_the_sweep_never_read_the_same():
    from audit.views.threshold import _distinct_labels

    assert _distinct_labels({0: 0.5036, 1: 0.5044, 2: 0.7}) == {0: "0.5036", 1: "0.5044", 2: "0.7000"}
    assert _distinct_labels({0: 0.25, 1: 0.5}) == {0: "0.250", 1: "0.500"}
