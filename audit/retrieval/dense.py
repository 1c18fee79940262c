"""Dense retrieval: an exact scan by cosine distance ``1 - v·q`` (on unit vectors exactly ``L2² / 2``)."""

from __future__ import annotations

import numpy as np

from .ranking import Ranking, order

__all__ = ["dense_ranking"]


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
    o = order(dist, ids, ascending=True)
    return Ranking(ids[o], dist[o], "cosine distance")
