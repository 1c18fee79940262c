"""Counts and durations in sentences, one rule each: ``1 bluff``, ``2 bluffs``; ``38 ms``, ``1.2 s``, ``3 min 05 s``.

Every sentence the text report, the CLI and the pages print with a count goes through
:func:`plural`, and every elapsed time through :func:`duration`, so "1 documents failed" and
"in 0.0 s" (a run under 50 ms printed to one decimal of a second) cannot come back.
"""

from __future__ import annotations

import math

__all__ = ["duration", "format_p", "plural"]

#: Nouns whose plural is not the singular + "s" (the project's own words).
IRREGULAR = {"query": "queries", "entry": "entries", "index": "indexes", "match": "matches", "batch": "batches"}


def plural(n: int, singular: str, plural_form: str | None = None) -> str:
    """``n`` and the noun agreeing with it: ``plural(1, "bluff")`` → ``1 bluff``, ``plural(0, …)`` → ``0 bluffs``.

    Parameters
    ----------
    n : int
        The count (English: singular for exactly 1, plural otherwise, 0 included).
    singular : str
        The noun, or the first word of a phrase (``"document"`` → ``1 document`` / ``3 documents``).
    plural_form : str, optional
        The plural when it is not :data:`IRREGULAR`'s or the singular + ``s``.

    Returns
    -------
    str
        ``f"{n:,} {noun}"`` (thousands separated: ``1,252 chunks``).
    """
    noun = singular if n == 1 else (plural_form or IRREGULAR.get(singular, singular + "s"))
    return f"{n:,} {noun}"


def duration(seconds: float) -> str:
    """An elapsed time at a precision that says something: ``38 ms``, ``0.42 s``, ``1.2 s``, ``25 s``, ``3 min 05 s``.

    Under 0.1 s: whole milliseconds (``0 ms`` only under half a millisecond); under 10 s: two
    significant digits; under a minute: whole seconds; then minutes and seconds (hours beyond).

    Parameters
    ----------
    seconds : float
        Wall-clock seconds, ≥ 0 (NaN or negative → ``"—"``).

    Returns
    -------
    str
    """
    if not isinstance(seconds, (int, float)) or math.isnan(seconds) or seconds < 0:
        return "—"
    if seconds < 0.1:
        return f"{seconds * 1000:.0f} ms"
    if seconds < 10:
        return f"{seconds:.2g} s" if seconds < 1 else f"{seconds:.1f} s"
    if seconds < 59.5:
        return f"{seconds:.0f} s"
    m, s = divmod(int(round(seconds)), 60)
    if m < 60:
        return f"{m} min {s:02d} s"
    h, m = divmod(m, 60)
    return f"{h} h {m:02d} min"


def format_p(p: float) -> str:
    """A p-value for display: 4 decimals, or ``<0.0001`` (every table, page and gate message prints p this way)."""
    return "<0.0001" if p < 0.0001 else f"{p:.4f}"
