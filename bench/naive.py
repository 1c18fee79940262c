"""The naive baselines every stage is measured against.

- :class:`SeedBM25`: the specification's TypeScript ``BM25`` class ported
  literally (per-document term-frequency dicts, a loop over every document per
  query, ``idf = ln(1 + (N - n + 0.5) / (n + 0.5))``, k1 = 1.2, b = 0.75,
  tokens: the audit's default rule (Unicode letter/digit runs of the casefolded text, identical
  to the seed's ``[a-z0-9]+`` lower-cased on ASCII), or the seed's own with ``tokens="ascii"``).
- :func:`dense_loop`: the vector scan as a Python loop over chunks.
- :func:`rrf_loop`: reciprocal rank fusion with dicts (k = 60).
- :func:`encode_one_by_one`: the index build one chunk at a time (batch of 1).
- :func:`rerank_one_by_one`: the cross-encoder one pair at a time.
"""

from __future__ import annotations

import math
import re

import numpy as np

_TOK = re.compile(r"[a-z0-9]+")


def toks(s: str, rule: str = "ascii") -> list[str]:
    """``s.toLowerCase().match(/[a-z0-9]+/g) ?? []`` (the seed's), or the audit's rule of that name."""
    if rule == "ascii":
        return _TOK.findall(s.lower())
    from audit.retrieval import bm25_tokens

    return bm25_tokens(s, rule)


class SeedBM25:
    """The seed's ``export class BM25``, line for line."""

    def __init__(self, docs: list[str], k1: float = 1.2, b: float = 0.75, tokens: str = "unicode") -> None:
        self.k1, self.b, self.rule = k1, b, tokens
        self.tf: list[dict[str, int]] = []
        self.len: list[int] = []
        self.idf: dict[str, float] = {}
        df: dict[str, int] = {}
        for d in docs:
            t: dict[str, int] = {}
            ws = toks(d, self.rule)
            for w in ws:
                t[w] = t.get(w, 0) + 1
            for w in t:
                df[w] = df.get(w, 0) + 1
            self.tf.append(t)
            self.len.append(len(ws))
        self.avg = sum(self.len) / len(self.len) if self.len else 0.0
        n_docs = len(docs)
        for w, n in df.items():
            self.idf[w] = math.log(1 + (n_docs - n + 0.5) / (n + 0.5))

    def scores(self, query: str) -> list[float]:
        q = toks(query, self.rule)
        out = []
        for i, tf in enumerate(self.tf):
            length = self.len[i]
            s = 0.0
            for w in q:
                f = tf.get(w)
                if not f:
                    continue
                s += self.idf.get(w, 0.0) * (f * (self.k1 + 1)) / (
                    f + self.k1 * (1 - self.b + (self.b * length) / self.avg))
            out.append(s)
        return out

    def rank(self, query: str) -> list[tuple[int, float]]:
        """Positive scores, best first, ties by chunk id (what the audit's BM25.rank returns)."""
        s = self.scores(query)
        return sorted(((i, v) for i, v in enumerate(s) if v > 0), key=lambda p: (-p[1], p[0]))


def dense_loop(vectors: np.ndarray, query: np.ndarray) -> list[tuple[int, float]]:
    """Cosine distance chunk by chunk in a Python loop, then sorted (ties by chunk id)."""
    q = query.tolist()
    dist = []
    for i, v in enumerate(vectors.tolist() if isinstance(vectors, np.ndarray) else vectors):
        dist.append((1.0 - sum(a * b for a, b in zip(v, q)), i))
    dist.sort()
    return [(i, d) for d, i in dist]


def rrf_loop(rankings: list[list[int]], k: int = 60) -> list[tuple[int, float]]:
    """``sum 1 / (k + rank)`` with a dict, ranks from 1, ties by chunk id."""
    acc: dict[int, float] = {}
    for r in rankings:
        for pos, cid in enumerate(r, start=1):
            acc[cid] = acc.get(cid, 0.0) + 1.0 / (k + pos)
    return sorted(acc.items(), key=lambda p: (-p[1], p[0]))


def encode_one_by_one(encoder, texts: list[str]) -> np.ndarray:
    """The naive index build: ``encode([text])`` for each chunk."""
    return np.vstack([encoder.encode([t], batch_size=1) for t in texts]) if texts else np.zeros((0, encoder.dims))


def rerank_one_by_one(cross_encoder, query: str, texts: list[str]) -> np.ndarray:
    """The naive rerank: one (query, chunk) pair per model call."""
    return np.concatenate([cross_encoder.score(query, [t], batch_size=1) for t in texts])
