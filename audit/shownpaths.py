"""Paths as people see them: a path is shown and stored as its name under its allowed root (issue 54).

A leaf module (stdlib only), so every source, report and page can name a path without importing the
configuration: :func:`environment_roots` are the roots the environment sets (the working directory,
``$AUDIT_HOME``, the ``AUDIT_*`` paths, ``$AUDIT_ROOTS``); :func:`audit.config.allowed_roots` adds audit.toml's.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Mapping, Sequence

__all__ = ["PATH_VARIABLES", "display_path", "environment_roots", "shown_text"]

#: ``AUDIT_*`` variables that name a path the operator chose (trusted as allowed roots).
PATH_VARIABLES = ("AUDIT_CORPUS", "AUDIT_GROUND_TRUTH", "AUDIT_OUT_OF_DOMAIN", "AUDIT_MODEL", "AUDIT_RERANKER")


def environment_roots(env: Mapping[str, str] | None = None, cwd: str | Path | None = None) -> list[Path]:
    """The allowed roots the environment sets, unresolved: the working directory, ``$AUDIT_HOME`` (default
    ``.audit``), every ``AUDIT_*`` path variable naming an existing path, each entry of ``$AUDIT_ROOTS``.

    Parameters
    ----------
    env : the environment (default ``os.environ``).
    cwd : the working directory (default the process's).

    Returns
    -------
    list of Path
        The candidate roots, in that order (absolute when ``cwd`` is).
    """
    env = os.environ if env is None else env
    cwd = Path.cwd() if cwd is None else Path(cwd)
    cands: list[Path] = [cwd, cwd / (env.get("AUDIT_HOME") or ".audit")]
    for var in PATH_VARIABLES:
        v = env.get(var)
        if v and (cwd / v).exists():
            cands.append(cwd / v)
    cands += [cwd / r for r in (env.get("AUDIT_ROOTS") or "").split(os.pathsep) if r.strip()]
    return cands


def display_path(path: str | Path | None, roots: Sequence[Path] | None = None, env: Mapping[str, str] | None = None,
                 cwd: str | Path | None = None) -> str:
    """A path as pages, records and forwarded files show it: its name relative to its allowed root.

    A server path is never shown: an absolute path under an allowed root (``roots``, default :func:`environment_roots`; the deepest
    one that holds it) becomes its path relative to that root (the root itself: its own name); one under no
    root becomes its last name. A relative path or a plain name (``python-reference``) is kept as given.

    Parameters
    ----------
    path : the path as read or typed (None or empty gives "").
    roots : the resolved allowed roots (:func:`audit.config.allowed_roots`); default :func:`environment_roots`.
    env, cwd : as :func:`environment_roots` (when ``roots`` is not given).

    Returns
    -------
    str
        The name to show, with ``/`` between its parts.
    """
    if path is None or str(path) == "":
        return ""
    p = Path(str(path)).expanduser()
    if not p.is_absolute():
        return str(path)
    try:
        real = p.resolve()
    except OSError:
        real = p
    best: Path | None = None
    for r in ([c.expanduser().resolve() for c in environment_roots(env, cwd)] if roots is None else roots):
        for cand in ((real, r), (p, r)):
            if cand[0] == cand[1] or cand[1] in cand[0].parents:
                if best is None or len(r.parts) > len(best.parts):
                    best = r
                break
    if best is None:
        return p.name
    rel = (real if (real == best or best in real.parents) else p).relative_to(best)
    return best.name if str(rel) in ("", ".") else rel.as_posix()


def shown_text(text: str, roots: Sequence[Path] | None = None, env: Mapping[str, str] | None = None,
               cwd: str | Path | None = None) -> str:
    """``text`` (an error message, a note) with every server path under an allowed root written as
    :func:`display_path` writes it: ``corpus folder '/srv/app/data/x' does not exist`` reads
    ``corpus folder 'data/x' does not exist``.

    A root's own path followed by ``/`` is dropped (the deepest root first); the root alone becomes its name. A path
    under no root is left as it is (this function cannot tell it from other text).

    Parameters
    ----------
    text : any text.
    roots, env, cwd : as :func:`display_path`.

    Returns
    -------
    str
        ``text`` unchanged when it names no root.
    """
    if "/" not in text and os.sep not in text:
        return text
    rs = [c.expanduser().resolve() for c in environment_roots(env, cwd)] if roots is None else list(roots)
    for r in sorted({*rs, *(Path(os.path.abspath(c)) for c in rs)}, key=lambda r: -len(str(r))):
        root = str(r)
        if root in ("", "/") or root not in text:
            continue
        text = re.sub(re.escape(root) + r"(?:/|(?![\w-]|\.\w))",
                      lambda m: "" if m.group(0).endswith("/") else (r.name or root), text)
    return text
