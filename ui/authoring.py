"""The Ground truth page's Streamlit side: the session's draft, the cached corpus views, the sidebar hand-off.

The rules live in :mod:`audit.authoring`; this module only keeps state: the draft being written
(``st.session_state``, one per browser session: another session never sees it), the corpus views
(cached in :mod:`ui.cache`, once per corpus; an upload's corpus carries its session in its name),
which files the sidebar's ground truth comes from, and :func:`use_saved`, which points the sidebar
at a saved ground truth so that every page uses it on the next run.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Callable

import streamlit as st

from audit.authoring.checks import CorpusViews
from audit.authoring.draft import Draft, Opened, Target, open_draft
from audit.config import PathRefused
from audit.groundtruth import BUILTIN_DATA, GroundTruthError
from audit.ingest import BUILTIN_CORPUS, Corpus

from . import cache, paths

__all__ = ["DRAFT_KEY", "author_default", "corpus_views", "draft", "in_use", "sidebar_files", "use_saved"]

#: Where the session's draft lives.
DRAFT_KEY = "_gt_draft"


def corpus_views(corpus: Corpus) -> CorpusViews:
    """Every document's matching view for the checks, computed once per corpus (:func:`ui.cache.corpus_views`)."""
    return cache.corpus_views(corpus)


def draft(documents: Corpus | None = None) -> Draft:
    """This session's draft. The first time: the ground truth in use over ``documents`` (:func:`in_use`, so that
    adding a needle and saving extends it, out-of-domain questions included, instead of replacing it), else a new,
    empty one."""
    if DRAFT_KEY not in st.session_state:
        opener = None if documents is None else in_use(documents)
        d = Draft()
        if opener is not None:
            try:
                d = opener[1]()
            except (GroundTruthError, OSError):  # the sidebar shows that error already; start empty
                d = Draft()
        st.session_state[DRAFT_KEY] = d
    return st.session_state[DRAFT_KEY]


def _uploaded(key: str) -> tuple[str, bytes] | None:
    """``(name, bytes)`` of the sidebar's upload under ``key`` this run, or None."""
    f = st.session_state.get(key)
    return (f.name, f.getvalue()) if f is not None and hasattr(f, "getvalue") else None


def in_use(corpus: Corpus) -> tuple[str, Callable[[], Draft]] | None:
    """The ground truth every page uses now, as ``(label, open it as a draft)``, or None (none chosen).

    Files (built-in, on disk, configured) open with their sha256 remembered, so saving over them is checked;
    uploads open from their bytes as a draft opened from no file (saving writes a new file under
    ``$AUDIT_HOME``; the upload itself is never changed).
    """
    files = sidebar_files(corpus)
    if files:
        return "The ground truth in use (" + ", ".join(p.name for p in files if p) + ")", lambda: open_draft(*files)
    if st.session_state.get("gt_source") != "upload":
        return None
    gt, ood = _uploaded("gt_file"), _uploaded("ood_file")
    if not (gt or ood):
        return None

    def read() -> Draft:
        with tempfile.TemporaryDirectory() as tmp:
            written = []
            for up, stem in ((gt, "needles.jsonl"), (ood, "ood.txt")):
                if up is None:
                    written.append(None)
                    continue
                p = Path(tmp) / stem
                p.write_bytes(up[1])
                written.append(p)
            d = open_draft(*written)
        d.opened = Opened()  # from an upload: no file on disk to save over
        return d

    return "The ground truth in use (" + ", ".join(u[0] for u in (gt, ood) if u) + ", uploaded)", read


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
