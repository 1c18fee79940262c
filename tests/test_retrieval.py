"""Retrievers: BM25 by hand, RRF sums, ties, rerank order, empty inputs."""

from __future__ import annotations

import math

import numpy as np
import pytest

from audit.retrieval import BM25, Ranking, bm25_tokens, dense_ranking, rerank, rrf


def test_bm25_exact_match_first_with_spec_idf():
    # rank-bm25's Okapi idf gives 0 to a term in half the documents; the spec's idf does not
    b = BM25(["alpha report", "beta manual"])
    r = b.rank("alpha report")
    assert r.chunk_ids.tolist() == [0]
    # by hand: N=2, n=1 -> idf = ln(1 + 1.5/1.5) = ln 2; f=1, |d|=avg=2 -> tf part = 2.2/2.2 = 1
    assert r.scores[0] == pytest.approx(2 * math.log(2))


def test_bm25_one_score_by_hand():
    texts = ["the cat sat", "the cat cat ran far away", "a dog"]
    b = BM25(texts)
    # "cat": N=3, n=2 -> idf = ln(1 + 1.5/2.5) = ln 1.6; doc 1: f=2, |d|=6, avg=(3+6+2)/3
    avg = 11 / 3
    idf = math.log(1 + (3 - 2 + 0.5) / (2 + 0.5))
    expect = idf * 2 * 2.2 / (2 + 1.2 * (1 - 0.75 + 0.75 * 6 / avg))
    assert b.scores("cat")[1] == pytest.approx(expect)
    assert b.scores("CAT!")[1] == pytest.approx(expect)  # tokens [a-z0-9]+ lower-cased


def test_bm25_ties_break_by_chunk_id_and_zero_scores_are_not_returned():
    b = BM25(["same words", "other", "same words"])
    r = b.rank("same")
    assert r.chunk_ids.tolist() == [0, 2]


def test_bm25_empty_corpus_and_empty_query():
    assert len(BM25([]).rank("anything")) == 0
    assert len(BM25(["", "  "]).rank("anything")) == 0
    assert len(BM25(["alpha"]).rank("!!!")) == 0
    assert bm25_tokens("Hello, World 42") == ["hello", "world", "42"]


def test_dense_is_cosine_distance_ascending_with_id_ties():
    v = np.array([[1, 0], [0, 1], [1, 0], [-1, 0]], dtype=np.float32)
    r = dense_ranking(v, np.array([1, 0], dtype=np.float32))
    assert r.chunk_ids.tolist() == [0, 2, 1, 3]
    assert r.scores.tolist() == [0.0, 0.0, 1.0, 2.0]
    assert r.score_kind == "cosine distance"
    assert len(dense_ranking(np.zeros((0, 2), np.float32), np.array([1, 0], np.float32))) == 0


def test_cosine_distance_is_half_squared_l2_on_unit_vectors():
    rng = np.random.default_rng(0)
    v = rng.normal(size=(50, 16)).astype(np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    q = v[0]
    r = dense_ranking(v, q)
    l2 = np.linalg.norm(v[r.chunk_ids] - q, axis=1) ** 2 / 2
    assert np.max(np.abs(l2 - r.scores)) < 1e-6


def _rk(ids):
    return Ranking(np.array(ids, dtype=np.int64), np.zeros(len(ids)), "x")


def test_rrf_sums_by_hand():
    fused = rrf([_rk([1, 2, 3]), _rk([3, 1])], k=60)
    # 1: 1/61 + 1/62; 3: 1/63 + 1/61; 2: 1/62
    assert fused.chunk_ids.tolist() == [1, 3, 2]
    assert fused.scores.tolist() == pytest.approx([1 / 61 + 1 / 62, 1 / 63 + 1 / 61, 1 / 62])


def test_rrf_ties_by_chunk_id():
    fused = rrf([_rk([5, 4]), _rk([4, 5])])
    assert fused.chunk_ids.tolist() == [4, 5]


class FakeCross:
    def score(self, query, texts):
        return np.array([float(len(t)) for t in texts])


def test_rerank_reorders_head_only():
    base = _rk([0, 1, 2, 3])
    texts = ["a", "ccc", "bb", "dddd"]
    r = rerank(base, "q", texts, FakeCross(), depth=3)
    assert r.chunk_ids.tolist() == [1, 2, 0, 3]
    assert r.scores[:3].tolist() == [3.0, 2.0, 1.0] and math.isnan(r.scores[3])


def test_first_rank():
    r = _rk([7, 3, 9])
    assert r.first_rank({9, 3}) == 2 and r.first_rank({1}) is None and r.first_rank(set()) is None
