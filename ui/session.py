"""What belongs to one browser session: its uploads' folder, index file and saved threshold.

A session that uploads files gets ``$AUDIT_HOME/sessions/<session id>/``: the uploads' index
(``index-upload.sqlite``, with its own embedding table: nothing goes to the shared
``cache.sqlite``) and the threshold it saves. The corpus built from the uploads is named
:data:`UPLOAD_NAME`, the same in every session: the name is shown (provenance line, history series), so it
carries no session id, and a re-upload of the same files continues the same history series. What keeps a
session's uploads its own is where they live (``st.session_state``, the session's folder), not their name;
two sessions' cache keys differ whenever their files do (the corpus sha256 is in every key).
:func:`sweep` removes the folders of sessions that ended or were idle longer than the configured
``ttl_minutes``; it runs at the start of every script run.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import streamlit as st

from audit.home import default_home, default_index_path

__all__ = ["UPLOAD_NAME", "active_sessions", "folder", "index_path", "is_upload", "session_id", "sweep",
           "threshold_file", "threshold_path"]

#: The corpus name of a session's uploads (no session id: it is shown).
UPLOAD_NAME = "uploaded files"


def session_id() -> str:
    """This browser session's id (Streamlit's own; ``"local"`` outside a script run)."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    return ctx.session_id if ctx is not None else "local"


def sessions_root() -> Path:
    """``$AUDIT_HOME/sessions``."""
    return default_home() / "sessions"


def folder(create: bool = True) -> Path:
    """This session's own folder (created, and its last-use time refreshed, when ``create``)."""
    p = sessions_root() / session_id()
    if create:
        p.mkdir(parents=True, exist_ok=True)
        p.touch()
    return p


def upload_corpus_name() -> str:
    """The name a session's uploaded corpus gets (:data:`UPLOAD_NAME`)."""
    return UPLOAD_NAME


def is_upload(corpus_name: str) -> bool:
    """Whether ``corpus_name`` is a session's uploaded corpus."""
    return corpus_name == UPLOAD_NAME


def index_path(corpus_name: str) -> Path:
    """The index file of a corpus: the session's own for uploads, ``default_index_path`` otherwise."""
    return folder() / "index-upload.sqlite" if is_upload(corpus_name) else default_index_path(corpus_name)


def threshold_path(corpus_name: str) -> Path | None:
    """Where a threshold is saved and read: the session's folder for uploads, None (the default file) otherwise."""
    return folder() / "threshold.json" if is_upload(corpus_name) else None


def threshold_file(runset) -> Path | None:
    """The saved-threshold file of ``runset`` in this session: its own for uploads, else None
    (``$AUDIT_HOME/threshold.json``, :func:`audit.evaluation.saved_cut.threshold_file`)."""
    c = runset.corpus
    return threshold_path(c.name) if c is not None else None


def active_sessions() -> set[str] | None:
    """Ids of the sessions the server holds now, or None when that cannot be known (e.g. under AppTest)."""
    try:
        from streamlit.runtime import Runtime

        if not Runtime.exists():
            return None
        return {s.session.id for s in Runtime.instance()._session_mgr.list_sessions()}
    except Exception:  # a private API: when it moves, fall back on the age limit alone
        return None


def sweep(root: Path, active: set[str] | None, ttl_s: float, now: float | None = None,
          keep: str | None = None) -> list[str]:
    """Remove the session folders under ``root`` that ended or aged out; returns the removed ids.

    A folder goes when its session is not in ``active`` (when known) or when it was last used more
    than ``ttl_s`` seconds before ``now``; ``keep`` (the calling session) always stays.
    """
    now = time.time() if now is None else now
    removed = []
    if not root.is_dir():
        return removed
    for p in root.iterdir():
        if not p.is_dir() or p.name == keep:
            continue
        ended = active is not None and p.name not in active
        if ended or now - p.stat().st_mtime > ttl_s:
            shutil.rmtree(p, ignore_errors=True)
            removed.append(p.name)
    return sorted(removed)


def sweep_now(ttl_s: float) -> None:
    """:func:`sweep` of ``$AUDIT_HOME/sessions``, at most once a minute for each session."""
    last = st.session_state.get("_sessions_swept", 0.0)
    if time.time() - last < 60:
        return
    st.session_state["_sessions_swept"] = time.time()
    sweep(sessions_root(), active_sessions(), ttl_s, keep=session_id())
