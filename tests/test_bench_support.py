"""Encoder speed options (docs/benchmarks.md): defaults unchanged, same vectors where promised.

- ``token_budget`` (length bucketing) only regroups texts: same vectors as the default.
- ``backend="onnx"``: the local weights exported to ONNX and run with onnxruntime, no
  torch at query time: same vectors to ~1e-6, another digest (never mixed in a cache).
- ``backend="onnx-int8"``: quantised, another digest; what holds on every x86-64 CPU is tested
  (shapes, unit norm, determinism, the same vector alone and in any batch). How close int8 comes to
  fp32 depends on the CPU's int8 kernels (AVX2 u8s8 can saturate, VNNI does not): ``make bench``
  measures and prints it, no test asserts it.
- the benchmark's naive baselines agree with the audit's implementations.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from conftest import ROOT

from audit.models import BACKENDS, TOKEN_BUDGET, load_encoder, onnx_export
from audit.retrieval import BM25, dense_ranking, rrf

sys.path.insert(0, str(ROOT / "bench"))

TEXTS = ["How do I raise an exception?", "The raise statement re-raises the last exception that was active "
         "in the current scope. " * 8, "paella", "", "with open(path) as f: f.read()"]


@pytest.fixture(scope="module")
def minilm():
    return load_encoder(None)


@pytest.fixture(scope="module")
def onnx_home(tmp_path_factory):
    """One AUDIT_HOME for the ONNX tests: the export (~10 s) happens once."""
    pytest.importorskip("onnxruntime")
    return tmp_path_factory.mktemp("audit_home_onnx")


@pytest.mark.model
def test_default_options(minilm):
    # torch, the library's threads, length buckets (same vectors as fixed batches: next test)
    assert (minilm.backend, minilm.threads, minilm.token_budget) == ("torch", None, TOKEN_BUDGET)
    assert minilm.digest == minilm.weights_digest
    assert BACKENDS == ("torch", "onnx", "onnx-int8")


@pytest.mark.parametrize("kw, what", [({"backend": "tensorrt"}, "torch, onnx, onnx-int8"),
                                      ({"threads": 0}, "threads"), ({"token_budget": 0}, "token_budget")])
def test_bad_speed_option_says_which(kw, what):
    with pytest.raises(ValueError, match=what):
        load_encoder(None, **kw)


@pytest.mark.model
def test_length_buckets_give_the_same_vectors(minilm):
    fixed = load_encoder(None, token_budget=None)  # sentence-transformers' fixed batches (previous default)
    fixed._model = minilm.model  # same weights, one copy
    ref = fixed.encode(TEXTS, batch_size=2)
    for budget in (TOKEN_BUDGET, 64, 1):
        bucketed = load_encoder(None, token_budget=budget)
        bucketed._model = minilm.model
        np.testing.assert_allclose(bucketed.encode(TEXTS), ref, atol=1e-5)
        assert bucketed.digest == fixed.digest  # same numbers: the cache is shared


@pytest.mark.model
def test_onnx_backends_export_from_local_weights(minilm, onnx_home, monkeypatch):
    monkeypatch.setenv("AUDIT_HOME", str(onnx_home))
    ref = minilm.encode(TEXTS)
    fp32 = load_encoder(None, backend="onnx")
    v = fp32.encode(TEXTS)
    np.testing.assert_allclose(v, ref, atol=1e-5)
    assert fp32.digest == minilm.digest + "+onnx"
    q8 = load_encoder(None, backend="onnx-int8", threads=1)
    w = q8.encode(TEXTS)
    assert w.shape == (len(TEXTS), 384) and w.dtype == np.float32
    assert np.allclose(np.linalg.norm(w, axis=1), 1, atol=1e-5)
    np.testing.assert_array_equal(q8.encode(TEXTS), w)  # deterministic on one machine
    assert q8.digest != fp32.digest != minilm.digest
    (folder,) = (onnx_home / "onnx").iterdir()  # one folder per weights digest
    assert sorted(p.name for p in folder.iterdir()) == ["model.int8.onnx", "model.onnx"]


@pytest.mark.model
def test_onnx_backend_runs_without_importing_torch(onnx_home):
    import os

    code = ("import sys; from audit.models import load_encoder; "
            "v = load_encoder(None, backend='onnx').encode(['a query']); "
            "print(v.shape, 'torch' in sys.modules)")
    env = {**os.environ, "AUDIT_HOME": str(onnx_home)}
    enc = load_encoder(None, backend="onnx")
    onnx_export(enc.path, enc.weights_digest, home=onnx_home)  # exported here if the test above did not run
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split()[-1] == "False", out.stdout


def test_naive_baselines_agree_with_the_audit():
    import naive

    texts = ["the cat sat", "the cat cat ran far away", "a dog", "", "cat"]
    seed, ours = naive.SeedBM25(texts), BM25(texts)
    for q in ["cat", "the dog", "CAT cat", "zebra"]:
        np.testing.assert_allclose(seed.scores(q), ours.scores(q), rtol=1e-12)
        assert [c for c, _ in seed.rank(q)] == ours.rank(q).chunk_ids.tolist()
    rng = np.random.default_rng(0)
    v = rng.standard_normal((30, 8)).astype(np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    assert [c for c, _ in naive.dense_loop(v, v[3])] == dense_ranking(v, v[3]).chunk_ids.tolist()
    a, b = dense_ranking(v, v[1]), BM25(texts).rank("cat")
    assert [c for c, _ in naive.rrf_loop([a.chunk_ids.tolist(), b.chunk_ids.tolist()])] == rrf([a, b]).chunk_ids.tolist()


def test_bench_dense_topk_is_the_head_of_the_full_scan():
    import run

    rng = np.random.default_rng(1)
    v = rng.standard_normal((500, 8)).astype(np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    v[10:20] = v[5]  # exact ties around the cut
    for k in (1, 5, 12, 100, 500, 600):
        ids, _ = run.dense_topk(v, v[5], k)
        assert ids.tolist() == dense_ranking(v, v[5]).chunk_ids[:k].tolist()


def test_uncached_hub_name_fails_fast_without_importing_huggingface_hub(tmp_path):
    # the warm report asks for the default cross-encoder, absent here: 0.2 s of imports saved
    import os

    code = ("import sys; from audit.models import ModelUnavailable, resolve_model_path\n"
            "try:\n    resolve_model_path('no-org/no-model')\n"
            "except ModelUnavailable as e:\n    print('huggingface_hub' in sys.modules, 'HF_HUB_OFFLINE=1' in str(e))")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGINGFACE_", "TRANSFORMERS_CACHE",
                                                                     "XDG_CACHE"))}
    env.update({"HF_HOME": str(tmp_path), "HOME": str(tmp_path), "HF_HUB_OFFLINE": "1"})  # online it downloads
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True"]


def test_a_name_in_the_hub_cache_is_left_to_huggingface_hub(tmp_path, monkeypatch):
    from audit.models.resolve import _in_hf_cache

    monkeypatch.setenv("HF_HOME", str(tmp_path))
    assert not _in_hf_cache("org/model")
    (tmp_path / "hub" / "models--org--model").mkdir(parents=True)
    assert _in_hf_cache("org/model")


@pytest.mark.model
def test_cross_encoder_length_buckets_give_the_same_scores():
    from audit.models import load_cross_encoder, resolve_model_path

    path = str(resolve_model_path(None))
    plain = load_cross_encoder(path, num_labels=1, token_budget=None)  # one batch (previous default)
    bucketed = load_cross_encoder(path, num_labels=1, token_budget=96)
    bucketed.model = plain.model  # the untrained head is random per load: share one
    texts = [t * k for t, k in zip(TEXTS, (1, 3, 1, 1, 2))]
    np.testing.assert_allclose(bucketed.score("raise an exception", texts), plain.score("raise an exception", texts),
                               atol=1e-4)
    with pytest.raises(ValueError, match="token_budget"):
        load_cross_encoder(path, num_labels=1, token_budget=0)


@pytest.mark.model
def test_int8_vector_does_not_depend_on_its_batch(onnx_home, monkeypatch):
    # Dynamic quantisation picks activation scales per batch tensor, padding included: batched, a text's
    # int8 vector moved by ~6e-3 in cosine with its companions. One text per call makes it a property of
    # the text alone, on any CPU (the same kernels run for the text alone and in the batch).
    monkeypatch.setenv("AUDIT_HOME", str(onnx_home))
    q8 = load_encoder(None, backend="onnx-int8", threads=1)
    query = "How do I catch an exception in Python?"
    alone = q8.encode([query])[0]
    for companion in ["word " * 200, "A one-line sentence.", "#$%&*@!" * 10]:
        for batch in ([query, companion], [companion, query, companion]):
            v = q8.encode(batch)[batch.index(query)]
            assert float(v @ alone) > 1 - 1e-6
