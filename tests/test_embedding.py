"""Embedding: packaged model, unit vectors, token counts, window, cheap import, no silent download."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from conftest import ROOT

from audit.chunking import PRESETS, chunk_corpus
from audit.index import EmbeddingCache, embed
from audit.models import (
    HashingEncoder,
    ModelUnavailable,
    load_cross_encoder,
    load_encoder,
    resolve_model_path,
    token_stats,
)


@pytest.fixture(scope="module")
def minilm():
    return load_encoder(None)


def test_import_audit_does_not_import_torch():
    # every module a report touches on a warm run: the models load only when something must be encoded
    code = ("import sys, audit, audit.sources, audit.report, audit.cli, audit.index.health, audit.models; "
            "print('torch' in sys.modules, 'sentence_transformers' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


@pytest.mark.model
def test_default_model_is_the_packaged_minilm(minilm):
    assert minilm.name == "all-MiniLM-L6-v2"
    assert minilm.dims == 384 and minilm.window == 256
    assert minilm.digest.startswith("53aa5117") and minilm.digest.endswith("d9db")


@pytest.mark.model
def test_real_vectors_are_unit_and_cosine_is_half_squared_l2(minilm):
    texts = ["How do I raise an exception?", "The raise statement re-raises the last exception.", "paella"]
    v = minilm.encode(texts, batch_size=2)
    assert v.dtype == np.float32 and v.shape == (3, 384)
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    cos = v @ v.T
    l2 = ((v[:, None, :] - v[None, :, :]) ** 2).sum(-1)
    assert np.max(np.abs(l2 / 2 - (1 - cos))) < 1e-5
    # the related pair is nearer than the unrelated one
    assert 1 - cos[0, 1] < 1 - cos[0, 2]


@pytest.mark.model
def test_batching_and_order_do_not_change_vectors(minilm):
    texts = ["short", "a much longer sentence about assignment statements", "medium text here"]
    a = minilm.encode(texts, batch_size=1)
    b = minilm.encode(texts[::-1], batch_size=3)[::-1]
    assert np.allclose(a, b, atol=1e-5)


@pytest.mark.model
def test_token_counts_and_window_cut(minilm):
    assert minilm.token_counts(["hello world", ""]) == [2, 0]
    long = "word " * 400
    (cut,) = minilm.window_cut([long])
    # 254 word-pieces fit beside [CLS] and [SEP]: the cut is after the 254th "word"
    assert cut == len("word " * 254) - 1
    assert minilm.window_cut(["fits"]) == [4]


@pytest.mark.model
def test_token_stats_header_share_and_over_window(builtin_corpus, minilm):
    cs = chunk_corpus(builtin_corpus, PRESETS["E"])
    ts = token_stats(minilm, cs.chunks)
    assert 0.05 < ts.header_share < 0.4
    assert ts.over_window.sum() > 0
    i = int(np.flatnonzero(ts.over_window)[0])
    assert ts.cut[i] < len(cs[i].text)
    assert (ts.header_tokens > 0).all()
    c = chunk_corpus(builtin_corpus, PRESETS["C"])
    assert token_stats(minilm, c.chunks).header_share == 0.0


def test_missing_named_model_says_which_and_how(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # online, the name would be fetched (tests/test_model_fetch.py)
    with pytest.raises(ModelUnavailable, match="no-such-org/no-such-model.*HF_HUB_OFFLINE=1"):
        resolve_model_path("no-such-org/no-such-model")
    with pytest.raises(ModelUnavailable, match="does not exist"):
        resolve_model_path(str(tmp_path / "missing-dir"))


def test_default_cross_encoder_unavailable_here_names_it(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    with pytest.raises(ModelUnavailable, match="cross-encoder/ms-marco-MiniLM-L-6-v2"):
        load_cross_encoder()
    assert load_cross_encoder("none") is None


@pytest.mark.model
def test_cross_encoder_built_from_packaged_weights_scores_pairs():
    ce = load_cross_encoder(str(resolve_model_path(None)), num_labels=1)
    s = ce.score("what is a lambda", ["lambda expressions create anonymous functions", "paella rice"])
    assert s.shape == (2,) and np.isfinite(s).all()


def test_embedding_cache_warm_run_encodes_nothing(tmp_path):
    enc = HashingEncoder(dims=32)
    cache = EmbeddingCache(tmp_path / "c.sqlite")
    v1, n1 = embed(enc, ["a b", "c d", "a b"], cache)
    v2, n2 = embed(enc, ["a b", "c d"], EmbeddingCache(tmp_path / "c.sqlite"))
    assert n1 == 3 and n2 == 0
    assert np.array_equal(v1[:2], v2)
    # a different window is a different key
    enc2 = HashingEncoder(dims=32, window=8)
    assert embed(enc2, ["a b"], cache)[1] == 1


def test_hashing_encoder_window():
    enc = HashingEncoder(dims=16, window=5)
    assert enc.window_cut(["one two three four five"]) == [len("one two three")]
    v = enc.encode(["", "x"])
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0)


# -- the packed default path (no padding, one torch thread per worker) against sentence-transformers --


@pytest.fixture(scope="module")
def minilm_reference(minilm):
    """The previous default: sentence-transformers on padded length buckets, same weights."""
    ref = load_encoder(None, packing=False)
    ref._model = minilm.model
    return ref


@pytest.fixture(scope="module")
def e_sample(builtin_corpus):
    """Every 10th chunk of strategy E: 126 texts, several over the 256-token window."""
    cs = chunk_corpus(builtin_corpus, PRESETS["E"])
    return list(cs.texts)[::10]


@pytest.mark.model
def test_packed_vectors_equal_sentence_transformers(minilm, minilm_reference, e_sample):
    from audit.models.packed import packable

    assert packable(minilm.model)  # the default model takes the packed path, not the fallback
    # texts over the window must be in the sample, or the truncation of the packed path is untested
    assert max(minilm.token_counts(e_sample)) > minilm.window
    a = minilm.encode(e_sample)
    b = minilm_reference.encode(e_sample)
    # the same float32 operations in another grouping: equal to rounding (the bound: 1e-5, cos > 1 - 1e-6)
    assert np.abs(a - b).max() < 1e-5
    assert (a * b).sum(1).min() > 1 - 1e-6
    # the digest is the weights' alone: the cache and the stamps of indexes built before stay valid
    assert minilm.digest == minilm_reference.digest == minilm.weights_digest


@pytest.mark.model
def test_packed_same_top10_as_sentence_transformers(minilm, minilm_reference, e_sample, builtin_gt):
    from audit.retrieval import dense_ranking

    questions = [q.text for q in builtin_gt.queries[:6]]
    va, vb = minilm.encode(e_sample), minilm_reference.encode(e_sample)
    qa, qb = minilm.encode(questions), minilm_reference.encode(questions)
    for i in range(len(questions)):
        assert (dense_ranking(va, qa[i]).chunk_ids[:10].tolist()
                == dense_ranking(vb, qb[i]).chunk_ids[:10].tolist())


@pytest.mark.model
def test_packed_vector_does_not_depend_on_batch_threads_or_order(minilm, e_sample):
    text = "How do I catch an exception in Python?"
    alone = minilm.encode([text])[0]
    # companions of the same token count share its attention call; longer ones share its matrix products
    same_len = [w + " do I catch an exception in Python?" for w in ("Where", "When", "Why")]
    assert len(set(minilm.token_counts([text] + same_len))) == 1
    batch = [e_sample[3]] + same_len + [text] + e_sample[5:9]
    together = minilm.encode(batch)[batch.index(text)]
    assert np.abs(alone - together).max() < 1e-6
    one_worker = load_encoder(None, threads=1)
    one_worker._model = minilm.model
    assert np.abs(one_worker.encode(batch) - minilm.encode(batch)).max() < 1e-6
    rev = minilm.encode(batch[::-1])[::-1]
    assert np.abs(rev - minilm.encode(batch)).max() < 1e-6


@pytest.mark.model
def test_packed_progress_runs_in_the_calling_thread_and_counts_every_text(minilm, e_sample):
    import threading

    seen = []
    minilm.encode(e_sample[:40], progress=lambda done, total: seen.append((done, total, threading.get_ident())))
    # 40 texts in buckets of at most 1,024 tokens: several calls, the last reports 40 of 40
    assert len(seen) > 1 and seen[-1][:2] == (40, 40)
    assert [d for d, _, _ in seen] == sorted(d for d, _, _ in seen)
    assert {t for _, _, t in seen} == {threading.get_ident()}


def test_run_buckets_raises_the_workers_error_and_restores_torch_threads():
    torch = pytest.importorskip("torch")
    from audit.models.packed import run_buckets

    before = torch.get_num_threads()
    calls = []

    def fn(b):
        calls.append(b[0])
        if b[0] == 2:
            raise ValueError("bucket 2 failed")

    with pytest.raises(ValueError, match="bucket 2 failed"):
        run_buckets(fn, [[0], [1], [2], [3], [4], [5]], workers=2)
    assert torch.get_num_threads() == before
    # every bucket before the failing one was taken (the queue is in order); none is run twice
    assert {0, 1, 2} <= set(calls) and len(calls) == len(set(calls))


def test_packable_refuses_what_it_cannot_reproduce():
    from audit.models.packed import packable

    # not a sentence-transformers pipeline at all → sentence-transformers keeps it
    assert packable([object()]) is False
    assert packable(None) is False


@pytest.mark.model
def test_packed_cross_encoder_scores_equal_predict(e_sample):
    path = str(resolve_model_path(None))
    ce = load_cross_encoder(path, num_labels=1)  # untrained head, random at each load: share the weights
    ref = load_cross_encoder(path, num_labels=1, packing=False)
    ref.model = ce.model
    pairs = e_sample[:25]  # 25 pairs of different lengths, as the reranker scores them
    q = "How do I catch an exception in Python?"
    a, b = ce.score(q, pairs), ref.score(q, pairs)
    assert ce._packed_model() is not None  # the packed path ran
    # same float32 operations, other grouping: equal to rounding, hence the same order
    assert np.abs(a - b).max() < 1e-5
    assert np.argsort(-a, kind="stable").tolist() == np.argsort(-b, kind="stable").tolist()


def test_balanced_buckets_give_every_worker_work():
    from audit.models.packed import balanced_buckets

    # 25 pairs of 100 tokens, 2 workers, budget 1,024: 2,500 tokens need ceil(2500 / 2048) = 2 buckets a
    # worker, so 4 buckets of ~6.25 pairs (cut where the running cost passes 1/4, 2/4, 3/4 of the total:
    # after 6, 13, 19 pairs) instead of the greedy 10 + 10 + 5 that leaves one worker idle for a third
    b = balanced_buckets([100] * 25, workers=2, token_budget=1024)
    assert [len(x) for x in b] == [6, 6, 7, 6]  # costliest (the latest in length order) first
    assert b[-1] == [0, 1, 2, 3, 4, 5]  # ties keep index order
    # fewer texts than buckets wanted: one text a bucket, longest first
    assert balanced_buckets([5, 9, 7], workers=4, token_budget=10) == [[1], [2], [0]]
    assert balanced_buckets([], workers=2, token_budget=1024) == []


@settings(deadline=None)
@given(st.lists(st.integers(1, 512), max_size=80), st.integers(1, 4), st.integers(16, 2048))
def test_balanced_buckets_partition_in_length_order(lens, workers, budget):
    from audit.models.packed import balanced_buckets

    b = balanced_buckets(lens, workers, budget)
    flat = [i for bucket in b[::-1] for i in bucket]
    # every text exactly once, in (length, index) order when read from the cheapest bucket up
    assert flat == sorted(range(len(lens)), key=lambda i: (lens[i], i))
    assert all(b)  # no empty bucket
    if lens:
        k = workers * -(-sum(lens) // (workers * budget))
        assert len(b) == min(k, len(lens))


@pytest.mark.model
def test_first_token_only_equals_the_full_pass(e_sample):
    torch = pytest.importorskip("torch")
    ce = load_cross_encoder(str(resolve_model_path(None)), num_labels=1)
    packed = ce._packed_model()
    enc = ce.model.tokenizer(["what does a chunk hold?"] * 9, e_sample[:9], truncation=True, max_length=512)
    ids, types = enc["input_ids"], enc["token_type_ids"]
    ids[3], types[3] = ids[5], types[5]  # two texts of one length: the attention group path with b = 2
    with torch.inference_mode():
        full = packed.hidden_states(ids, types)
        first = packed.hidden_states(ids, types, first_only=True)
    starts = np.concatenate([[0], np.cumsum([len(x) for x in ids])[:-1]])
    assert first.shape == (9, 384)
    # the last layer for [CLS] only: same operations on the same rows, float32 rounding apart
    assert (first - full[torch.as_tensor(starts)]).abs().max().item() < 1e-5
