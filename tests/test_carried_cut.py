"""The cut carried across a model change and the trade-off comparison (audit/evaluation/carried.py), each checked
against a brute-force computation written here from the definitions in docs/definitions.md (*The cut carried
across*): the gate applied query by query with plain Python, every grid cut tried."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from audit.evaluation.carried import (
    SAME_ANSWERED,
    SAME_BLUFFS,
    CurvePoint,
    carried_cut,
    compare_tradeoffs,
    outcome_at,
    tradeoff_curve,
)
from audit.evaluation.threshold import KEEP, QueryDistances
from audit.scores import COSINE_DISTANCE

STEP = COSINE_DISTANCE.grid_step


def _q(qid, in_domain, dists, correct):
    d = np.asarray(dists, dtype=np.float64)
    c = np.asarray(correct, dtype=bool) if in_domain else np.zeros(len(d), dtype=bool)
    return QueryDistances(qid, qid, "documentation" if in_domain else "out-of-domain", in_domain,
                          tuple(range(len(d))), d, c, float(d.min()) if len(d) else float("inf"),
                          (float(d[c].min()) if c.any() else None) if in_domain else None)


def _brute_outcome(queries, cut):
    """The gate by hand: keep the first KEEP entries strictly below the cut."""
    bluffs = answered = abandoned = 0
    for q in queries:
        kept = [i for i, x in enumerate(q.distances.tolist()) if x < cut][:KEEP]
        if not q.in_domain:
            bluffs += bool(kept)
        elif not kept:
            abandoned += 1
        elif any(bool(q.correct[i]) for i in kept):
            answered += 1
    return bluffs, answered, abandoned


def _brute_grid():
    """The cosine-distance grid written independently: n × step for n = 0 … 2 / step, 6 decimals."""
    return [round(n * STEP, 6) for n in range(int(round(2.0 / STEP)) + 1)]


def _brute_carried(before, after, cut):
    b = _brute_outcome(before, cut)
    rows = [(c, *_brute_outcome(after, c)) for c in _brute_grid()]
    same_bluffs = [r for r in rows if r[1] <= b[0]]
    best = max(r[2] for r in same_bluffs)
    carried = next(r for r in same_bluffs if r[2] == best)  # the strictest (lowest) cut answering the most
    reach = [r for r in rows if r[2] >= b[1]]
    other = None
    if reach:
        fewest = min(r[1] for r in reach)
        other = next(r for r in reach if r[1] == fewest)
    return b, carried, other


def _brute_envelope(queries, n_ood):
    rows = [_brute_outcome(queries, c) for c in _brute_grid()]
    return [min(a for bl, _, a in rows if bl <= budget) for budget in range(n_ood + 1)]


distance = st.integers(0, 8 * 20).map(lambda i: round(i * STEP / 8, 9))  # grid values and between, ties included


@st.composite
def side(draw, n_in, n_ood):
    out = []
    for i in range(n_in):
        d = draw(st.lists(distance, min_size=1, max_size=6))
        c = draw(st.lists(st.booleans(), min_size=len(d), max_size=len(d)))
        out.append(_q(f"q{i}", True, d, c))
    for i in range(n_ood):
        out.append(_q(f"o{i}", False, draw(st.lists(distance, min_size=1, max_size=6)), []))
    return out


@st.composite
def two_sides(draw):
    n_in, n_ood = draw(st.integers(1, 8)), draw(st.integers(1, 6))
    return draw(side(n_in, n_ood)), draw(side(n_in, n_ood)), n_in, n_ood


@given(two_sides(), distance)
def test_the_carried_cut_equals_a_brute_force_search_over_the_grid(sides, cut):
    before, after, _, _ = sides
    b, want, other = _brute_carried(before, after, cut)
    at = outcome_at(before, cut, COSINE_DISTANCE)
    assert (at.bluffs, at.answered, at.abandoned) == b
    curve = tradeoff_curve(after, COSINE_DISTANCE)
    got = carried_cut(at, curve, SAME_BLUFFS)
    assert (got.value, got.after.bluffs, got.after.answered, got.after.abandoned) == want
    assert got.after.bluffs <= at.bluffs  # keeps the old cut's bluff count
    alt = carried_cut(at, curve, SAME_ANSWERED)
    if other is None:
        assert alt.value is None and alt.after is None and "answers" in alt.why
    else:
        assert (alt.value, alt.after.bluffs, alt.after.answered, alt.after.abandoned) == other


@given(two_sides())
def test_the_tradeoff_comparison_equals_the_brute_force_envelopes(sides):
    before, after, n_in, n_ood = sides
    t = compare_tradeoffs(tradeoff_curve(before, COSINE_DISTANCE), tradeoff_curve(after, COSINE_DISTANCE), n_ood, n_in)
    eb, ea = _brute_envelope(before, n_ood), _brute_envelope(after, n_ood)
    assert [(x, y) for _, x, y in t.envelope] == list(zip(eb, ea))
    fewer = [b for b in range(n_ood + 1) if ea[b] < eb[b]]
    more = [b for b in range(n_ood + 1) if ea[b] > eb[b]]
    assert [b for lo, hi in t.fewer for b in range(lo, hi + 1)] == fewer
    assert [b for lo, hi in t.more for b in range(lo, hi + 1)] == more
    assert t.dominates == (bool(fewer) and not more)
    assert t.dominated == (bool(more) and not fewer)


def test_a_hand_worked_carry():
    # old model: the answer of q0 at 0.3, q1 at 0.5; one out-of-domain question at 0.4. At the old cut 0.45: q0
    # answered, q1 abandoned, the out-of-domain question bluffs (1 bluff, 1 answered, 1 abandoned).
    before = [_q("q0", True, [0.3], [True]), _q("q1", True, [0.5], [True]), _q("o0", False, [0.4], [])]
    # new model: everything nearer: answers at 0.2 and 0.25, the out-of-domain question at 0.3. With at most 1 bluff
    # every cut is allowed: the most answered (2) first at 0.275 (0.25 < 0.275). Same answered (1): 0.225 answers
    # q0 (0.2 < 0.225) and bluffs 0 times.
    after = [_q("q0", True, [0.2], [True]), _q("q1", True, [0.25], [True]), _q("o0", False, [0.3], [])]
    at = outcome_at(before, 0.45, COSINE_DISTANCE)
    assert at == CurvePoint(0.45, 1, 1, 1)
    curve = tradeoff_curve(after, COSINE_DISTANCE)
    c = carried_cut(at, curve)
    assert (c.value, c.after.bluffs, c.after.answered) == (0.275, 0, 2)
    s = carried_cut(at, curve, SAME_ANSWERED)
    assert (s.value, s.after.bluffs, s.after.answered) == (0.225, 0, 1)
    t = compare_tradeoffs(tradeoff_curve(before, COSINE_DISTANCE), curve, 1, 2)
    # budget 0: the old model abandons 1 (q1 at 0.5 is beyond the 0.4 bluff), the new one 0 (both answers before
    # 0.3); budget 1: both abandon 0. So the new model abandons fewer at 0 bluffs, never more: it dominates.
    assert t.envelope == ((0, 1, 0), (1, 0, 0))
    assert t.fewer == ((0, 0),) and t.more == () and t.dominates and not t.dominated
    assert t.sentence.startswith("the new model dominates")
