"""``audit.retrieval.fusion.rrf`` on numpy: the same fused ranking, to the bit, as the plain definition."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from audit.retrieval.fusion import rrf
from audit.retrieval.ranking import Ranking, order
from audit.scores import canonical_scores


def _rrf_by_definition(rankings, k=60):
    """The specification's loop: a dict of Python floats, each list's 1/(k + rank) added in turn."""
    acc: dict[int, float] = {}
    for r in rankings:
        for pos, cid in enumerate(r.chunk_ids.tolist(), start=1):
            acc[cid] = acc.get(cid, 0.0) + 1.0 / (k + pos)
    if not acc:
        return np.zeros(0, np.int64), np.zeros(0)
    ids = np.fromiter(acc.keys(), dtype=np.int64, count=len(acc))
    sc = canonical_scores(np.fromiter(acc.values(), dtype=np.float64, count=len(acc)))
    o = order(sc, ids, ascending=False)
    return ids[o], sc[o]


def _ranking(ids):
    return Ranking(np.asarray(ids, dtype=np.int64), np.zeros(len(ids)), "cosine distance")


def test_rrf_by_hand():
    # chunk 7: 1/61 + 1/62; chunk 3: 1/62 + 1/61: a tie, broken by chunk id; chunk 9 only in the first list
    got = rrf([_ranking([7, 3, 9]), _ranking([3, 7])])
    assert got.chunk_ids.tolist() == [3, 7, 9]
    assert got.scores.tolist() == [round(1 / 61 + 1 / 62, 9)] * 2 + [round(1 / 63, 9)]
    assert got.score_kind == "RRF score"
    assert len(rrf([_ranking([]), _ranking([])])) == 0


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(lists=st.lists(st.lists(st.integers(0, 400), max_size=120), max_size=4), k=st.integers(1, 100))
def test_rrf_equals_the_definition_bit_for_bit(lists, k):
    # any lists, repeated ids included (a repeated id counts each time, as in the loop)
    rankings = [_ranking(x) for x in lists]
    ids, sc = _rrf_by_definition(rankings, k)
    got = rrf(rankings, k)
    assert got.chunk_ids.tolist() == ids.tolist()
    assert got.scores.tobytes() == sc.tobytes()
