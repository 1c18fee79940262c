"""Typed results of a Lance dataset index: top-k lists, the approximate-vs-exact comparison, the loaded index."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import numpy as np

from ...chunking import ChunkSet
from ...ingest import Corpus
from .schema import LanceIndexError

_MODEL_KEY = ("model", "model_digest", "dims", "window")


def _h64(s: str) -> int:
    """64-bit blake2b of a string (duplicate and offset checks keep these, never the texts)."""
    return int.from_bytes(hashlib.blake2b(s.encode("utf-8"), digest_size=8).digest(), "little")


def _vectors(batch, dims: int) -> np.ndarray:
    """float32 ``(rows, dims)`` copy of the ``vector`` column of a record batch or table."""
    col = batch.column("vector")
    if hasattr(col, "combine_chunks"):  # a Table's ChunkedArray
        col = col.combine_chunks()
    flat = col.flatten().to_numpy(zero_copy_only=False)  # flatten() honours slicing, .values does not
    return np.asarray(flat, dtype=np.float32).reshape(len(col), dims)


@dataclass(frozen=True)
class TopK:
    """Top-k chunk ids per query, best first.

    Attributes
    ----------
    chunk_ids : int64 array, shape (n_queries, k)
        ``-1`` pads rows when the dataset has fewer than k rows.
    distances : float64 array, shape (n_queries, k)
        Cosine distance ``1 - cos`` in [0, 2] (``inf`` in padding). For an
        approximate search: the index's own estimate (PQ codes), unless refined.
    method : str
        ``exact`` or ``ann:<index type>`` (``ann:none (flat scan)`` without index).
    exact_distances : float64 array, shape (n_queries, k), or None
        Approximate search only: the true ``1 - v·q`` of each returned chunk
        (computed from its stored vector), for the tie-aware recall.
    """

    chunk_ids: np.ndarray
    distances: np.ndarray
    method: str
    exact_distances: np.ndarray | None = None

    def rankings(self) -> list:
        """One :class:`audit.retrieval.Ranking` per query (padding dropped)."""
        from ..retrieval import Ranking

        out = []
        for ids, d in zip(self.chunk_ids, self.distances):
            keep = ids >= 0
            out.append(Ranking(ids[keep].astype(np.int64), d[keep].astype(np.float64), "cosine distance"))
        return out


@dataclass(frozen=True)
class AnnComparison:
    """Approximate against exact top-k, per k (the figure to read after changing index parameters).

    Attributes
    ----------
    method : str
        The approximate method (``ann:IVF_PQ`` …; ``ann:none (flat scan)``
        when the dataset has no vector index: then approximate equals exact).
    params : dict
        Search parameters used (``nprobes``, ``refine_factor``).
    rows : tuple of dict
        Per k: ``k``, ``n_queries``, ``recall`` (ann-benchmarks' k-NN recall,
        Aumüller, Bernhardsson & Faithfull 2020: share of the approximate top
        k whose true distance is at most the exact k-th distance, so ties at
        the k-th place are no misses), ``overlap`` (mean of |approx ∩ exact| / k
        over the ids; below ``recall`` only through ties), ``min_overlap``; with relevant sets also
        ``needle_recall_exact``, ``needle_recall_ann`` (share of queries with a
        relevant chunk in the top k), ``lost`` and ``gained`` (queries whose
        needle only exact, resp. only approximate, finds at k).
    lost : dict
        k → tuple of query indices the approximate index loses at k.
    """

    method: str
    params: dict
    rows: tuple[dict, ...]
    lost: dict = field(default_factory=dict)

    @property
    def has_index(self) -> bool:
        """Whether a vector index answered (False: flat scan, approximate = exact)."""
        return "none" not in self.method

    def to_frame(self):
        """One row per k (pandas DataFrame)."""
        import pandas as pd

        return pd.DataFrame(list(self.rows))

    def to_dict(self) -> dict:
        return {"method": self.method, "has_index": self.has_index, "params": dict(self.params),
                "rows": [dict(r) for r in self.rows], "lost": {int(k): list(v) for k, v in self.lost.items()}}


@dataclass(frozen=True)
class LoadedLance:
    """A Lance index in memory, ready for :func:`audit.sources.builtin.run_audit`.

    Attributes
    ----------
    uri : str
    corpus : Corpus
        From the document table (canonical text; failed files as failures),
        documents in the order of the indexed corpus, so ``corpus.sha256`` is
        the indexed corpus's.
    chunks : ChunkSet
        ``chunk_id`` = position, (doc_id, start) order.
    vectors : float32 array, shape (n_chunks, dims)
        Every vector (n × dims × 4 bytes: 1.5 GB at 1M chunks of 384 dims);
        the audit's scan needs them all.
    stamp : dict
        model, model_digest, dims, window, pipeline_version, strategy (JSON).
    """

    uri: str
    corpus: Corpus
    chunks: ChunkSet
    vectors: np.ndarray
    stamp: dict

    def prebuilt(self) -> dict:
        """``{strategy name: (chunks, vectors)}`` for ``run_audit(..., prebuilt=...)``."""
        return {self.chunks.strategy.name: (self.chunks, self.vectors)}

    def check_encoder(self, encoder) -> None:
        """Refuse an encoder other than the one that made the vectors.

        Raises
        ------
        LanceIndexError
            Name, weights digest, dims or window differ (both named).
        """
        got = (encoder.name, encoder.digest, int(encoder.dims), int(encoder.window))
        want = tuple(self.stamp[k] for k in _MODEL_KEY)
        if got != want:
            raise LanceIndexError(f"{self.uri}: vectors were made by {want[0]} ({want[1][:12]}, {want[2]} dims, "
                                  f"window {want[3]}), the queries would be embedded by {got[0]} ({got[1][:12]}, "
                                  f"{got[2]} dims, window {got[3]}): pass --model {want[0]}")


def _merge_topk(best_i: np.ndarray, best_d: np.ndarray, ids: np.ndarray, d: np.ndarray, k: int):
    """Merge a batch into the running top-k: smallest distance first, ties by chunk id (exact, no arbitrary cut)."""
    ci = np.concatenate([best_i, ids], axis=1)
    cd = np.concatenate([best_d, d], axis=1)
    if cd.shape[1] <= k:
        o = np.lexsort((ci, cd), axis=1)
        return np.take_along_axis(ci, o, 1), np.take_along_axis(cd, o, 1)
    kth = np.partition(cd, k - 1, axis=1)[:, k - 1:k]
    out_i = np.empty((cd.shape[0], k), np.int64)
    out_d = np.empty((cd.shape[0], k), np.float64)
    for r in range(cd.shape[0]):
        keep = np.flatnonzero(cd[r] <= kth[r, 0])  # every tie at the k-th distance stays a candidate
        o = np.lexsort((ci[r, keep], cd[r, keep]))[:k]
        out_i[r], out_d[r] = ci[r, keep[o]], cd[r, keep[o]]
    return out_i, out_d
