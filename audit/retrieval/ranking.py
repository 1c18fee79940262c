"""The one shape every retriever returns: chunk ids in order, one score each, the score's meaning stated once.

Ties break by ``chunk_id`` (docs/definitions.md, *Rankings*).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

__all__ = ["Ranking", "order", "timed"]


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


def order(scores: np.ndarray, ids: np.ndarray, ascending: bool) -> np.ndarray:
    """Indices sorting by score (asc or desc), ties by chunk id ascending."""
    key = scores if ascending else -scores
    return np.lexsort((ids, key))


def timed(fn, *args, **kw):
    """``(result, milliseconds)`` of one call, wall clock (``perf_counter``)."""
    t = time.perf_counter()
    out = fn(*args, **kw)
    return out, (time.perf_counter() - t) * 1000.0
