"""A typed query run now (Query explorer, Citations), through the one query-time path."""

from __future__ import annotations

import time

import numpy as np

from . import cache
from .context import PageContext


def live_search(ctx: PageContext, strategy: str, query: str, retrievers: tuple) -> tuple:
    """A typed query through :func:`audit.retrieval.search` on one strategy of the run.

    Returns ``(SearchResult, cosine distances to every chunk (float64, shape (n_chunks,)), embed ms)``.
    Raises ValueError (rerank without a cross-encoder: the message says why) or ModelUnavailable.
    """
    from audit.retrieval import search

    if "rerank" in retrievers and ctx.cross_encoder is None:
        raise ValueError(f"rerank is unavailable: {ctx.cross_error}")
    t0 = time.perf_counter()
    qv = cache.query_vector(ctx.encoder.name, query, ctx.encoder)
    embed_ms = (time.perf_counter() - t0) * 1000.0
    s = ctx.run.strategy(strategy)
    found = search(query, qv, s.vectors, cache.bm25(ctx.key.digest, strategy, s.chunks.texts), s.chunks.texts,
                   retrievers, ctx.cross_encoder)
    return found, (1.0 - s.vectors @ qv).astype(np.float64), embed_ms
