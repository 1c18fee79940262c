"""A typed question ranked now through the one query-time path (Query explorer, Citations), and the question picker.

Only a run set that holds its chunks' vectors and texts (the built-in pipelines) can rank a question typed here;
the model that embeds it is the sidebar's (:attr:`ui.context.PageContext.encoder`).
"""

from __future__ import annotations

import time

import streamlit as st

from audit.retrieval.bm25 import reads_language

from . import cache
from .context import PageContext

__all__ = ["live_search", "pick_question", "question_mode"]


def question_mode(rs, key: str, label: str, modes: dict[str, str], have_questions: bool) -> str:
    """Draw the page's choice between a question of the run set and a typed one; return ``"ground truth"`` or
    ``"typed"`` (also ``st.session_state[key]``).

    ``modes`` words the two choices (``{"ground truth": "a judged question", "typed": "type a query"}``). A run
    set that cannot rank a typed question (:func:`audit.capabilities.can`) gets no choice, and a caption
    says why; with no question of its own, a run set that can rank one starts on ``"typed"``.
    """
    from audit.capabilities import CANNOT, can

    from .text import md

    typed_ok = can(rs, "query_time_search")
    if key not in st.session_state or (not typed_ok and st.session_state[key] == "typed"):
        st.session_state[key] = "ground truth" if have_questions or not typed_ok else "typed"
    if typed_ok:
        st.radio(label, list(modes), format_func=modes.get, key=key, horizontal=True)
    else:
        st.caption(md(CANNOT["query_time_search"].capitalize() + "."))
    return st.session_state[key]


def live_search(ctx: PageContext, run, query: str):
    """A typed ``query`` ranked on ``run``'s space (:func:`audit.views.query_explorer.typed_ranking`), with the
    session's cached query vector and BM25 index.

    Returns ``(Ranked, latency row {"<retriever> (ms)": …}, embed ms)``. Raises ValueError (rerank without a
    cross-encoder, a run set that cannot take a typed question: the message says why) or ModelUnavailable.
    """
    from audit.capabilities import CANNOT
    from audit.views.query_explorer import can_rank_typed, typed_ranking

    if ctx.encoder is None or not can_rank_typed(ctx.runset, run):
        raise ValueError(CANNOT["query_time_search"])
    sp = ctx.runset.space(run)
    t0 = time.perf_counter()
    qv = cache.query_vector(ctx.encoder.name, query, ctx.encoder)
    embed_ms = (time.perf_counter() - t0) * 1000.0
    settings = ctx.runset.settings
    rule = getattr(run, "token_rule", None) or settings.get("bm25_tokens", "unicode")
    langs = settings.get("languages") or {}
    chunk_langs = [langs.get(c.doc_id) for c in sp.chunks.chunks] if reads_language(rule) else None
    main_language = (settings.get("language") or "").split(",")[0] or None
    bm25 = cache.bm25(ctx.digest, sp.name, sp.chunks.texts, rule, chunk_langs, main_language)
    ranked, latency = typed_ranking(ctx.runset, run, query, qv, bm25, ctx.cross_encoder, ctx.cross_error)
    return ranked, latency, embed_ms


def pick_question(queries, key: str) -> int:
    """A select box of questions (``id — text``) under ``key``, then the chosen question in full (a select box
    cuts a long one to its width: "…for an ass" at 800 px); returns the chosen index."""
    from .text import md

    labels = [f"{q.query_id} — {q.text}" for q in queries]
    st.selectbox("Question", range(len(queries)), format_func=lambda i: labels[i], key=key)
    i = st.session_state.get(key, 0) or 0
    if 0 <= i < len(queries):
        st.caption(md(labels[i]))
    return i
