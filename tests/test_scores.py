"""The same figures on every machine (issue 21): every score goes through :mod:`audit.scores`.

No second machine is needed: the one function where a kernel decides a summation order
(``audit.scores._dot_products``) is replaced by the alternatives real CPUs take — a matrix-vector
product a row instead of one matrix product, one or two BLAS threads, the terms summed in another
order, the chunk rows permuted, every sum moved by ±2 ulp — and the report JSON must not change.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from threadpoolctl import threadpool_limits

from audit import scores
from audit.scores import canonical_scores, cosine_distances
from test_golden import golden_report


def _exact(q: np.ndarray, v: np.ndarray) -> float:
    """The rule written out: 1 − (exactly rounded sum of the exact float64 products), 9 decimals, [0, 2]."""
    d = 1.0 - math.fsum((q.astype(np.float64) * v.astype(np.float64)).tolist())
    return min(2.0, max(0.0, float(np.round(d, 9))))


def _unit(rng, n: int, dims: int) -> np.ndarray:
    v = rng.standard_normal((n, dims)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def test_cosine_distances_are_the_exactly_rounded_rule():
    rng = np.random.default_rng(7)
    v = _unit(rng, 300, 384)
    q = _unit(rng, 6, 384)
    q[0] = v[5]  # an identical row: 1 − ‖v‖² of a float32 unit vector, exactly (a few 1e-9, never < 0)
    q[1] = -v[9]  # an opposite row: 2 (clipped)
    d = cosine_distances(q, v)
    assert d.shape == (6, 300) and d.dtype == np.float64
    assert 0.0 <= d[0, 5] < 1e-7 and d[1, 9] == 2.0
    want = np.array([[_exact(q[i], v[j]) for j in range(300)] for i in range(6)])
    assert np.array_equal(d, want)
    # one query vector gives its row, and a row alone equals the row of the batch
    assert np.array_equal(cosine_distances(q[3], v), d[3])
    assert np.array_equal(cosine_distances(q[3], v[:7], block_rows=2), d[3, :7])


def test_a_sum_next_to_a_rounding_boundary_is_summed_exactly():
    # Two terms whose exact sum is 0.1234567885 (a half in the 10th decimal, up to float error): BLAS and
    # fsum may disagree in the last bit there, and the rounded value must be fsum's.
    q = np.array([1.0, 1.0], dtype=np.float32)
    a = np.float32(0.5)
    b = np.float32(1 - 0.1234567885 - 0.5)
    v = np.array([[a, b]], dtype=np.float32)
    got = cosine_distances(q, v)[0]
    assert got == _exact(q, v[0])


@settings(max_examples=200, deadline=None)
@given(st.integers(min_value=1, max_value=64), st.integers(min_value=0, max_value=2**32 - 1))
def test_any_vectors_give_the_exact_rule(dims, seed):
    rng = np.random.default_rng(seed)
    v = _unit(rng, 5, dims)
    q = _unit(rng, 2, dims)
    d = cosine_distances(q, v)
    assert all(d[i, j] == _exact(q[i], v[j]) for i in range(2) for j in range(5))


def test_run_file_scores_compare_at_float32_precision():
    # trec_eval keeps a run's scores as 32-bit floats: 0.1 and 0.1 + 1e-9 are one float32, a tie
    c = canonical_scores([0.1, 0.1 + 1e-9, 0.1 + 1e-7, 0.82, -3.25, math.inf], "run file")
    assert c[0] == c[1] == 0.1 and c[2] > c[1]
    assert c[3] == 0.82 and c[4] == -3.25 and c[5] == math.inf  # written back as their shortest decimal
    with pytest.raises(ValueError, match="origin 'disk' is unknown"):
        canonical_scores([1.0], "disk")


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(allow_nan=False, width=64, min_value=-1e30, max_value=1e30), min_size=1, max_size=30))
def test_run_file_rule_keeps_float32_order_and_ties(values):
    c = canonical_scores(values, "run file")
    f = np.asarray(values).astype(np.float32)
    # same order, same ties as the float32 values, and canonical twice is canonical once
    for i in range(len(values)):
        for j in range(len(values)):
            assert (c[i] < c[j]) == (f[i] < f[j]) and (c[i] == c[j]) == (f[i] == f[j])
    assert np.array_equal(canonical_scores(c, "run file"), c)
    assert np.array_equal(canonical_scores(canonical_scores(values), "computed"), canonical_scores(values))


# --------------------------------------------------------------------------- machine independence


def _per_row(q64, v64):
    return np.stack([v64 @ q for q in q64])  # one matrix-vector product a query (GEMV)


def _threads(n):
    def product(q64, v64):
        with threadpool_limits(n, user_api="blas"):
            return q64 @ v64.T
    return product


def _permuted_terms(q64, v64):
    perm = np.random.default_rng(3).permutation(q64.shape[1])
    return np.ascontiguousarray(q64[:, perm]) @ np.ascontiguousarray(v64[:, perm]).T


def _permuted_rows(q64, v64):
    perm = np.random.default_rng(5).permutation(v64.shape[0])
    out = q64 @ v64[perm].T
    back = np.empty_like(out)
    back[:, perm] = out
    return back


def _pairwise(q64, v64):
    return np.einsum("qd,rd->qr", q64, v64, optimize=False)  # numpy's own loop, not BLAS


def _moved_2ulp(q64, v64):
    s = q64 @ v64.T
    sign = np.random.default_rng(11).choice([-1.0, 1.0], size=s.shape)
    towards = np.where(sign > 0, np.inf, -np.inf)
    return np.nextafter(np.nextafter(s, towards), towards)


ALTERNATIVES = {"per-row": _per_row, "1 thread": _threads(1), "2 threads": _threads(2),
                "permuted terms": _permuted_terms, "permuted rows": _permuted_rows, "numpy loop": _pairwise,
                "±2 ulp": _moved_2ulp}


@pytest.mark.slow
def test_the_report_is_the_same_whatever_the_kernel_sums(tmp_path, monkeypatch):
    (tmp_path / "base").mkdir()
    base = golden_report(tmp_path / "base", monkeypatch)
    base_json = json.dumps(base, sort_keys=True)
    # the sweep holds the cuts where near-equal distances sit: the case issue 21 found
    assert len(base["threshold"]["E/dense"]["sweep"]) > 100
    for name, product in ALTERNATIVES.items():
        monkeypatch.setattr(scores, "_dot_products", product)
        (tmp_path / name).mkdir()
        got = json.dumps(golden_report(tmp_path / name, monkeypatch),
                         sort_keys=True)
        assert got == base_json, f"the report moved when the kernel summed as {name!r}"
        monkeypatch.undo()


def test_the_moved_kernels_really_move_the_sums():
    # the alternatives are not the same arithmetic in disguise: on float32 unit vectors at least one
    # of them changes a raw sum's last bits (which the rule then absorbs)
    rng = np.random.default_rng(1)
    v = _unit(rng, 400, 384).astype(np.float64)
    q = _unit(rng, 8, 384).astype(np.float64)
    base = q @ v.T
    moved = [name for name, f in ALTERNATIVES.items() if not np.array_equal(f(q, v), base)]
    assert "±2 ulp" in moved and "permuted terms" in moved


def test_engine_scores_become_cosine_distance_by_their_formulas():
    from audit.scores import ENGINE_SCORE_KINDS, engine_cosine_distances

    # unit vectors at cos = 0.6 (d = 0.4), cos = 1 (d = 0) and cos = −1 (d = 2), computed by hand per engine:
    cos = np.array([0.6, 1.0, -1.0])
    theta = np.arccos(cos)  # 0.927295218…, 0, π
    given = {
        "es-cosine": (1 + cos) / 2,                      # Elasticsearch: 0.8, 1, 0
        "l2sq": 2 - 2 * cos,                             # Pinecone euclidean ‖a − b‖²: 0.8, 0, 4
        "closeness-angular": 1 / (1 + theta),            # Vespa angular: 1 / (1 + θ)
        "closeness-prenormalized": 1 / (1 + (1 - cos)),  # Vespa prenormalized-angular: 1/1.4, 1, 1/3
        "closeness-euclidean": 1 / (1 + np.sqrt(2 - 2 * cos)),  # Vespa euclidean: 1 / (1 + ‖a − b‖)
    }
    assert set(given) == set(ENGINE_SCORE_KINDS)
    for kind, s in given.items():
        got = engine_cosine_distances(s, kind)
        # the scores are read at float32 precision first (as a run file's), so ~1e-7 from the exact 0.4, 0, 2
        assert np.allclose(got, [0.4, 0.0, 2.0], atol=1e-6), kind
        assert ((got >= 0) & (got <= 2)).all()
    assert engine_cosine_distances([0.8], "es-cosine")[0] == pytest.approx(0.4, abs=1e-7)
    assert math.isnan(engine_cosine_distances([0.0], "closeness-angular")[0])  # no distance has closeness 0
    with pytest.raises(ValueError, match="engine score kind 'bm25' is unknown; choose one of es-cosine"):
        engine_cosine_distances([1.0], "bm25")


@given(st.lists(st.floats(0.0, 1.0, width=32), min_size=2, max_size=20))
@settings(max_examples=50)
def test_engine_conversions_keep_the_engines_order(values):
    from audit.scores import engine_cosine_distances

    # every formula is monotone: higher Elasticsearch score / closeness → lower distance, and a higher squared
    # Euclidean distance → a higher cosine distance
    v = np.array(values)
    o = np.argsort(v, kind="stable")
    for kind in ("es-cosine", "closeness-prenormalized", "closeness-euclidean"):
        d = engine_cosine_distances(v, kind)[o]
        d = d[~np.isnan(d)]
        assert (np.diff(d) <= 0).all(), kind
    assert (np.diff(engine_cosine_distances(v * 4, "l2sq")[o]) >= 0).all()
