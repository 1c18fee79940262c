"""The matching view: how a needle is found in a text, and where it sits in the original.

Both sides are compared with runs of whitespace collapsed to one space, and an offset map leads
back to the original characters (docs/definitions.md, *Matching view*). Ground-truth validation,
correct retrieval and every highlight use these functions.
"""

from __future__ import annotations

import re

__all__ = ["collapse", "collapse_with_map", "find_collapsed", "occurrences"]


_WS = re.compile(r"\s+")


def collapse(text: str) -> str:
    """Runs of whitespace → one space, stripped."""
    return _WS.sub(" ", text).strip()


def collapse_with_map(text: str) -> tuple[str, list[int]]:
    """Collapse whitespace runs to one space (not stripped) and keep a map.

    Returns ``(collapsed, origin)`` where ``origin[i]`` is the offset in
    ``text`` of collapsed character ``i`` (a run maps to its first character)
    and ``origin[len(collapsed)] == len(text)``.
    """
    parts, origin = [], []
    pos = 0
    for m in _WS.finditer(text):
        s, e = m.span()
        parts.append(text[pos:s])
        origin.extend(range(pos, s))
        parts.append(" ")
        origin.append(s)
        pos = e
    parts.append(text[pos:])
    origin.extend(range(pos, len(text)))
    origin.append(len(text))
    return "".join(parts), origin


def occurrences(hay: str, needle: str) -> list[int]:
    out, i = [], hay.find(needle)
    while i != -1:
        out.append(i)
        i = hay.find(needle, i + 1)
    return out


def find_collapsed(text: str, needle: str) -> tuple[int, int] | None:
    """Character range ``[start, end)`` of ``needle`` in ``text``, whitespace runs compared collapsed.

    The rule of a correct retrieval: both sides with runs of
    whitespace collapsed to one space. ``None`` when absent or empty.
    """
    key = collapse(needle)
    if not key:
        return None
    cm, origin = collapse_with_map(text)
    i = cm.find(key)
    if i < 0:
        return None
    return int(origin[i]), int(origin[i + len(key) - 1]) + 1
