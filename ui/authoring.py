"""The Ground truth page's Streamlit side: the session's draft, the cached corpus views, the sidebar hand-off.

The rules live in :mod:`audit.authoring`; this module only keeps state: the draft being written
(``st.session_state``, one per browser session: another session never sees it), the corpus views
(cached in :mod:`ui.cache`, once per corpus; an upload's corpus carries its session in its name),
which files the sidebar's ground truth comes from, and :func:`use_saved`, which points the sidebar
at a saved ground truth so that every page uses it on the next run.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from audit.authoring.checks import CorpusViews
from audit.authoring.draft import Draft, Target
from audit.config import PathRefused
from audit.groundtruth import BUILTIN_DATA
from audit.ingest import BUILTIN_CORPUS, Corpus

from . import cache, paths

__all__ = ["DRAFT_KEY", "author_default", "corpus_views", "draft", "sidebar_files", "use_saved"]

#: Where the session's draft lives.
DRAFT_KEY = "_gt_draft"


def corpus_views(corpus: Corpus) -> CorpusViews:
    """Every document's matching view for the checks, computed once per corpus (:func:`ui.cache.corpus_views`)."""
    return cache.corpus_views(corpus)


def draft() -> Draft:
    """This session's draft (a new, empty one the first time)."""
    if DRAFT_KEY not in st.session_state:
        st.session_state[DRAFT_KEY] = Draft()
    return st.session_state[DRAFT_KEY]


def sidebar_files(corpus: Corpus) -> tuple[Path | None, Path | None] | None:
    """``(needles file, out-of-domain file)`` the sidebar's ground truth comes from, or None (uploads, none).

    A typed path goes through the allowed roots; a refused one gives None.
    """
    src = st.session_state.get("gt_source")
    if src == "builtin":
        if corpus.name != BUILTIN_CORPUS:
            return None
        return BUILTIN_DATA / "groundtruth.jsonl", BUILTIN_DATA / "out_of_domain.txt"
    if src == "file":
        try:
            g = (st.session_state.get("gt_path") or "").strip()
            o = (st.session_state.get("ood_path") or "").strip()
            files = (paths.user_path(g, "ground truth") if g else None,
                     paths.user_path(o, "out-of-domain queries") if o else None)
        except PathRefused:
            return None
        return files if any(files) else None
    if src == "named":
        cfg = paths.config()
        g, o = cfg.ground_truths.get(st.session_state.get("gt_name") or ""), cfg.out_of_domain.get(
            st.session_state.get("ood_name") or "")
        return (Path(g) if g else None, Path(o) if o else None) if (g or o) else None
    return None


def use_saved(target: Target) -> None:
    """Point the sidebar's ground truth at ``target`` (call from a widget callback, before the next run draws it).

    A file under ``$AUDIT_HOME`` becomes "files on disk" with its two paths; a configured name becomes
    "configured files" with that name. The cache keys of the sidebar hold each file's sha256, so the
    next run reads the saved files and every page uses them.
    """
    kind, _, name = target.key.partition(":")
    if kind == "named":
        cfg = paths.config()
        st.session_state["gt_source"] = "named"
        st.session_state["gt_name"] = name
        st.session_state["ood_name"] = name if name in cfg.out_of_domain else ""
    else:
        st.session_state["gt_source"] = "file"
        st.session_state["gt_path"] = str(target.gt_path)
        st.session_state["ood_path"] = str(target.ood_path) if target.ood_path else ""


def author_default() -> str:
    """The signed-in user's e-mail (shared mode with sign-in), else ""."""
    try:
        if getattr(st.user, "is_logged_in", False):
            return str(st.user.get("email") or "")
    except Exception:  # st.user needs a sign-in configuration; without one there is no author to read
        return ""
    return ""
