"""The array walks over a columnar run (:class:`audit.runset.ColumnarRankings`) against the per-query walks they
stand in for: the same data read as a mapping query id → :class:`audit.runset.Ranked` (a plain dict) must say the
same, whichever way the judgments are held (dicts or :class:`audit.evaluation.judgments.ColumnarJudgments`)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, strategies as st

from audit.evaluation import measures
from audit.evaluation.judgments import ColumnarJudgments, Qrels
from audit.runset import ColumnarRankings

DOCS = [f"d{i}" for i in range(10)] + ["D1", "d10", "e"]  # ids whose str order is not their number's


@st.composite
def columnar_case(draw):
    """(rankings as columns, judgments as dicts): few distinct scores, so ties straddle relevant chunks often."""
    qids, offsets, codes, scores, qrels = [], [0], [], [], {}
    for q in range(draw(st.integers(1, 7))):
        qid = f"q{q}"
        if draw(st.integers(0, 5)):
            ranked = draw(st.lists(st.sampled_from(range(len(DOCS))), min_size=1, max_size=len(DOCS), unique=True))
            s = sorted((draw(st.integers(0, 3)) / 4 for _ in ranked), reverse=True)
            qids.append(qid)
            codes += ranked
            scores += s
            offsets.append(len(codes))
        if draw(st.integers(0, 5)):
            judged = draw(st.lists(st.sampled_from(DOCS), max_size=6, unique=True))
            qrels[qid] = {d: draw(st.integers(-1, 3)) for d in judged}
    if not qrels:
        qrels["q0"] = {}
    values = np.unique(np.array(scores, dtype=np.float64))
    rankings = ColumnarRankings(qids, offsets, np.array(codes, dtype=np.int64), DOCS,
                                np.searchsorted(values, scores), values)
    return rankings, qrels


def columnar_judgments(qrels: dict) -> ColumnarJudgments:
    ids = list(dict.fromkeys(c for js in qrels.values() for c in js))
    offsets = np.cumsum([0] + [len(js) for js in qrels.values()])
    return ColumnarJudgments(list(qrels), offsets,
                             np.array([ids.index(c) for js in qrels.values() for c in js], dtype=np.int64), ids,
                             [g for js in qrels.values() for g in js.values()])


@given(case=columnar_case(), ks=st.sampled_from([(1,), (1, 4, 8, 10, 20), (2, 3), ()]),
       block=st.sampled_from([1, 3, 1 << 22]))
def test_rr_tie_differences_on_columns_equal_the_per_query_walk(case, ks, block):
    rankings, qrels = case
    expected = measures.rr_tie_differences(dict(rankings.items()), Qrels(qrels), ks)
    keep = measures._TIE_LINES_AT_ONCE
    measures._TIE_LINES_AT_ONCE = block  # candidates a few lines at a time, as a large run is walked
    try:
        for judgments in (qrels, columnar_judgments(qrels)):
            assert measures.rr_tie_differences(rankings, Qrels(judgments), ks) == expected
    finally:
        measures._TIE_LINES_AT_ONCE = keep


def test_rr_tie_differences_by_hand():
    # q1: d9 and d3 tie at 0.5, only d3 is relevant: ours rank 2, ir_measures' order (ids ascending) rank 1, so RR@k
    # differs for every k; q2: both tied chunks are relevant, rank 1 either way; q3: d1 (0.9), then d5 and d4 tied,
    # d4 relevant: ours 3, theirs 2, so RR@k differs only for a k of 2 or more
    values = np.array([0.5, 0.9])
    codes = [9, 3, 0, 2, 1, 5, 4]
    rankings = ColumnarRankings(["q1", "q2", "q3"], [0, 2, 4, 7], codes, DOCS, [0, 0, 0, 0, 1, 0, 0], values)
    qrels = {"q1": {"d3": 1, "d9": 0}, "q2": {"d0": 2, "d2": 1}, "q3": {"d4": 1}}
    for r in (rankings, dict(rankings.items())):
        for judgments in (qrels, columnar_judgments(qrels)):
            assert measures.rr_tie_differences(r, Qrels(judgments), (1, 4)) == ("q1", "q3")
            assert measures.rr_tie_differences(r, Qrels(judgments), (1,)) == ("q1",)
