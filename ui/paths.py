"""The deployment's configuration as the pages see it, and every path a user types or picks.

:func:`config` reads ``audit.toml`` (:func:`audit.config.load_config`) once per script run;
:func:`user_path` resolves a typed path through the allowed roots; :func:`pick_index` is the one
way a page asks for an index database (a typed path in single-user mode, a configured name in
shared mode); :func:`writable_index` says whether "Retry failed documents" may write to it.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from audit.config import Config, ConfigError, PathRefused, allowed_roots, is_allowed, load_config, resolve_user_path

__all__ = ["config", "pick_index", "shared", "user_path", "writable_index"]

_RUN_KEY = "_audit_config"


def config() -> Config:
    """The configuration (``$AUDIT_CONFIG`` or ``./audit.toml``); a broken file stops the script with its error."""
    try:
        return load_config()
    except ConfigError as e:
        from .text import md

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
    ``[indexes]`` names (no typed path). Single-user mode: a text input resolved through the allowed
    roots; a refused path shows the reason and returns None.
    """
    cfg = config()
    if cfg.shared:
        choices = {"this corpus's index": str(default), **cfg.indexes}
        names = ([""] if optional else []) + list(choices)
        name = st.selectbox(label, names, key=key, format_func=lambda n: n or "(choose)")
        return Path(choices[name]) if name else None
    if key not in st.session_state:
        st.session_state[key] = "" if optional else str(default)
    text = st.text_input(label, key=key, help="A path under the working directory, $AUDIT_HOME or a folder the "
                                              "operator allowed (AUDIT_ROOTS).")
    if not text.strip():
        return None
    try:
        return user_path(text, label.lower())
    except PathRefused as e:
        st.error(str(e))
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
