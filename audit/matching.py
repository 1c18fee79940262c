"""The matching view: how a needle is found in a text, and where it sits in the original.

The view of a text is its NFC normalisation, with every character of Unicode category ``Cf``
(soft hyphen, zero-width space, BOM...) removed, then every run of whitespace collapsed to one
space (docs/definitions.md, *Matching view*). Each view character keeps the range of original
characters it stands for, so a match in the view is a range of the original text. Ground-truth
validation, correct retrieval, needle sets, imported qrels and every highlight use these functions.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

__all__ = ["collapse", "collapse_with_map", "find_collapsed", "find_view", "occurrences", "reader_form", "view",
           "view_with_map"]


_WS = re.compile(r"\s+")


@lru_cache(maxsize=1)
def _tables() -> tuple[re.Pattern, frozenset]:
    """A regex matching one ``Cf`` character, and the code points that must not start a segment.

    A segment is a run of characters that NFC normalises on its own: it starts at a character
    of combining class 0 that no composition can attach to the character before it (the second
    character of a canonical pair decomposition, Hangul vowel and trailing jamo) and whose
    decomposition does not begin with a combining mark. Computed once from ``unicodedata``.
    """
    cf, joins = [], set(range(0x1161, 0x1176)) | set(range(0x11A8, 0x11C3))
    for cp in range(0x110000):
        ch = chr(cp)
        if unicodedata.category(ch) == "Cf":
            cf.append(cp)
        d = unicodedata.decomposition(ch)
        if d and not d.startswith("<"):
            parts = [int(x, 16) for x in d.split()]
            if len(parts) == 2 and unicodedata.combining(chr(parts[1])) == 0:
                joins.add(parts[1])
            if unicodedata.combining(ch) == 0 and unicodedata.combining(chr(parts[0])) != 0:
                joins.add(cp)
    ranges, lo = [], None
    for i, cp in enumerate(cf):
        lo = cp if lo is None else lo
        if i + 1 == len(cf) or cf[i + 1] != cp + 1:
            ranges.append(re.escape(chr(lo)) + ("-" + re.escape(chr(cp)) if cp != lo else ""))
            lo = None
    return re.compile("[" + "".join(ranges) + "]"), frozenset(joins)


def _plain(text: str) -> bool:
    """True when the view only collapses whitespace (already NFC, no ``Cf`` character)."""
    return unicodedata.is_normalized("NFC", text) and _tables()[0].search(text) is None


def view_with_map(text: str) -> tuple[str, list[int], list[int]]:
    """The matching view of ``text`` (not stripped) and where each of its characters came from.

    Parameters
    ----------
    text : str
        Any text (a document's canonical text, a chunk's ``text``).

    Returns
    -------
    view : str
        NFC of ``text``, ``Cf`` characters removed, whitespace runs → one space.
    starts, ends : list of int
        ``text[starts[i]:ends[i]]`` is the original of view character ``i``, in
        code points (a collapsed whitespace run maps to the whole run, a composed
        character to the base and marks it came from). A view match
        ``[i, i + m)`` is the original range ``[starts[i], ends[i + m - 1])``.
    """
    if _plain(text):
        parts, starts, ends, pos = [], [], [], 0
        for m in _WS.finditer(text):
            s, e = m.span()
            parts.append(text[pos:s])
            starts.extend(range(pos, s))
            ends.extend(range(pos + 1, s + 1))
            parts.append(" ")
            starts.append(s)
            ends.append(e)
            pos = e
        parts.append(text[pos:])
        starts.extend(range(pos, len(text)))
        ends.extend(range(pos + 1, len(text) + 1))
        return "".join(parts), starts, ends
    cf, joins = _tables()
    out: list[str] = []
    starts, ends = [], []
    n = len(text)
    s = 0
    while s < n:
        e = s + 1
        while e < n and (unicodedata.combining(text[e]) or ord(text[e]) in joins):
            e += 1
        for ch in unicodedata.normalize("NFC", text[s:e]):
            if cf.match(ch):
                continue
            out.append(" " if ch.isspace() else ch)
            starts.append(s)
            ends.append(e)
        s = e
    # whitespace runs (also those interrupted only by removed Cf characters) become one space
    return _merge_spaces(out, starts, ends)


def _merge_spaces(out: list[str], starts: list[int], ends: list[int]) -> tuple[str, list[int], list[int]]:
    v, st, en = [], [], []
    for ch, a, b in zip(out, starts, ends):
        if ch == " " and v and v[-1] == " ":
            en[-1] = b
            continue
        v.append(ch)
        st.append(a)
        en.append(b)
    return "".join(v), st, en


def reader_form(text: str) -> str:
    """NFC of ``text`` with every ``Cf`` character removed (the view before whitespace collapse).

    What BM25 tokenises by default: text that is the same to a reader gives the same tokens.
    """
    if _plain(text):
        return text
    return _tables()[0].sub("", unicodedata.normalize("NFC", text))


def view(text: str) -> str:
    """The matching view of ``text``, stripped (what a needle is compared as)."""
    if _plain(text):
        return _WS.sub(" ", text).strip()
    return view_with_map(text)[0].strip()


#: The name used before round 2 (whitespace only); now the full matching view.
collapse = view


def collapse_with_map(text: str) -> tuple[str, list[int]]:
    """``(view, origin)``: the view (not stripped) and each character's first original offset.

    ``origin[len(view)] == len(text)``. Prefer :func:`view_with_map`, whose
    ``ends`` give a match's exact end.
    """
    v, starts, _ = view_with_map(text)
    return v, starts + [len(text)]


def occurrences(hay: str, needle: str) -> list[int]:
    """Every start of ``needle`` in ``hay``, overlapping occurrences included."""
    out, i = [], hay.find(needle)
    while i != -1:
        out.append(i)
        i = hay.find(needle, i + 1)
    return out


def find_view(text: str, needle: str) -> tuple[int, int] | None:
    """Range ``[start, end)`` of ``text`` where ``needle`` occurs in the matching view.

    Both sides are compared in the view (NFC, no ``Cf``, whitespace runs as one
    space; the needle stripped). The range is in ``text``'s code points, from
    the first matched character's start to the last one's end. ``None`` when
    absent or when the needle's view is empty.
    """
    key = view(needle)
    if not key:
        return None
    v, starts, ends = view_with_map(text)
    i = v.find(key)
    if i < 0:
        return None
    return int(starts[i]), int(ends[i + len(key) - 1])


#: The name used before round 2.
find_collapsed = find_view
