"""The matching view: how a needle is found in a text, and where it sits in the original.

The view of a text is its NFC normalisation, with every character of Unicode category ``Cf``
(soft hyphen, zero-width space, BOM...) removed, then every run of whitespace collapsed to one
space, and a hyphen at a line end between two letters joined (``con-`` / ``figuration`` reads
``configuration``; docs/definitions.md, *Matching view*). Each view character keeps the range of original
characters it stands for, so a match in the view is a range of the original text. Ground-truth
validation, correct retrieval, needle sets, imported qrels and every highlight use these functions.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

import numpy as np

__all__ = ["collapse", "collapse_with_map", "find_collapsed", "find_view", "occurrences", "reader_form", "view",
           "view_with_map"]


_WS = re.compile(r"\s+")

#: A line-end hyphen between two letters, in a text: the hyphen (``-`` or U+2010) and the whitespace run after it,
#: which holds exactly one line break (``\n``, ``\r\n`` or ``\r``). The matching view drops both.
_LINE_HYPHEN = re.compile(r"(?<=[^\W\d_])[-\u2010][^\S\r\n]*(?:\r\n|\n|\r)[^\S\r\n]*(?=[^\W\d_])")
#: The same in a view (whitespace already one space): a hyphen and a space between two letters.
_VIEW_HYPHEN = re.compile(r"(?<=[^\W\d_])[-\u2010] (?=[^\W\d_])")


def _line_breaks(run: str) -> int:
    """How many line breaks a whitespace run holds (``\r\n`` is one)."""
    return run.count("\n") + run.count("\r") - run.count("\r\n")


def _join_hyphens(text: str, v: str, starts: list[int], ends: list[int]) -> tuple[str, list[int], list[int]]:
    """The view ``v`` (with its map into ``text``) without its line-end hyphens between two letters.

    A hyphen of the view followed by a space that stands for a whitespace run of ``text`` holding exactly one
    line break is dropped with that space; the letters on either side keep their own ranges, so a match across
    the join is the original range hyphen and line break included.
    """
    if "-" not in v and "\u2010" not in v:
        return v, starts, ends
    drop = [m.start() for m in _VIEW_HYPHEN.finditer(v)
            if _line_breaks(text[starts[m.start() + 1]:ends[m.start() + 1]]) == 1]
    if not drop:
        return v, starts, ends
    gone = set(drop) | {i + 1 for i in drop}
    keep = [i for i in range(len(v)) if i not in gone]
    return "".join(v[i] for i in keep), [starts[i] for i in keep], [ends[i] for i in keep]


@lru_cache(maxsize=1)
def _joins() -> frozenset:
    """The code points that must not start a segment.

    A segment is a run of characters that NFC normalises on its own: it starts at a character
    of combining class 0 that no composition can attach to the character before it (the second
    character of a canonical pair decomposition, Hangul vowel and trailing jamo) and whose
    decomposition does not begin with a combining mark. Computed once from ``unicodedata``, over
    every code point, and only when a text that is not already NFC without ``Cf`` is seen.
    """
    joins = set(range(0x1161, 0x1176)) | set(range(0x11A8, 0x11C3))
    for cp in range(0x110000):
        ch = chr(cp)
        d = unicodedata.decomposition(ch)
        if d and not d.startswith("<"):
            parts = [int(x, 16) for x in d.split()]
            if len(parts) == 2 and unicodedata.combining(chr(parts[1])) == 0:
                joins.add(parts[1])
            if unicodedata.combining(ch) == 0 and unicodedata.combining(chr(parts[0])) != 0:
                joins.add(cp)
    return frozenset(joins)


#: Characters already seen not to be of category ``Cf`` (grows with the distinct characters read).
_NOT_CF: set[str] = set()


def _cf_in(chars) -> set[str]:
    """The characters of category ``Cf`` among ``chars`` (each distinct one looked up once per process)."""
    unknown = set(chars) - _NOT_CF
    cf = {c for c in unknown if unicodedata.category(c) == "Cf"}
    _NOT_CF.update(unknown - cf)
    return cf


def _drop_cf(text: str) -> str:
    """``text`` without its ``Cf`` characters."""
    cf = _cf_in(text)
    return text.translate({ord(c): None for c in cf}) if cf else text


def _plain(text: str) -> bool:
    """True when the view only collapses whitespace (already NFC, no ``Cf`` character).

    ASCII text is both (no ``Cf`` character lies below U+00AD), and ``str.isascii`` is answered
    without reading the text."""
    return text.isascii() or (unicodedata.is_normalized("NFC", text) and not _cf_in(text))


def view_with_map(text: str) -> tuple[str, list[int], list[int]]:
    """The matching view of ``text`` (not stripped) and where each of its characters came from.

    Parameters
    ----------
    text : str
        Any text (a document's canonical text, a chunk's ``text``).

    Returns
    -------
    view : str
        NFC of ``text``, ``Cf`` characters removed, whitespace runs → one space, a line-end hyphen between
        two letters dropped with the line break after it.
    starts, ends : list of int
        ``text[starts[i]:ends[i]]`` is the original of view character ``i``, in
        code points (a collapsed whitespace run maps to the whole run, a composed
        character to the base and marks it came from). A view match
        ``[i, i + m)`` is the original range ``[starts[i], ends[i + m - 1])``.
    """
    if _plain(text):
        return _join_hyphens(text, *_plain_view_with_map(text))
    joins = _joins()
    out: list[str] = []
    starts, ends = [], []
    n = len(text)
    s = 0
    while s < n:
        e = s + 1
        while e < n and (unicodedata.combining(text[e]) or ord(text[e]) in joins):
            e += 1
        for ch in unicodedata.normalize("NFC", text[s:e]):
            if unicodedata.category(ch) == "Cf":
                continue
            out.append(" " if ch.isspace() else ch)
            starts.append(s)
            ends.append(e)
        s = e
    # whitespace runs (also those interrupted only by removed Cf characters) become one space
    return _join_hyphens(text, *_merge_spaces(out, starts, ends))


def _plain_view_with_map(text: str) -> tuple[str, list[int], list[int]]:
    """:func:`view_with_map` of a text that is NFC without ``Cf``: only whitespace runs collapse.

    Every character keeps its own range except a whitespace run, which becomes one space standing for
    the whole run; built with numpy from the runs' spans (the per-run Python loop was the cost of
    validating a ground truth against a large corpus).
    """
    n = len(text)
    spans = np.array([m.span() for m in _WS.finditer(text)], dtype=np.int64).reshape(-1, 2)
    run_start, run_end = spans[:, 0], spans[:, 1]
    # positions inside a run after its first character are dropped
    inside = np.zeros(n + 1, dtype=np.int64)
    np.add.at(inside, run_start + 1, 1)
    np.add.at(inside, run_end, -1)
    starts = np.flatnonzero(np.cumsum(inside[:n]) == 0)
    ends = starts + 1
    ends[np.searchsorted(starts, run_start)] = run_end
    return _WS.sub(" ", text), starts.tolist(), ends.tolist()


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
    return _drop_cf(unicodedata.normalize("NFC", text))


def view(text: str) -> str:
    """The matching view of ``text``, stripped (what a needle is compared as)."""
    if _plain(text):
        return _WS.sub(" ", _LINE_HYPHEN.sub("", text)).strip()
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
