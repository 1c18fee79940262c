"""The deployment's configuration as the pages see it, and every path a user types or picks.

:func:`config` reads ``audit.toml`` (:func:`audit.config.load_config`) once per script run;
:func:`user_path` resolves a typed path through the allowed roots; :func:`pick_index` is the one
way a page asks for an index database (a typed path in single-user mode, relative ones taken from
``$AUDIT_HOME``; a configured name in shared mode) and :func:`open_index` the one way it opens one
for reading; :func:`writable_index` says whether "Retry failed documents" may write to it.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from audit.config import Config, ConfigError, PathRefused, allowed_roots, is_allowed, load_config, resolve_user_path
from audit.home import default_home
from audit.index import IndexStore, IndexUnusable

from .text import md

__all__ = ["config", "index_path", "open_index", "pick_index", "shared", "user_path", "writable_index"]

_RUN_KEY = "_audit_config"


def config() -> Config:
    """The configuration (``$AUDIT_CONFIG`` or ``./audit.toml``); a broken file stops the script with its error."""
    try:
        return load_config()
    except ConfigError as e:
        st.error(f"The dashboard's configuration cannot be used: {md(e)}", icon=":material/error:")
        st.stop()


def shared() -> bool:
    """Whether the dashboard runs in shared mode (``shared = true`` in audit.toml)."""
    return config().shared


def user_path(text: str, what: str) -> Path:
    """``text`` resolved (links included) under an allowed root. Raises PathRefused naming the knob."""
    return resolve_user_path(text, what, config=config())


def pick_index(label: str, key: str, default: Path, optional: bool = False) -> Path | None:
    """Ask for an index database: its resolved path, or None when nothing is chosen.

    Shared mode: a select box of this corpus's index (``default``) and the configuration's
    ``[indexes]`` names (no typed path). Single-user mode: a text input left empty for this corpus's own
    index (``default``, which follows the sidebar's corpus: switching corpus switches the index; the page never
    prints where the dashboard keeps it, nor a session's folder), or None when ``optional``; a typed relative
    path is taken from ``$AUDIT_HOME`` (:func:`index_path`), then resolved through the allowed roots; a refused
    path shows the reason and returns None.
    """
    cfg = config()
    if cfg.shared:
        choices = {"this corpus's index": str(default), **cfg.indexes}
        names = ([""] if optional else []) + list(choices)
        name = st.selectbox(label, names, key=key, format_func=lambda n: n or "(choose)")
        return Path(choices[name]) if name else None
    text = st.text_input(label, key=key, placeholder="an index file" if optional else "this corpus's own index",
                         help=("Empty: none. " if optional else "Empty: the index the dashboard keeps for the "
                               "sidebar's corpus. ") + "Or a file name (taken from the dashboard's folder, "
                               "$AUDIT_HOME), or an absolute path under the working directory, $AUDIT_HOME or a "
                               "folder allowed with AUDIT_ROOTS.")
    if not text.strip():
        return None if optional else default
    try:
        return index_path(text, label.lower())
    except PathRefused as e:
        st.error(md(str(e)))
        return None


def index_path(text: str, what: str) -> Path:
    """A typed index path: ``~`` expanded, a relative one taken from ``$AUDIT_HOME`` (not the working directory),
    then :func:`user_path`. Raises PathRefused (outside every allowed root, or empty)."""
    raw = (text or "").strip()
    p = Path(raw).expanduser()
    if raw and not p.is_absolute():
        p = default_home().resolve() / p
    return user_path(str(p) if raw else raw, what)


def open_index(path: Path) -> IndexStore | None:
    """``path`` opened read-only (:meth:`audit.index.IndexStore.open_readonly`), or None after one clear error
    message on the page (missing, not SQLite, damaged, not an index, unreadable): never a traceback."""
    try:
        return IndexStore.open_readonly(path, cache_paths=(default_home() / "cache.sqlite",))
    except IndexUnusable as e:
        st.error(md(str(e)), icon=":material/error:")
        return None


def writable_index(path: Path, own: tuple[Path, ...] = ()) -> bool:
    """Whether the dashboard may write to the index at ``path`` ("Retry failed documents").

    Yes for one of ``own`` (the index the dashboard itself builds for the session's corpus), an
    index named in the configuration's ``[indexes]``, or, in single-user mode, one under an allowed root.
    """
    cfg = config()
    real = path.resolve()
    if any(real == p.resolve() for p in own):
        return True
    if any(real == Path(p).resolve() for p in cfg.indexes.values()):
        return True
    return not cfg.shared and is_allowed(real, allowed_roots(cfg))
