"""The one query-time path: dense → BM25 → reciprocal rank fusion → cross-encoder rerank.

Used by the audit run (every ground-truth query), the Query explorer (typed queries) and the
Citations page, so the three can never disagree. Its constants are the specification's
(docs/definitions.md, *Hybrid and rerank*).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from .bm25 import BM25
from .dense import dense_ranking
from .fusion import rerank, rrf
from .ranking import Ranking

__all__ = ["RERANK_DEPTH", "RETRIEVERS", "RRF_K", "STORED_DEPTH", "QueryRankings", "rank_query"]

#: Retriever names in display order.
RETRIEVERS = ("dense", "bm25", "hybrid", "rerank")
#: RRF constant (specification: 60).
RRF_K = 60
#: Hybrid top-N the cross-encoder reorders (specification: 25).
RERANK_DEPTH = 25
#: Ranks kept per query and retriever for display and the gate (metrics use the full ranking).
STORED_DEPTH = 100


@dataclass(frozen=True)
class QueryRankings:
    """One query's full rankings and wall-clock cost (a store's top k is :class:`audit.stores.base.SearchResult`).

    Attributes
    ----------
    rankings : dict of str to Ranking
        Per retriever asked (and ``dense``/``bm25`` always): the full ranking.
    latency_ms : dict of str to float
        Milliseconds per retriever, cumulative as a live query pays them: ``dense`` = the scan;
        ``bm25`` = the BM25 scoring alone; ``hybrid`` = dense + BM25 + fusion; ``rerank`` =
        hybrid + cross-encoder.
    """

    rankings: dict
    latency_ms: dict


def rank_query(query: str, query_vector: np.ndarray, vectors: np.ndarray, bm25: BM25, texts: Sequence[str],
               retrievers: Sequence[str] = RETRIEVERS, cross_encoder=None, distances: np.ndarray | None = None,
               language: str | None = None) -> QueryRankings:
    """Rank every chunk for one query with each retriever of ``retrievers``.

    Parameters
    ----------
    query : str
        The query text (BM25 and the cross-encoder read it).
    query_vector : float32 array, shape (dims,), unit
    vectors : float32 array, shape (n_chunks, dims), unit rows
    bm25 : BM25
        Built over ``texts``.
    texts : sequence of str
        ``texts[chunk_id]`` is the chunk's embedded ``text`` (what the cross-encoder reads).
    retrievers : sequence of str
        Any of :data:`RETRIEVERS`; dense and BM25 are always computed (hybrid fuses them).
    cross_encoder : CrossEncoderModel or None
        Needed for ``rerank``.
    distances : float64 array, shape (n_chunks,), optional
        The query's canonical cosine distances (:func:`audit.scores.cosine_distances`) when the
        caller has them already; computed here otherwise (the dense latency then includes them).
    language : str or None
        The query's ISO 639-1 code, for BM25's ``snowball`` rule (default: the index's own).

    Raises
    ------
    ValueError
        An unknown retriever, or ``rerank`` without a cross-encoder.
    """
    bad = [r for r in retrievers if r not in RETRIEVERS]
    if bad:
        raise ValueError(f"unknown retriever {bad[0]!r}; choose from {','.join(RETRIEVERS)}")
    if "rerank" in retrievers and cross_encoder is None:
        raise ValueError("the rerank retriever needs a cross-encoder; none is loaded")
    t0 = time.perf_counter()
    dense = dense_ranking(vectors, query_vector, distances)
    t1 = time.perf_counter()
    lexical = bm25.rank(query, language=language)
    t2 = time.perf_counter()
    rankings: dict[str, Ranking] = {"dense": dense, "bm25": lexical}
    lat = {"dense": (t1 - t0) * 1000.0, "bm25": (t2 - t1) * 1000.0}
    if "hybrid" in retrievers or "rerank" in retrievers:
        rankings["hybrid"] = rrf([dense, lexical], k=RRF_K)
        lat["hybrid"] = (time.perf_counter() - t0) * 1000.0
        if "rerank" in retrievers:
            rankings["rerank"] = rerank(rankings["hybrid"], query, texts, cross_encoder, depth=RERANK_DEPTH)
            lat["rerank"] = (time.perf_counter() - t0) * 1000.0
    return QueryRankings(rankings, lat)
