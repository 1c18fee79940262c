"""The Streamlit side of the dashboard: the sidebar builds one run set, every page draws its view-model.

- :mod:`ui.sidebar` — the sidebar: the source (built-in pipelines, a team's files, a live store, a live
  endpoint), its inputs, the run the detail pages show; it leaves one :class:`~ui.context.PageContext`;
- :mod:`ui.context` — :class:`~ui.context.PageContext` (the :class:`~audit.runset.RunSet`, its results,
  the models, the store it was read from and what it offers); :func:`~ui.context.context`, :func:`~ui.context.footer`,
  :func:`~ui.context.stop`; :mod:`ui.focus` — :func:`~ui.focus.focus_run`, the run the detail pages show;
- the sources' sidebar parts: :mod:`ui.files_source`, :mod:`ui.store_source`, :mod:`ui.endpoint_source`,
  and production traffic beside any of them, :mod:`ui.traffic`;
- :mod:`ui.cache` — every ``st.cache_*`` wrapper (models, corpora, ground truth, the built run set,
  results and per-page derived tables keyed on the run set's digest) and :class:`~ui.cache.RunKey`;
- :mod:`ui.threshold` — the cut every page applies under the one saved-threshold rule, its slider, the saved
  cut's note; :mod:`ui.record` — "Download this audit", the decision record built when pressed;
  :mod:`ui.charts` — every chart, one palette (Okabe–Ito); :mod:`ui.notices` — the run set's warnings;
  :mod:`ui.health` — Index health's store, its read, retry and preview model; :mod:`ui.diff` — the one drawing of an
  Upgrade diff (Upgrade diff and History pages); :mod:`ui.history` — each audit recorded once per session
  and configuration, and which records a session may see;
- :mod:`ui.tables` — :func:`~ui.tables.table`, a table with column help and its CSV download;
- :mod:`ui.live` — a typed query run now; :mod:`ui.progress` — the build's progress bar;
- :mod:`ui.paths` — audit.toml and the allowed roots as pages use them; :mod:`ui.session` — a
  session's own uploads, index and saved-threshold file; :mod:`ui.access` — the sign-in gate;
  :mod:`ui.text` — :func:`~ui.text.md`, data escaped for Markdown; :mod:`ui.authoring` — the Ground truth
  page's draft (per session) and the hand-off of a saved ground truth to the sidebar.

Pages import from here; nothing in ``audit/`` imports this package.
"""

from .context import CTX_KEY, PageContext, context, footer, stop
from .live import live_search
from .tables import download, table

__all__ = ["CTX_KEY", "PageContext", "context", "download", "footer", "live_search", "stop", "table"]
