"""The one shape every retriever returns: chunk ids in order, one score each, the score's meaning stated once.

Ties break by ``chunk_id`` (docs/definitions.md, *Rankings*).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

__all__ = ["Ranking", "order", "timed", "trec_order"]


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


def order(scores, ids, ascending: bool, ties: str = "ascending") -> np.ndarray:
    """Indices sorting by score, ascending or descending, ties by chunk id in the ``ties`` direction.

    The one ordering rule of the product (docs/definitions.md, *Rankings*, *A team's own system*):
    the built-in retrievers break ties by chunk id ascending; a team's run is ordered as trec_eval
    orders it, ties by chunk id descending (code-point order of the ids, trec_eval's ``strcmp``).
    Scores must be canonical (:mod:`audit.scores`) so that a tie is an equality.

    Parameters
    ----------
    scores : array-like of float, shape (n,)
    ids : array-like, shape (n,)
        Integer or string chunk ids.
    ascending : bool
        True for a distance (lower is better), False for a similarity or score.
    ties : {"ascending", "descending"}

    Returns
    -------
    numpy.ndarray of int, shape (n,)
        Positions into ``scores`` / ``ids``, best first.

    Raises
    ------
    ValueError
        An unknown ``ties`` direction.
    """
    if ties not in ("ascending", "descending"):
        raise ValueError(f"ties must be 'ascending' or 'descending', got {ties!r}")
    sc = np.asarray(scores, dtype=np.float64)
    key = sc if ascending else -sc
    idarr = np.asarray(ids)
    if idarr.dtype.kind in "iu":
        return np.lexsort((idarr if ties == "ascending" else -idarr.astype(np.int64), key))
    pos = list(range(len(sc)))
    pos.sort(key=lambda i: ids[i], reverse=ties == "descending")  # stable: the id order within equal keys
    pos.sort(key=lambda i: key[i])
    return np.array(pos, dtype=np.int64)


def trec_order(ids, scores, higher_is_better: bool) -> np.ndarray:
    """:func:`order` as trec_eval evaluates a run: best canonical score first, ties by chunk id descending."""
    return order(scores, ids, ascending=not higher_is_better, ties="descending")


def timed(fn, *args, **kw):
    """``(result, milliseconds)`` of one call, wall clock (``perf_counter``)."""
    t = time.perf_counter()
    out = fn(*args, **kw)
    return out, (time.perf_counter() - t) * 1000.0
