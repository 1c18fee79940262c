"""Dense retrieval: an exact scan by cosine distance ``1 - v·q`` (on unit vectors exactly ``L2² / 2``)."""

from __future__ import annotations

import numpy as np

from ..scores import cosine_distances
from .ranking import Ranking, order

__all__ = ["dense_ranking"]


def dense_ranking(vectors: np.ndarray, query: np.ndarray, distances: np.ndarray | None = None) -> Ranking:
    """Exact scan: every chunk by cosine distance ``1 - v·q``, ascending.

    Distances are the canonical ones of :func:`audit.scores.cosine_distances` (float64 sums of the
    float32 products, rounded to 9 decimals, the same on every CPU) and clipped to [0, 2]: float32
    unit vectors give ``1 - v·q`` like -2.4e-07 for an identical chunk or 2.0000002 for an opposite
    one, which would reach the threshold sweep and the JSON (docs/definitions.md, *Rankings*, *Scores*).

    Parameters
    ----------
    vectors : float32 array, shape (n_chunks, dims), unit rows
    query : float32 array, shape (dims,), unit
    distances : float64 array, shape (n_chunks,), optional
        This query's canonical distances when already computed (a row of the run's distance matrix).

    Returns
    -------
    Ranking
        Every chunk, cosine distance in [0, 2] ascending, ties by chunk id.
    """
    if vectors.shape[0] == 0:
        return Ranking(np.zeros(0, np.int64), np.zeros(0), "cosine distance")
    dist = cosine_distances(query, vectors) if distances is None else np.asarray(distances, dtype=np.float64)
    ids = np.arange(vectors.shape[0], dtype=np.int64)
    o = order(dist, ids, ascending=True)
    return Ranking(ids[o], dist[o], "cosine distance")
