"""A typed question ranked now through the one query-time path (Query explorer, Citations), and the question picker.

Only a run set that holds its chunks' vectors and texts (the built-in pipelines) can rank a question typed here;
the model that embeds it is the sidebar's (:attr:`ui.context.PageContext.encoder`).
"""

from __future__ import annotations

import time

import streamlit as st

from . import cache
from .context import PageContext

__all__ = ["live_search", "pick_question"]


def live_search(ctx: PageContext, run, query: str):
    """A typed ``query`` through :func:`audit.retrieval.rank_query` on ``run``'s space (a built-in column).

    Returns ``(Ranked, latency row {"<retriever> (ms)": …}, embed ms)``. Raises ValueError (rerank without a
    cross-encoder, a run set that cannot take a typed question: the message says why) or ModelUnavailable.
    """
    from audit.retrieval import rank_query
    from audit.scores import cosine_distances
    from audit.views.capabilities import CANNOT
    from audit.views.query_explorer import ranked_from_search

    sp = ctx.runset.space(run)
    if sp.vectors is None or sp.chunks is None or ctx.encoder is None or run.retriever is None:
        raise ValueError(CANNOT["typed"])
    if run.retriever == "rerank" and ctx.cross_encoder is None:
        raise ValueError(f"rerank is unavailable: {ctx.cross_error}")
    t0 = time.perf_counter()
    qv = cache.query_vector(ctx.encoder.name, query, ctx.encoder)
    embed_ms = (time.perf_counter() - t0) * 1000.0
    texts = sp.chunks.texts
    dist = cosine_distances(qv, sp.vectors)  # the canonical distances, as the audit run's
    found = rank_query(query, qv, sp.vectors,
                       cache.bm25(ctx.digest, sp.name, texts, ctx.runset.settings.get("bm25_tokens", "unicode")),
                       texts, (run.retriever,), ctx.cross_encoder, distances=dist)
    return (ranked_from_search(found.rankings[run.retriever], dist),
            {f"{r} (ms)": v for r, v in found.latency_ms.items()}, embed_ms)


def pick_question(queries, key: str) -> int:
    """A select box of questions (``id — text``) under ``key``; returns the chosen index."""
    labels = [f"{q.query_id} — {q.text}" for q in queries]
    st.selectbox("Question", range(len(queries)), format_func=lambda i: labels[i], key=key)
    return st.session_state.get(key, 0) or 0
