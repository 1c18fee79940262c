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

__all__ = ["DRAFT_KEY", "author_default", "belongs_elsewhere", "corpus_views", "draft", "in_use", "opened",
           "sidebar_files", "use_saved"]

#: Where the session's draft lives.
DRAFT_KEY = "_gt_draft"
#: What the sidebar chose when the draft was opened: ``{"id": sidebar_identity(...), "corpus": name}``.
OWNER_KEY = "_gt_draft_owner"


def corpus_views(corpus: Corpus) -> CorpusViews:
    """Every document's matching view for the checks, computed once per corpus (:func:`ui.cache.corpus_views`)."""
    return cache.corpus_views(corpus)


def sidebar_identity(corpus: Corpus) -> tuple:
    """What the draft follows: the sidebar's corpus (name and sha256) and its ground truth (files, or uploads by
    name and sha256; None when none is chosen)."""
    files = sidebar_files(corpus)
    if files:
        gt = ("files", *(str(p) if p else "" for p in files))
    elif st.session_state.get("gt_source") == "upload":
        gt = ("upload", *((u[0], cache.sha256_bytes(u[1])) if u else None
                          for u in (_uploaded("gt_file"), _uploaded("ood_file"))))
    else:
        gt = None
    return corpus.name, corpus.sha256, gt


def opened(corpus: Corpus, d: Draft | None = None) -> None:
    """Make ``d`` (or a reading of the sidebar's ground truth when None) this session's draft, opened while the
    sidebar chose ``corpus`` and its current ground truth: the draft follows the sidebar from there on."""
    st.session_state[OWNER_KEY] = {"id": sidebar_identity(corpus), "corpus": corpus.name}
    if d is None:
        opener, d = in_use(corpus), Draft()
        if opener is not None:
            try:
                d = opener[1]()
            except (GroundTruthError, OSError):  # the sidebar shows that error already; start empty
                d = Draft()
        st.session_state["gt_open_choice"] = "sidebar" if opener is not None else "new"  # the Open box says so
        st.session_state["gt_editing"] = None  # a needle of the draft left behind
    st.session_state[DRAFT_KEY] = d


def draft(documents: Corpus | None = None) -> Draft:
    """This session's draft. The first time: the ground truth in use over ``documents`` (:func:`in_use`, so that
    adding a needle and saving extends it, out-of-domain questions included, instead of replacing it), else a new,
    empty one.

    Given ``documents`` (the sidebar's corpus), the draft follows the sidebar: when its corpus or ground truth is no
    longer the one the draft was opened under, the draft is opened again from the sidebar's, unless it holds
    unsaved work (:func:`belongs_elsewhere` then says whose it is, for the page to offer the sidebar's).
    """
    ss = st.session_state
    if documents is not None and DRAFT_KEY in ss and not ss[DRAFT_KEY].unsaved \
            and (ss.get(OWNER_KEY) or {}).get("id") != sidebar_identity(documents):
        del ss[DRAFT_KEY]
    if DRAFT_KEY not in ss:
        if documents is None:
            ss[DRAFT_KEY] = Draft()
        else:
            opened(documents)
    return ss[DRAFT_KEY]


def belongs_elsewhere(corpus: Corpus) -> tuple[str, str] | None:
    """Why the draft (kept for its unsaved work) is not the sidebar's: ``("corpus", its corpus name)`` when it was
    opened over another corpus, ``("ground truth", "")`` when over another ground truth of this corpus; None when it
    follows the sidebar."""
    owner = st.session_state.get(OWNER_KEY)
    if not owner or DRAFT_KEY not in st.session_state:
        return None
    here = sidebar_identity(corpus)
    if owner["id"] == here:
        return None
    if owner["id"][:2] != here[:2]:
        return "corpus", owner["corpus"]
    return "ground truth", ""


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
