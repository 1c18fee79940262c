"""What every page says first, under its title: the run set's warnings and the items left out (once a page)."""

from __future__ import annotations

import streamlit as st

__all__ = ["notices", "rerank_unavailable"]

#: Session key: the rerank notice already shown in full in this session (its text).
_RERANK_SHOWN = "_rerank_notice_shown"


def rerank_unavailable(ctx) -> None:
    """Why the rerank column is missing: the whole box (the reason and how to rerank here) the first time a
    session meets it, then one line on every page that mentions it (the box repeated on most pages).

    Nothing when the sidebar's retrievers ask for no rerank column or it ran."""
    from .text import md

    why = ctx.cross_error
    if not why or "rerank" not in ctx.runset.retrievers:
        return
    if st.session_state.get(_RERANK_SHOWN) != why:
        st.session_state[_RERANK_SHOWN] = why
        st.warning(f"Rerank column unavailable: {md(why)}")
        return
    reason = why.split(" — ", 1)[0]
    st.caption(md(f"Rerank column unavailable: {reason}.") + " To rerank, give a local cross-encoder folder in the "
               "sidebar's Reranker field (the first notice of this session said how).")


def notices(ctx, key: str = "page") -> None:
    """Each warning of the run set (:func:`audit.report.notices.notice_lines`: the CLI's ``warning:`` lines), then
    the judged queries or needles left out, in an expander with their reasons; for a live endpoint, over which
    questions the page's figures are (:func:`audit.report.endpoint.over_which_questions`)."""
    from audit.report.endpoint import over_which_questions
    from audit.report.notices import notice_lines, rejected_frame
    from audit.capabilities import can

    from .tables import table
    from .text import md

    if (over := over_which_questions(ctx.runset)) is not None:
        st.info(md(over))
    for line in notice_lines(ctx.runset):
        st.warning(md(line))
    rejected = rejected_frame(ctx.runset)
    if len(rejected) and not can(ctx.runset, "chunk_cuts"):  # built-in: the Overview lists rejected needles itself
        with st.expander(f"{len(rejected)} judged queries left out, with the reason"):
            table(rejected, f"{key}_rejected_table", "rejected_queries.csv")
