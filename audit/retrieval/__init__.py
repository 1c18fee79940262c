"""Retrievers and the query-time path (docs/definitions.md, *Rankings*, *BM25*, *Hybrid and rerank*).

Every retriever returns a :class:`Ranking` (chunk ids in order, one score each, the score's
meaning stated once); :func:`rank_query` is the one path from a query to them.
"""

from .bm25 import BM25, BM25S_MIN_DOCS, TOKEN_RULES, bm25_index, bm25_tokens
from .dense import dense_ranking
from .fusion import rerank, rrf
from .ranking import Ranking, timed
from .search import RERANK_DEPTH, RETRIEVERS, RRF_K, STORED_DEPTH, QueryRankings, rank_query

__all__ = ["BM25", "BM25S_MIN_DOCS", "RERANK_DEPTH", "RETRIEVERS", "RRF_K", "STORED_DEPTH", "Ranking",
           "QueryRankings", "TOKEN_RULES", "bm25_index", "bm25_tokens", "dense_ranking", "rank_query", "rerank",
           "rrf", "timed"]
