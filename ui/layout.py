"""Rows that fit the window: cells side by side that wrap onto the next line instead of cutting their labels.

``st.columns(n)`` divides the width by ``n`` whatever the contents need: at 800 px, five metrics
read "Abando…" twice and a button in a quarter-width column reads "Save this th…". :func:`cells`
puts ``n`` containers in one horizontal row that wraps (``st.container(horizontal=True,
wrap=True)``): a cell that would fall below Streamlit's minimum width for a stretched element
moves to the next line, so the page keeps every label whole at any width. Labels still have to be
short (a metric label of about 18 characters with its help icon fits the narrowest cell); the long
form goes in ``help=``.
"""

from __future__ import annotations

from typing import Literal

import streamlit as st

__all__ = ["NARROW_PX", "cells", "collapse_sidebar_when_narrow"]

#: Below this window width (CSS px) the sidebar starts collapsed: at 800 px it took a third of the page.
#: Streamlit's own ``initial_sidebar_state="auto"`` collapses it only at 768 px and below.
NARROW_PX = 1000

_COLLAPSE = """<script>
(function () {
  // once per page load (a reload collapses it again; opening it stays open while the page lives)
  if (window.innerWidth >= %d || window.__auditSidebarCollapsed) return;
  window.__auditSidebarCollapsed = true;
  var tries = 0;
  var t = setInterval(function () {
    var bar = document.querySelector('[data-testid="stSidebar"]');
    var btn = document.querySelector('[data-testid="stSidebarCollapseButton"] button');
    if (bar && btn && bar.getBoundingClientRect().width > 50) {
      btn.click();
      // Streamlit remembers a collapse in localStorage: forget it, so a wide window opens the sidebar again
      setTimeout(function () {
        for (var i = localStorage.length - 1; i >= 0; i--) {
          var k = localStorage.key(i);
          if (k && k.indexOf("stSidebarCollapsed-") === 0) localStorage.removeItem(k);
        }
      }, 300);
      clearInterval(t);
    }
    if (++tries > 100) clearInterval(t);
  }, 100);
})();
</script>"""


def cells(n: int, fit: Literal["stretch", "content"] = "stretch") -> list:
    """``n`` containers side by side, wrapping onto the next line when the row is too narrow.

    Used as ``st.columns(n)`` is (``m = cells(5); m[0].metric(...)``).

    Parameters
    ----------
    n : int
        Number of cells, at least 1.
    fit : {"stretch", "content"}
        ``"stretch"``: the cells share the row's width equally (metrics); ``"content"``: each cell is
        as wide as what it holds (a button with a note beside it).

    Raises
    ------
    ValueError
        ``n`` below 1 or an unknown ``fit``.
    """
    if n < 1:
        raise ValueError(f"cells needs at least one cell, got {n}")
    if fit not in ("stretch", "content"):
        raise ValueError(f"fit must be 'stretch' or 'content', got {fit!r}")
    row = st.container(horizontal=True, wrap=True, gap="medium")
    return [row.container(width=fit) for _ in range(n)]


def collapse_sidebar_when_narrow() -> None:
    """Collapse the sidebar once per page load when the window is narrower than :data:`NARROW_PX`.

    The user can open it again with its arrow and it stays open while the page lives (moving between pages
    is no reload); Streamlit's remembered collapse is forgotten, so a wide window opens it again. A fixed script
    of this module (no data in it), run by ``st.html`` in the page; it draws nothing.
    """
    st.html(_COLLAPSE % NARROW_PX, unsafe_allow_javascript=True)
