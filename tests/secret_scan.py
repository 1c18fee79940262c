"""The test suite's secrets and the scan that proves none of them reaches an output.

Every secret a test hands to the code under test (a header value, a token, a password) is registered with
:func:`secret` (``SECRET = secret("tok-…")`` at module level, before any test runs). ``tests/conftest.py`` then
looks for each of them, in every shape a service may send it back in (:func:`shapes`), in

- what a test reads from ``capsys`` / ``capfd`` (``readouterr``), at once;
- the output pytest captured for each test phase (stdout, stderr, log records), after the phase;
- every file under each test's ``tmp_path`` after the test, and under the session's base temporary folder at the
  session's end (``tmp_path_factory`` folders of module fixtures too): reports, JSON, logs, and history databases
  (SQLite: every value of every table, the zlib-compressed record bodies decompressed).

A configuration file (``*.toml``) is what the test gave, not what the audit wrote: it may hold a literal secret
and is not scanned. Files over :data:`MAX_BYTES` are not read (no test writes one that holds text).
The scan is written independently of :mod:`audit.secrets` (plain substring search of the bytes), so a redaction
that misses a shape cannot also hide it from the test.
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import quote

#: The registered secrets (whole values as configured).
SECRETS: set[str] = set()

#: Files larger than this are not scanned, bytes.
MAX_BYTES = 64 * 1024 * 1024

#: What a test gives the audit (its configuration), never an output.
INPUT_SUFFIXES = (".toml",)

_SCHEMES = ("bearer ", "basic ", "token ")


def secret(value: str) -> str:
    """Register ``value`` as a test secret (see the module docstring) and return it."""
    SECRETS.add(value)
    return value


def shapes(secrets=None) -> set[str]:
    """Each secret, its credential without an authorization scheme, and both percent-encoded."""
    out = set()
    for s in SECRETS if secrets is None else secrets:
        base = {s}
        if s.lower().startswith(_SCHEMES):
            base.add(s.split(" ", 1)[1].strip())
        out |= {f for b in base for f in (b, quote(b, safe=""))}
    return {f for f in out if len(f) >= 4}


def leaks_in_text(text: str, secrets=None) -> list[str]:
    """The shapes of secrets that occur in ``text`` (sorted)."""
    return sorted(f for f in shapes(secrets) if f in text)


def leaks_in_tree(root: Path, secrets=None, seen: set | None = None) -> list[str]:
    """``path: shape`` for every file under ``root`` holding a shape of a secret (configuration files aside);
    ``seen`` (resolved paths already scanned) is skipped and updated."""
    found = []
    forms = [(f, f.encode("utf-8")) for f in sorted(shapes(secrets))]
    if not forms or not root.exists():
        return found
    for dirpath, _, files in os.walk(root):
        for name in files:
            p = Path(dirpath, name)
            if p.suffix in INPUT_SUFFIXES or p.is_symlink():
                continue
            key = str(p.resolve())
            if seen is not None:
                if key in seen:
                    continue
                seen.add(key)
            try:
                if p.stat().st_size > MAX_BYTES:
                    continue
                data = p.read_bytes()
            except OSError:
                continue
            if data.startswith(b"SQLite format 3\x00"):  # a history database: its records are zlib-compressed
                data += _sqlite_values(p)
            found += [f"{p}: {f!r}" for f, b in forms if b in data]
    return found


def _sqlite_values(path: Path) -> bytes:
    """Every value of every table of the SQLite file, zlib-compressed ones decompressed, joined (read-only)."""
    import sqlite3

    from audit.history.store import HistoryError, body_text

    out = []
    try:
        con = sqlite3.connect(f"file:{quote(str(path))}?mode=ro", uri=True)
    except sqlite3.Error:
        return b""
    try:
        tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        for t in tables:
            for row in con.execute(f'SELECT * FROM "{t}"'):
                for v in row:
                    if isinstance(v, bytes):
                        try:  # a history record's body: its JSON, or its JSON part and the ids its columns hold
                            out.append(body_text(v).encode("utf-8"))
                        except HistoryError:
                            out.append(v)
                    elif isinstance(v, str):
                        out.append(v.encode("utf-8"))
    except sqlite3.Error:
        pass
    finally:
        con.close()
    return b"\n".join(out)
