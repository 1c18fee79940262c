"""The Streamlit side of the dashboard: cached builders, the page context, the sidebar, one table helper.

- :mod:`ui.cache` — every ``st.cache_*`` wrapper (models, corpora, ground truth, the built run,
  per-page derived tables) and :class:`~ui.cache.RunKey`;
- :mod:`ui.context` — :class:`~ui.context.PageContext`, what the sidebar hands every page;
  :func:`~ui.context.context`, :func:`~ui.context.footer`, :func:`~ui.context.stop`;
- :mod:`ui.sidebar` — the sidebar (corpus, ground truth, strategies, retrievers, models, build, focus);
- :mod:`ui.tables` — :func:`~ui.tables.table`, a table with column help and its CSV download;
- :mod:`ui.live` — a typed query run now; :mod:`ui.progress` — the build's progress bar;
- :mod:`ui.paths` — audit.toml and the allowed roots as pages use them; :mod:`ui.session` — a
  session's own uploads, index and threshold; :mod:`ui.access` — the sign-in gate;
  :mod:`ui.text` — :func:`~ui.text.md`, data escaped for Markdown; :mod:`ui.authoring` — the Ground truth
  page's draft (per session) and the hand-off of a saved ground truth to the sidebar.

Pages import from here; nothing in ``audit/`` imports this package.
"""

from .context import CTX_KEY, PageContext, context, footer, stop
from .live import live_search
from .tables import download, table

__all__ = ["CTX_KEY", "PageContext", "context", "download", "footer", "live_search", "stop", "table"]
