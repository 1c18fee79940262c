"""The gate's counts at many cuts at once (audit.evaluation.gate_table) against the per-query gate.

The reference is :func:`audit.evaluation.threshold.gate`, applied query by query at each cut: the counts of
the vectorised form must be the same integers on any order — unsorted values (a BM25 or hybrid order read in
cosine distance), ties, repeated values, NaN, empty orders, queries out of domain, every ``keep``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from audit.evaluation.gate_table import counts_at_cuts, gate_table
from audit.evaluation.threshold import gate_counts
from audit.evaluation.threshold import OUTCOMES, QueryDistances, gate, sweep, sweep_cuts


def qd(qid, dists, correct, in_domain=True):
    d = np.array(dists, dtype=float)
    c = np.array(correct, dtype=bool)
    return QueryDistances(qid, qid, "documentation" if in_domain else "out-of-domain", in_domain,
                          np.arange(len(d)), d, c, float(d.min()) if len(d) else math.inf, None)


def reference(queries, cut, keep):
    """The counts by the definition: :func:`gate` on each query (what counts_at computed before)."""
    n = {o: 0 for o in OUTCOMES}
    answerable = 0
    for q in queries:
        g = gate(q, cut, keep)
        n[g.outcome] += 1
        answerable += g.outcome == "abandoned" and g.answerable
    ind = sum(q.in_domain for q in queries)
    return {"answered": n["answered"], "answered without": n["answered without"], "abandoned": n["abandoned"],
            "bluff": n["bluff"], "refused": n["refused"], "abandoned answerable": answerable, "in-domain": ind,
            "out-of-domain": len(queries) - ind}


def test_a_relevant_chunk_after_four_lower_values_is_never_kept():
    # unsorted order: the answer (position 5, 0.35) comes after four chunks at 0.1..0.4. At cut 0.36 the gate keeps
    # positions 0, 1, 2 (0.1, 0.2, 0.3) and the answer (0.35 < 0.36, only three earlier values below the cut):
    # answered. At 0.45 the four earlier values 0.1..0.4 are all kept first: answered without.
    q = qd("x", [0.1, 0.2, 0.9, 0.3, 0.4, 0.35], [False] * 5 + [True])
    t = gate_table([q], 4)
    assert (t.lo.tolist(), t.hi.tolist()) == ([0.35], [0.4])  # kept for cuts in (0.35, 0.4]
    n = counts_at_cuts(t, [0.35, 0.36, 0.4, 0.45, math.inf])
    assert n["answered"].tolist() == [0, 1, 1, 0, 0]
    assert n["answered without"].tolist() == [1, 0, 0, 1, 1]
    for cut in (0.35, 0.36, 0.4, 0.45, math.inf):
        assert gate(q, cut).outcome == ("answered" if 0.35 < cut <= 0.4 else "answered without")


def test_nan_is_never_below_a_cut_and_an_empty_order_keeps_nothing():
    q = qd("n", [math.nan, 0.5], [True, False])  # the relevant chunk has no value: never kept
    e = qd("e", [], [])
    o = qd("o", [math.nan], [False], in_domain=False)
    n = counts_at_cuts(gate_table([q, e, o], 4), [0.4, 0.6, math.inf])
    assert n["answered"].tolist() == [0, 0, 0]
    assert n["answered without"].tolist() == [0, 1, 1]
    assert n["abandoned"].tolist() == [2, 1, 1]
    assert n["abandoned answerable"].tolist() == [1, 0, 0]  # q: the answer is in its top 4, the cut keeps nothing
    assert n["refused"].tolist() == [1, 1, 1]


def test_keep_below_one_is_refused():
    with pytest.raises(ValueError, match="keep=0"):
        gate_table([], 0)


VALUES = st.one_of(st.sampled_from([0.1, 0.2, 0.25, 0.3, 0.5, 0.5, 0.7, 1.0, 2.0, math.nan, math.inf]),
                   st.floats(min_value=-1.0, max_value=2.0, allow_nan=False))


@st.composite
def queries(draw):
    out = []
    for i in range(draw(st.integers(0, 8))):
        d = draw(st.lists(VALUES, max_size=12))
        correct = draw(st.lists(st.booleans(), min_size=len(d), max_size=len(d)))
        out.append(qd(f"q{i}", d, correct, in_domain=draw(st.booleans())))
    return out


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(queries(), st.lists(VALUES, min_size=1, max_size=12), st.integers(1, 6))
def test_counts_equal_the_gate_applied_query_by_query(qs, cuts, keep):
    n = counts_at_cuts(gate_table(qs, keep), cuts)
    for i, cut in enumerate(cuts):
        assert {k: int(v[i]) for k, v in n.items()} == reference(qs, cut, keep), (cut, keep)


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(queries())
def test_the_sweep_is_the_gate_at_every_swept_cut(qs):
    counts = sweep(qs)
    assert [c.threshold for c in counts] == sweep_cuts(qs)
    for c in counts:
        d = c.to_dict()
        assert {k: d[k] for k in reference(qs, c.threshold, 4)} == reference(qs, c.threshold, 4)
        assert all(type(d[k]) is int for k in d if k != "threshold")  # JSON-ready: no numpy integers


def test_gate_counts_are_python_numbers():
    qs = [qd("a", [0.3, 0.4], [False, True]), qd("o", [0.5], [False], in_domain=False)]
    (c,) = gate_counts(gate_table(qs, 4), [0.45])
    assert (c.threshold, c.answered, c.bluff, c.refused) == (0.45, 1, 0, 1)
    assert type(c.answered) is int and type(c.threshold) is float
