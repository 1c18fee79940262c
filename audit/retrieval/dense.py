"""Dense retrieval: an exact scan by cosine distance ``1 - v·q`` (on unit vectors exactly ``L2² / 2``)."""

from __future__ import annotations

import numpy as np

from .ranking import Ranking, order

__all__ = ["dense_ranking"]


def dense_ranking(vectors: np.ndarray, query: np.ndarray) -> Ranking:
    """Exact scan: every chunk by cosine distance ``1 - v·q``, ascending.

    Distances are clipped to [0, 2]: float32 unit vectors give ``1 - v·q`` like
    -2.4e-07 for an identical chunk or 2.0000002 for an opposite one, which
    would reach the threshold sweep and the JSON (docs/definitions.md, *Rankings*).

    Parameters
    ----------
    vectors : float32 array, shape (n_chunks, dims), unit rows
    query : float32 array, shape (dims,), unit

    Returns
    -------
    Ranking
        Every chunk, cosine distance in [0, 2] ascending, ties by chunk id.
    """
    if vectors.shape[0] == 0:
        return Ranking(np.zeros(0, np.int64), np.zeros(0), "cosine distance")
    dist = np.clip(1.0 - (vectors @ query).astype(np.float64), 0.0, 2.0)
    ids = np.arange(vectors.shape[0], dtype=np.int64)
    o = order(dist, ids, ascending=True)
    return Ranking(ids[o], dist[o], "cosine distance")
