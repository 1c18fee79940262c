"""What the sidebar keeps across reruns, stops and source switches, and what a shared link carries.

Streamlit drops a widget's value on any script run that does not draw the widget (a stop before the
strategies are drawn, another source chosen, another page): :data:`KEPT` asks it to keep the value for the
whole session (``persist_state="session"``), and :data:`LINKED` also writes it to the URL
(``bind="query-params"``), so a reload (F5) or a link sent to a colleague restores the choice.

A link carries **names only** — the source, the corpus source and a configured corpus's name, the
ground-truth source and configured names, the presets, the retrievers, the BM25 token rule, the detail
pages' strategy and retriever, and (shared mode) the configured model and reranker names; the page is
the URL's path. ``history?record=N`` opens the History page on record N (:func:`ui.history.linked_record`: a
record this session may see, its series chosen once). Never a typed path, an upload, a store address, an endpoint or a question: those widgets
are :data:`KEPT` only. A value the link names that this dashboard does not offer (an unknown preset, a
corpus not in audit.toml, a typed model in shared mode) is dropped by Streamlit, and :func:`link_notice`
says which, once.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import streamlit as st

__all__ = ["KEPT", "LINKED", "link_notice"]

#: Kept for the session, never in the URL (typed paths, free text, a team's run names).
KEPT = {"persist_state": "session"}
#: Kept for the session and bound to the URL's query parameters (names only).
LINKED = {"persist_state": "session", "bind": "query-params"}

_SHOWN = "_link_notice_shown"  # session: the query strings already reported


def link_notice(offered: Mapping[str, Sequence[str]]) -> list[str]:
    """The link's values that are not offered here, as ``key=value`` strings; warned once per link in the sidebar.

    Parameters
    ----------
    offered : mapping of query-parameter key → the values this dashboard offers for it (the shared-mode
        allow-list: configured names only). Keys absent from the URL are not checked.

    Call it before the widgets are drawn: Streamlit removes an invalid value from the URL when it draws the
    bound widget, so it can be seen only before.
    """
    params = st.query_params
    dropped = []
    for key, allowed in offered.items():
        if key not in params:
            continue
        dropped += [f"{key}={v}" for v in params.get_all(key) if v != "" and v not in allowed]
    if dropped:
        seen = st.session_state.setdefault(_SHOWN, set())
        sig = tuple(dropped)
        if sig not in seen:
            seen.add(sig)
            from .text import md

            st.sidebar.warning(md("Not offered here, ignored from the link: " + ", ".join(dropped)))
    return dropped
