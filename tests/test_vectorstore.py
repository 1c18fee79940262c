"""audit.stores.scan, audit.stores.runsets and audit.stores.base: the parts every engine shares, without any
engine, and the one distance rule (issue 21's rule for stores: the engine chooses the rows, the rule scores and
orders them)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from audit.scores import cosine_distances
from audit.stores.base import StoreError, check_search, rescore
from audit.stores.scan import exact_topk, search_result, to_cosine


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
    ids, d, v = exact_topk([(["a", "b", "c", "d"], vecs)], np.array([[1, 0]], np.float32), 3)
    assert ids == (("a", "d", "b"),)                       # cos 1, 0.6, 0
    np.testing.assert_allclose(d[0], (0.0, 0.4, 1.0), atol=1e-7)
    np.testing.assert_array_equal(np.stack(v[0]), vecs[[0, 3, 1]])  # each row's own vector, for the rule
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
    # the query (1, 0); row a = (0, 1): unit, ‖q − a‖² = 2 → the rule's 1 − q·a = 1; row b = (0, 2): ‖b‖ = 2
    q = np.array([[1.0, 0.0]], np.float32)
    vec = [[np.array([0.0, 1.0], np.float32), np.array([0.0, 2.0], np.float32)]]
    r = search_result("exact", 2, "l2", "l2sq", None, [["a", "b"]], [[2.0, 5.0]], vec, q, [["ta", "tb"]], [0.5], {},
                      [])
    assert r.distances == ((math.sqrt(2.0), math.sqrt(5.0)),)  # pgvector's <-> is ‖a − b‖, not its square
    assert r.cosine[0][0] == 1.0 and math.isnan(r.cosine[0][1])  # b is not unit: no cosine (the engine's order)
    assert "1 returned rows are not unit length" in r.note and "1 queries returned fewer than 2" not in r.note


def test_rescore_by_hand():
    q = np.array([1.0, 0.0], np.float32)
    a, b, c = (np.array(x, np.float32) for x in ([0.6, 0.8], [0.8, 0.6], [0.0, 1.0]))
    # the engine says b, a, c with its own (SIMD) distances 0.2000001, 0.4, 1.0; the rule: 1 − q·v = 0.2, 0.4, 1
    order, cos = rescore(q, ["b", "a", "c"], [0.2000001, 0.4, 1.0], [b, a, c])
    assert cos == [float(cosine_distances(q, b[None])[0]), float(cosine_distances(q, a[None])[0]), 1.0]
    assert cos[0] == 0.199999988 and order == [0, 1, 2]  # float32(0.8) = 0.800000011920929: 1 − that, 9 decimals
    # two rows at the same canonical distance: the id decides, whatever the engine's order or its last bits
    order, cos = rescore(q, ["z", "y"], [0.4000001, 0.3999999], [a, a.copy()])
    assert cos[0] == cos[1] and order == [1, 0]
    # a row without its vector keeps the engine's value, rounded to 9 decimals
    order, cos = rescore(q, ["x"], [0.12345678912], [None])
    assert cos == [0.123456789]
    # a non-unit query: nothing is re-scored (the rule needs unit vectors)
    _, cos = rescore(2 * q, ["a"], [0.3], [a])
    assert cos == [0.3]
    # NaN (an L2 store's non-unit row): the engine's order is kept
    order, _ = rescore(q, ["b", "a"], [math.nan, 0.1], [None, None])
    assert order == [0, 1]


@given(st.integers(1, 30), st.integers(0, 10_000))
def test_rescore_does_not_depend_on_the_engine_order_or_its_last_bits(n, seed):
    rng = np.random.default_rng(seed)
    v = rng.standard_normal((n, 6)).astype(np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    v[rng.random(n) < 0.3] = v[0]  # exact ties
    q = v[rng.integers(n)] + 0.01 * rng.standard_normal(6).astype(np.float32)
    q = (q / np.linalg.norm(q)).astype(np.float32)
    ids = [f"r{i:02d}" for i in range(n)]
    engine = [float(x) + 1e-7 * rng.standard_normal() for x in 1 - v.astype(np.float64) @ q]  # kernel noise
    perm = rng.permutation(n)
    o1, c1 = rescore(q, ids, engine, list(v))
    o2, c2 = rescore(q, [ids[i] for i in perm], [engine[i] for i in perm], [v[i] for i in perm])
    assert [ids[i] for i in o1] == [ids[perm[i]] for i in o2]
    assert sorted(c1) == sorted(c2)


def test_check_search():
    assert check_search([[1.0, 0.0]], 3, "exact").dtype == np.float32
    for bad, msg in (((np.zeros((0, 2)), 3, "exact"), "shape"), (([[1.0]], 0, "exact"), "positive integer"),
                     (([[np.nan]], 1, "exact"), "NaN"), (([[1.0]], 1, "sideways"), "mode")):
        with pytest.raises(StoreError, match=msg):
            check_search(*bad)
