"""Synthetic corpora for the scaling benchmark: random unit vectors and Zipf-distributed tokens.

Only the retrieval stages are measured on them (no model): the dense scan needs
unit vectors of the real dimension (384), BM25 needs chunk texts whose length and
term frequencies look like the built-in corpus's (mean 64 tokens a chunk, a
Zipf-like vocabulary of 50,000 words, so frequent words such as "the" occur in
most chunks and rare ones in a few). Everything is drawn from ``seed``.
"""

from __future__ import annotations

import numpy as np

VOCAB = 50_000
ZIPF_S = 1.07
MEAN_TOKENS = 64
DIMS = 384


def _zipf_probs(n: int = VOCAB, s: float = ZIPF_S) -> np.ndarray:
    p = 1.0 / np.arange(1, n + 1) ** s
    return p / p.sum()


def words(n: int = VOCAB) -> np.ndarray:
    """The vocabulary: ``w0`` (most frequent) … ``w{n-1}``."""
    return np.array([f"w{i}" for i in range(n)], dtype=object)


def texts(n_chunks: int, seed: int = 0) -> list[str]:
    """``n_chunks`` texts of Zipf words, lengths ~ Poisson(MEAN_TOKENS) (at least 1)."""
    rng = np.random.default_rng(seed)
    lengths = np.maximum(rng.poisson(MEAN_TOKENS, n_chunks), 1)
    ids = rng.choice(VOCAB, size=int(lengths.sum()), p=_zipf_probs())
    vocab = words()
    toks = vocab[ids]
    bounds = np.concatenate([[0], np.cumsum(lengths)])
    return [" ".join(toks[bounds[i]:bounds[i + 1]]) for i in range(n_chunks)]


def queries(n: int, seed: int = 1, length: int = 6) -> list[str]:
    """``n`` queries of ``length`` Zipf words (so most hold a frequent word, as real questions do)."""
    rng = np.random.default_rng(seed)
    vocab = words()
    return [" ".join(vocab[rng.choice(VOCAB, size=length, p=_zipf_probs())]) for _ in range(n)]


def unit_vectors(n: int, dims: int = DIMS, seed: int = 0, chunk: int = 100_000) -> np.ndarray:
    """float32 unit rows, shape ``(n, dims)``, made ``chunk`` rows at a time (bounded temporaries)."""
    rng = np.random.default_rng(seed)
    out = np.empty((n, dims), dtype=np.float32)
    for lo in range(0, n, chunk):
        v = rng.standard_normal((min(chunk, n - lo), dims), dtype=np.float32)
        v /= np.linalg.norm(v, axis=1, keepdims=True)
        out[lo:lo + v.shape[0]] = v
    return out
