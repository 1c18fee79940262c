"""Choosing a query and ranking it (Query explorer, Citations): a ground-truth question, or a typed query
run now through the one query-time path."""

from __future__ import annotations

import time

import streamlit as st

from . import cache
from .context import PageContext


def live_search(ctx: PageContext, strategy: str, query: str, retrievers: tuple) -> tuple:
    """A typed query through :func:`audit.retrieval.rank_query` on one strategy of the run.

    Returns ``(QueryRankings, cosine distances to every chunk (float64, shape (n_chunks,)), embed ms)``.
    Raises ValueError (rerank without a cross-encoder: the message says why) or ModelUnavailable.
    """
    from audit.retrieval import rank_query
    from audit.scores import cosine_distances

    if "rerank" in retrievers and ctx.cross_encoder is None:
        raise ValueError(f"rerank is unavailable: {ctx.cross_error}")
    t0 = time.perf_counter()
    qv = cache.query_vector(ctx.encoder.name, query, ctx.encoder)
    embed_ms = (time.perf_counter() - t0) * 1000.0
    s = ctx.run.strategy(strategy)
    dist = cosine_distances(qv, s.vectors)  # the canonical distances, as the audit run's
    found = rank_query(query, qv, s.vectors, cache.bm25(ctx.key.digest, strategy, s.chunks.texts, ctx.run.bm25_tokens),
                       s.chunks.texts, retrievers, ctx.cross_encoder, distances=dist)
    return found, dist, embed_ms


def rankings(ctx: PageContext, names: list[str], retriever: str, qi: int | None, query: str) -> tuple:
    """Each named strategy's ranking of one query by ``retriever``, with its latency.

    ``qi`` is the index of a ground-truth question in ``ctx.run.in_domain``: its rankings and
    latencies were stored while building the audit. ``qi=None`` runs the typed ``query`` now.

    Returns
    -------
    tuple
        ``({strategy: (Ranking, cosine distances to every chunk, shape (n_chunks,))},
        latency rows ``{"strategy", "<retriever> (ms)", ...}``, a note saying where the times come from)``.
        Raises ValueError or ModelUnavailable as :func:`live_search` does.
    """
    results, latency = {}, []
    if qi is not None:
        for name in names:
            s = ctx.run.strategy(name)
            results[name] = (s.rankings[retriever][qi], s.distances[qi])
            latency.append({"strategy": name, **{f"{r} (ms)": s.latency_ms[r][qi] for r in s.latency_ms}})
        return results, latency, ("measured while building the audit (dense = scan only; hybrid includes dense "
                                   "and BM25)")
    embed_ms = 0.0
    for name in names:
        found, dist, ms = live_search(ctx, name, query, (retriever,))
        embed_ms = max(embed_ms, ms)
        latency.append({"strategy": name, **{f"{r} (ms)": v for r, v in found.latency_ms.items()}})
        results[name] = (found.rankings[retriever], dist)
    return results, latency, f"measured now; query embedding took {embed_ms:.1f} ms (0 when cached)"


def pick_question(queries, key: str) -> int:
    """A select box of the ground-truth questions (``id — text``) under ``key``; returns the chosen index."""
    labels = [f"{q.query_id} — {q.text}" for q in queries]
    st.selectbox("Ground-truth question", range(len(queries)), format_func=lambda i: labels[i], key=key)
    return st.session_state.get(key, 0) or 0
