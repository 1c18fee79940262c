"""The run the detail pages show: the sidebar's choice (``focus_strategy`` × ``focus_retriever`` for built-in
columns, else ``focus_run``), read by the pages, the shared cut (:mod:`ui.threshold`) and the history's default
series (:mod:`ui.history`).

It reads only the run set and ``st.session_state``, so everything that needs the run can import it without the
page context's module (:mod:`ui.context`), which records an audit through the history.
"""

from __future__ import annotations

import streamlit as st

from audit.capabilities import can

__all__ = ["focus_run"]


def focus_run(ctx):
    """The run the detail pages show: the sidebar's strategy × retriever for built-in columns, else its run choice."""
    rs = ctx.runset
    if can(rs, "chunk_cuts"):
        name = f"{st.session_state.get('focus_strategy')}/{st.session_state.get('focus_retriever')}"
    else:
        name = st.session_state.get("focus_run")
    try:
        return rs.run(name)
    except KeyError:
        return rs.runs[0]
