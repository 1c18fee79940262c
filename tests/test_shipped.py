"""Vectors shipped with the built-in corpus: used only for the same model and the same exact text."""

from __future__ import annotations

import numpy as np
import pytest

import audit.index.shipped as shipped
from audit.index import EmbeddingCache, embed
from audit.models import HashingEncoder


def test_a_shipped_vector_is_taken_for_its_exact_text_and_model_only(tmp_path, monkeypatch):
    monkeypatch.setattr(shipped, "SHIPPED_DIR", tmp_path)
    enc = HashingEncoder(dims=32)
    texts = ["alpha beta", "gamma delta"]
    planted = np.eye(32, dtype=np.float32)[[3, 7]]  # not what the encoder computes: proves where it came from
    shipped.write_shipped(enc, texts, planted)
    cache = EmbeddingCache()
    vecs, n = embed(enc, ["gamma delta", "alpha beta", "alpha  beta"], cache)
    assert n == 1  # "alpha  beta" (two spaces) is another text: embedded by the model
    np.testing.assert_array_equal(vecs[0], planted[1])
    np.testing.assert_array_equal(vecs[1], planted[0])
    np.testing.assert_allclose(vecs[2], enc.encode(["alpha  beta"])[0])
    assert len(cache) == 3  # shipped vectors go into the cache like computed ones
    other = HashingEncoder(dims=64)  # another model: nothing shipped for it
    assert shipped.shipped_lookup(other, texts) == {}
    _, n = embed(enc, ["alpha beta"], None)
    assert n == 1  # without a cache (--no-cache) everything is computed


@pytest.mark.model
def test_the_shipped_file_holds_the_models_own_vectors():
    from audit.chunking import PRESETS, chunk_corpus
    from audit.ingest import load_builtin
    from audit.models import load_encoder

    enc = load_encoder(None)
    texts = chunk_corpus(load_builtin(), PRESETS["E"]).texts[:12]
    found = shipped.shipped_lookup(enc, texts)
    if not found:  # topic wording differs between Python builds: such texts are embedded as usual
        pytest.skip("the shipped vectors cover none of these texts on this Python build")
    idx = sorted(found)
    ref = enc.encode([texts[i] for i in idx])
    got = np.vstack([found[i] for i in idx])
    assert float((ref * got).sum(1).min()) > 1 - 1e-6  # the same numbers (float32, nothing quantised)
