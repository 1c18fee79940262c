"""BM25 on bm25s gives the same scores and rankings as on rank-bm25 (the reference)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from audit.retrieval import BM25, BM25S_MIN_DOCS

pytest.importorskip("bm25s")

TEXTS = [
    "The cat sat on the mat.",
    "A cat, a CAT and another cat ran far away from the dog",
    "dogs and cats: 42 ways",
    "",
    "the the the the",
    "Exception handling: try, except, finally; the finally clause always runs.",
    "same words",
    "same words",
    "!!!",
]
QUERIES = ["cat", "the cat", "cat cat", "finally clause", "same", "42", "unknown words", "", "THE Dog!"]


@pytest.mark.parametrize("query", QUERIES)
def test_bm25s_scores_equal_rank_bm25(query):
    ref = BM25(TEXTS, backend="rank-bm25")
    fast = BM25(TEXTS, backend="bm25s")
    assert fast.backend == "bm25s" and ref.backend == "rank-bm25"
    np.testing.assert_allclose(fast.scores(query), ref.scores(query), rtol=1e-12, atol=1e-12)
    a, b = ref.rank(query), fast.rank(query)
    assert a.chunk_ids.tolist() == b.chunk_ids.tolist()
    np.testing.assert_allclose(a.scores, b.scores, rtol=1e-12)


def test_bm25s_matches_the_hand_computation():
    # same case as test_retrieval.test_bm25_one_score_by_hand: "cat" in doc 1, f=2, |d|=6, avg=11/3
    b = BM25(["the cat sat", "the cat cat ran far away", "a dog"], backend="bm25s")
    idf = math.log(1 + (3 - 2 + 0.5) / (2 + 0.5))
    expect = idf * 2 * 2.2 / (2 + 1.2 * (1 - 0.75 + 0.75 * 6 / (11 / 3)))
    assert b.scores("cat")[1] == pytest.approx(expect, rel=1e-12)
    # a repeated query term counts twice, as in the specification's loop over query tokens
    assert b.scores("cat cat")[1] == pytest.approx(2 * expect, rel=1e-12)


def test_bm25s_random_corpus_same_scores():
    rng = np.random.default_rng(7)
    vocab = [f"w{i}" for i in range(60)]
    texts = [" ".join(rng.choice(vocab, size=rng.integers(0, 30), p=None)) for _ in range(300)]
    ref, fast = BM25(texts, backend="rank-bm25"), BM25(texts, backend="bm25s")
    for _ in range(20):
        q = " ".join(rng.choice(vocab, size=rng.integers(1, 6)))
        np.testing.assert_allclose(fast.scores(q), ref.scores(q), rtol=1e-12, atol=1e-12)
        assert fast.rank(q).chunk_ids.tolist() == ref.rank(q).chunk_ids.tolist()


def test_auto_backend_switches_at_the_measured_size():
    assert BM25(["a b"] * 3).backend == "rank-bm25"
    assert BM25(["a b"] * BM25S_MIN_DOCS).backend == "bm25s"


def test_empty_inputs_on_bm25s():
    assert len(BM25([], backend="bm25s").rank("anything")) == 0
    assert len(BM25(["", "  "], backend="bm25s").rank("anything")) == 0
    assert len(BM25(["alpha"], backend="bm25s").rank("!!!")) == 0


def test_unknown_backend_says_which():
    with pytest.raises(ValueError, match="rank-bm25, bm25s"):
        BM25(["a"], backend="lucene")


@pytest.mark.parametrize("backend", ["rank-bm25", "bm25s"])
def test_rank_top_k_is_the_head_of_the_full_ranking(backend):
    # many exact ties ("same words" twice, "the" docs): the cut must keep the lower chunk ids
    texts = ["same words"] * 5 + ["other same"] * 3 + ["nothing"]
    b = BM25(texts, backend=backend)
    full = b.rank("same")
    for k in range(0, len(full) + 2):
        head = b.rank("same", k=k)
        assert head.chunk_ids.tolist() == full.chunk_ids[:k].tolist()
        assert head.scores.tolist() == full.scores[:k].tolist()
