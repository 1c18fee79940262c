"""A BM25 index restored from its stored postings scores, ranks and knows its vocabulary as the fresh build does.

The warm report restores each strategy's postings from the cache instead of tokenising and indexing every
chunk again (and importing bm25s): nothing a query sees may change, to the last bit.
"""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from audit.index.cache import EmbeddingCache
from audit.retrieval import BM25, BM25S_MIN_DOCS, bm25_index
from audit.retrieval.bm25 import postings_key

pytest.importorskip("bm25s")

WORDS = ["alpha", "beta", "gamma", "delta", "ünïcode", "straße", "数据", "東京", "x1", "42", "lambda", "yield"]
texts_st = st.lists(st.lists(st.sampled_from(WORDS), min_size=0, max_size=12).map(" ".join), min_size=1, max_size=40)
query_st = st.lists(st.sampled_from(WORDS + ["absent"]), min_size=0, max_size=5).map(" ".join)


@settings(max_examples=60, deadline=None)
@given(texts=texts_st, queries=st.lists(query_st, min_size=1, max_size=5),
       rule=st.sampled_from(["unicode", "ascii", "cjk-bigrams"]))
def test_restored_postings_give_the_same_scores_ranks_and_vocabulary(texts, queries, rule):
    fresh = BM25(texts, backend="bm25s", tokens=rule)
    p = fresh.postings()
    if p is None:  # no token at all: nothing to store, and the fresh index scores 0 everywhere
        assert all(not fresh.scores(q).any() for q in queries)
        return
    back = BM25.from_postings(len(texts), p, tokens=rule)
    assert back.vocabulary == fresh.vocabulary
    for q in queries:
        a, b = fresh.scores(q), back.scores(q)
        assert a.dtype == b.dtype == np.float64 and np.array_equal(a, b)
        ra, rb = fresh.rank(q, k=5), back.rank(q, k=5)
        assert ra.chunk_ids.tolist() == rb.chunk_ids.tolist() and np.array_equal(ra.scores, rb.scores)


def _corpus(n: int, extra: str = "") -> list[str]:
    rng = np.random.default_rng(7)
    return [" ".join(rng.choice(WORDS, size=8)) + (extra if i == 3 else "") for i in range(n)]


def test_bm25_index_stores_once_and_restores_without_building(tmp_path):
    texts = _corpus(BM25S_MIN_DOCS + 10)
    cache = EmbeddingCache(tmp_path / "cache.sqlite")
    first = bm25_index(texts, "unicode", cache)
    assert first._impl is not None  # built with bm25s, and stored
    rows = sqlite3.connect(tmp_path / "cache.sqlite").execute("SELECT COUNT(*) FROM postings").fetchone()[0]
    assert rows == 1
    second = bm25_index(texts, "unicode", cache)
    assert second._impl is None and second.backend == "bm25s"  # restored: no bm25s object
    for q in ["alpha beta", "数据 東京", "straße", "absent"]:
        assert np.array_equal(first.scores(q), second.scores(q))
    # another text, another rule: another key, so a fresh build (and a second, third row)
    bm25_index(_corpus(BM25S_MIN_DOCS + 10, " omega"), "unicode", cache)
    bm25_index(texts, "ascii", cache)
    rows = sqlite3.connect(tmp_path / "cache.sqlite").execute("SELECT COUNT(*) FROM postings").fetchone()[0]
    assert rows == 3


def test_the_key_names_every_input_of_the_build():
    texts = _corpus(5)
    k = postings_key(texts)
    assert k is not None and len(k) == 32
    assert postings_key(texts) == k
    assert postings_key(texts, "ascii") != k
    assert postings_key(texts, k1=1.5) != k and postings_key(texts, b=0.5) != k
    assert postings_key(texts[:-1]) != k and postings_key(texts[::-1]) != k
    assert postings_key(["ab", "c"]) != postings_key(["a", "bc"])  # texts hashed one by one, not joined


def test_a_small_corpus_is_not_stored(tmp_path):
    cache = EmbeddingCache(tmp_path / "cache.sqlite")
    bm = bm25_index(_corpus(BM25S_MIN_DOCS - 1), "unicode", cache)
    assert bm.backend == "rank-bm25"
    assert sqlite3.connect(tmp_path / "cache.sqlite").execute("SELECT COUNT(*) FROM postings").fetchone()[0] == 0


def test_an_older_cache_file_gains_the_table_and_keeps_its_vectors(tmp_path):
    path = tmp_path / "cache.sqlite"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE embedding (key BLOB PRIMARY KEY, dims INTEGER, vec BLOB)")
    db.execute("INSERT INTO embedding VALUES (?, ?, ?)", (b"k" * 32, 2, np.array([0.6, 0.8], np.float32).tobytes()))
    db.commit()
    db.close()
    cache = EmbeddingCache(path)
    assert cache.get_many([b"k" * 32])[b"k" * 32].tolist() == pytest.approx([0.6, 0.8])
    texts = _corpus(BM25S_MIN_DOCS)
    bm25_index(texts, "unicode", cache)
    assert cache.get_postings(postings_key(texts)) is not None
