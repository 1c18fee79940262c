"""audit.sources.vectorstore: the parts every live-store engine shares, without any engine."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from audit.sources.pgvector import StoreError
from audit.sources.vectorstore import check_search, exact_topk, search_result, to_cosine


def test_to_cosine_by_hand():
    # unit a, b at 60°: cos 0.5 → cosine distance 0.5; ‖a − b‖² = 2 − 2·0.5 = 1; a·b = 0.5
    assert to_cosine(0.5, "cosine") == 0.5
    assert to_cosine(0.5, "cosine_similarity") == 0.5
    assert to_cosine(1.0, "l2sq") == 0.5
    assert to_cosine(0.5, "ip_distance") == 0.5
    assert to_cosine(0.5, "ip") == 0.5
    assert to_cosine(-1.2e-7, "cosine") == 0.0 and to_cosine(4.000001, "l2sq") == 2.0  # float error clipped
    with pytest.raises(StoreError, match="unknown distance kind"):
        to_cosine(0.1, "hamming")


def test_exact_topk_by_hand():
    vecs = np.array([[1, 0], [0, 1], [-1, 0], [0.6, 0.8]], np.float32)
    ids, d, n = exact_topk([(["a", "b", "c", "d"], vecs)], np.array([[1, 0]], np.float32), 3)
    assert ids == (("a", "d", "b"),)                       # cos 1, 0.6, 0
    np.testing.assert_allclose(d[0], (0.0, 0.4, 1.0), atol=1e-7)
    # a tie (b and e at the same distance) goes to the smaller id, whichever batch brought it
    ids, _, _ = exact_topk([(["e"], np.array([[0, -1]], np.float32)), (["b"], vecs[1:2])],
                           np.array([[1, 0]], np.float32), 2)
    assert ids == (("b", "e"),)
    ids, d, _ = exact_topk([(["x", "y"], np.array([[2, 0], [0, 3]], np.float32))], np.array([[1, 0]], np.float32), 2,
                           "l2sq")
    assert ids == (("x", "y"),) and d[0] == pytest.approx((1.0, 10.0))  # ‖(2,0)−(1,0)‖² = 1, ‖(0,3)−(1,0)‖² = 10
    ids, _, _ = exact_topk([(["nan", "ok"], np.array([[np.nan, 0], [1, 0]], np.float32))],
                           np.array([[1, 0]], np.float32), 2)
    assert ids == (("ok",),)  # a non-finite vector is never ranked


@given(st.integers(1, 40), st.integers(1, 12), st.integers(1, 8), st.integers(0, 10_000))
def test_exact_topk_does_not_depend_on_the_batches(n, batch, k, seed):
    rng = np.random.default_rng(seed)
    v = rng.standard_normal((n, 5)).astype(np.float32)
    v[rng.random(n) < 0.2] = v[0]  # exact ties
    q = rng.standard_normal((3, 5)).astype(np.float32)
    ids = [f"r{i:03d}" for i in range(n)]
    whole = exact_topk([(ids, v)], q, k)
    parts = exact_topk([(ids[i:i + batch], v[i:i + batch]) for i in range(0, n, batch)], q, k)
    assert whole[0] == parts[0]
    np.testing.assert_array_equal(np.array(whole[1], dtype=object), np.array(parts[1], dtype=object))


def test_search_result_reads_l2_as_cosine_only_for_unit_vectors():
    r = search_result("exact", 2, "l2", "l2sq", None, [["a", "b"]], [[1.0, 4.0]], [[1.0, 2.0]], [1.0],
                      [["ta", "tb"]], [0.5], {}, [])
    assert r.distances == ((1.0, 2.0),)                    # pgvector's <-> is ‖a − b‖, not its square
    assert r.cosine[0][0] == 0.5 and math.isnan(r.cosine[0][1])
    assert "1 returned rows are not unit length" in r.note and "1 queries returned fewer than 2" not in r.note


def test_check_search():
    assert check_search([[1.0, 0.0]], 3, "exact").dtype == np.float32
    for bad, msg in (((np.zeros((0, 2)), 3, "exact"), "shape"), (([[1.0]], 0, "exact"), "positive integer"),
                     (([[np.nan]], 1, "exact"), "NaN"), (([[1.0]], 1, "sideways"), "mode")):
        with pytest.raises(StoreError, match=msg):
            check_search(*bad)
