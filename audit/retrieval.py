"""Retrievers: dense, BM25, reciprocal rank fusion hybrid, cross-encoder rerank.

Every retriever returns a :class:`Ranking`: chunk ids in order with one score
each, whose meaning is stated once on the ranking (``score_kind``). Ties
break by ``chunk_id``. BM25 and the cross-encoder read the same ``text`` that
is embedded (design.md, *Rankings*).

- dense: exact scan, score = cosine distance ``1 - cos`` in [0, 2]
  (ascending; on unit vectors exactly ``L2² / 2``).
- BM25: the specification's formula, ``k1 = 1.2``, ``b = 0.75``,
  ``idf = ln(1 + (N - n + 0.5) / (n + 0.5))``, tokens ``[a-z0-9]+`` of the
  lower-cased text (Robertson & Zaragoza 2009), on rank-bm25 with that idf.
  Only chunks of positive score are returned: a chunk sharing no term with
  the query is not retrieved.
- hybrid: reciprocal rank fusion (Cormack, Clarke & Büttcher 2009) of the full
  dense ranking and the positive BM25 chunks, ``sum 1 / (k + rank)``,
  ``k = 60``, ranks from 1.
- rerank: a cross-encoder reorders the hybrid top 25 by logit; below it the
  hybrid order continues (scores there are NaN).
"""

from __future__ import annotations

import math
import re
import time
from dataclasses import dataclass
from typing import Sequence

import numpy as np

__all__ = [
    "BM25",
    "RETRIEVERS",
    "Ranking",
    "bm25_tokens",
    "dense_ranking",
    "rerank",
    "rrf",
]

#: Retriever names in display order.
RETRIEVERS = ("dense", "bm25", "hybrid", "rerank")

_TOKEN = re.compile(r"[a-z0-9]+")


@dataclass(frozen=True)
class Ranking:
    """Chunk ids in retrieval order, with one score each.

    Attributes
    ----------
    chunk_ids : numpy.ndarray of int64, shape (n,)
        Best first.
    scores : numpy.ndarray of float64, shape (n,)
        Meaning given by ``score_kind``.
    score_kind : str
        ``cosine distance`` (lower is better), ``BM25 score``, ``RRF score``
        or ``cross-encoder logit`` (higher is better).
    """

    chunk_ids: np.ndarray
    scores: np.ndarray
    score_kind: str

    def __len__(self) -> int:
        return int(self.chunk_ids.shape[0])

    def first_rank(self, relevant: set[int] | frozenset[int]) -> int | None:
        """1-based rank of the first chunk in ``relevant``, ``None`` if absent."""
        if not relevant:
            return None
        hit = np.flatnonzero(np.isin(self.chunk_ids, np.fromiter(relevant, dtype=np.int64)))
        return int(hit[0]) + 1 if hit.size else None

    def top(self, k: int) -> list[tuple[int, float]]:
        """The first ``k`` ``(chunk_id, score)`` pairs."""
        return [(int(c), float(s)) for c, s in zip(self.chunk_ids[:k], self.scores[:k])]


def _order(scores: np.ndarray, ids: np.ndarray, ascending: bool) -> np.ndarray:
    """Indices sorting by score (asc or desc), ties by chunk id ascending."""
    key = scores if ascending else -scores
    return np.lexsort((ids, key))


def dense_ranking(vectors: np.ndarray, query: np.ndarray) -> Ranking:
    """Exact scan: every chunk by cosine distance ``1 - v·q``, ascending.

    Parameters
    ----------
    vectors : float32 array, shape (n_chunks, dims), unit rows
    query : float32 array, shape (dims,), unit
    """
    if vectors.shape[0] == 0:
        return Ranking(np.zeros(0, np.int64), np.zeros(0), "cosine distance")
    dist = 1.0 - (vectors @ query).astype(np.float64)
    ids = np.arange(vectors.shape[0], dtype=np.int64)
    o = _order(dist, ids, ascending=True)
    return Ranking(ids[o], dist[o], "cosine distance")


def bm25_tokens(text: str) -> list[str]:
    """The specification's BM25 tokens: ``[a-z0-9]+`` of the lower-cased text."""
    return _TOKEN.findall(text.lower())


class BM25:
    """BM25 over chunk texts with the specification's idf, on rank-bm25.

    rank-bm25's ``BM25Okapi`` floors its idf (``ln((N - n + 0.5)/(n + 0.5))``
    is 0 for a term in half the documents, so ``"alpha report"`` against
    ``["alpha report", "beta manual"]`` would score 0). The specification uses
    ``idf = ln(1 + (N - n + 0.5) / (n + 0.5))``, always positive; it replaces
    rank-bm25's idf here, the rest (term saturation ``k1``, length
    normalisation ``b``) is rank-bm25's ``get_scores``.

    Parameters
    ----------
    texts : sequence of str
        The chunk texts (the embedded ``text``, header included).
    k1, b : float
        1.2 and 0.75 (specification).
    """

    def __init__(self, texts: Sequence[str], k1: float = 1.2, b: float = 0.75) -> None:
        self.k1, self.b = k1, b
        self.n_docs = len(texts)
        tokenized = [bm25_tokens(t) for t in texts]
        self._empty = self.n_docs == 0 or not any(tokenized)
        if self._empty:
            self._impl = None
            return
        from rank_bm25 import BM25Okapi

        class _SpecBM25(BM25Okapi):
            def _calc_idf(self, nd):  # the specification's idf, no floor needed
                for word, n in nd.items():
                    self.idf[word] = math.log(1.0 + (self.corpus_size - n + 0.5) / (n + 0.5))

        self._impl = _SpecBM25(tokenized, k1=k1, b=b)

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every chunk for ``query``, shape ``(n_chunks,)``."""
        if self._impl is None:
            return np.zeros(self.n_docs)
        toks = bm25_tokens(query)
        if not toks:
            return np.zeros(self.n_docs)
        return np.asarray(self._impl.get_scores(toks), dtype=np.float64)

    def rank(self, query: str) -> Ranking:
        """Chunks with a positive score, best first (ties by chunk id)."""
        s = self.scores(query)
        ids = np.flatnonzero(s > 0).astype(np.int64)
        o = _order(s[ids], ids, ascending=False)
        return Ranking(ids[o], s[ids][o], "BM25 score")


def rrf(rankings: Sequence[Ranking], k: int = 60) -> Ranking:
    """Reciprocal rank fusion: ``score(c) = sum over lists of 1 / (k + rank)``.

    Ranks start at 1; scores are ignored, only ranks count (Cormack et al.
    2009; the specification's ``rrf``). Ties by chunk id.
    """
    acc: dict[int, float] = {}
    for r in rankings:
        for pos, cid in enumerate(r.chunk_ids.tolist(), start=1):
            acc[cid] = acc.get(cid, 0.0) + 1.0 / (k + pos)
    if not acc:
        return Ranking(np.zeros(0, np.int64), np.zeros(0), "RRF score")
    ids = np.fromiter(acc.keys(), dtype=np.int64, count=len(acc))
    sc = np.fromiter(acc.values(), dtype=np.float64, count=len(acc))
    o = _order(sc, ids, ascending=False)
    return Ranking(ids[o], sc[o], "RRF score")


def rerank(base: Ranking, query: str, texts: Sequence[str], cross_encoder, depth: int = 25) -> Ranking:
    """Reorder the first ``depth`` chunks of ``base`` by cross-encoder logit.

    ``texts[chunk_id]`` is the text the cross-encoder reads with ``query``.
    Below ``depth`` the base order continues, with NaN scores.
    """
    head = base.chunk_ids[:depth]
    logits = cross_encoder.score(query, [texts[int(i)] for i in head])
    o = _order(logits, head, ascending=False)
    ids = np.concatenate([head[o], base.chunk_ids[depth:]])
    sc = np.concatenate([logits[o], np.full(max(len(base) - depth, 0), np.nan)])
    return Ranking(ids, sc, "cross-encoder logit")


def timed(fn, *args, **kw):
    """``(result, milliseconds)`` of one call, wall clock (``perf_counter``)."""
    t = time.perf_counter()
    out = fn(*args, **kw)
    return out, (time.perf_counter() - t) * 1000.0
