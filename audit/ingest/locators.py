"""Locators, in one place: where a range of canonical text sits in the file it came from.

The specification names four locators (its citation passage): ``#char=start,end`` for text,
``#page=N`` for PDF (Adobe, *PDF Open Parameters*), ``#t=start,end`` for audio and video (W3C,
*Media Fragments URI 1.0*) and a sheet with an A1 range for spreadsheets; a CSV's rows are RFC
7111's ``#row=``. :func:`locator` gives all that apply to one range of one document; every place
that shows or writes a citation (``python -m audit chunks --jsonl``, the citation table, its CSV,
the Citations page) calls it (docs/definitions.md, *Citations and locators*).

Per-document maps (:class:`LocatorMap`) are written by the loaders that need them (spreadsheets:
which characters come from which cell; transcripts: which from which cue) and survive the index
read-back as JSON (:meth:`LocatorMap.to_json`). Times are kept in integer milliseconds, as
WebVTT and SubRip write them, so no locator depends on the last bits of a float.
"""

from __future__ import annotations

import bisect
import json
import re
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Iterable
from urllib.parse import quote

if TYPE_CHECKING:  # pragma: no cover
    from .document import Document

__all__ = ["MAPPED_EXTRACTORS", "CellSpan", "CueSpan", "Locator", "LocatorMap", "a1", "a1_range",
           "check_locator", "column_letters", "format_seconds", "locator", "locator_columns", "quote_locator"]


#: Extractors whose locator needs a per-document map (without one, only ``#char=`` is known).
MAPPED_EXTRACTORS = {"xlsx": "sheet", "csv": "csv", "webvtt": "cues", "srt": "cues"}


def column_letters(col: int) -> str:
    """Spreadsheet column letters of 1-based column ``col``: 1 → ``A``, 26 → ``Z``, 27 → ``AA``.

    Raises
    ------
    ValueError
        ``col`` < 1.
    """
    if col < 1:
        raise ValueError(f"column numbers start at 1, got {col}")
    out = ""
    while col:
        col, r = divmod(col - 1, 26)
        out = chr(ord("A") + r) + out
    return out


def a1(row: int, col: int) -> str:
    """The A1 reference of a 1-based ``(row, col)`` cell: ``(3, 2)`` → ``B3``."""
    return f"{column_letters(col)}{row}"


def a1_range(row: int, col: int, row_end: int, col_end: int) -> str:
    """A1 range of the rectangle of 1-based rows ``row..row_end`` and columns ``col..col_end`` (inclusive).

    One cell is written alone (``B3``), more as ``top-left:bottom-right`` (``A2:D9``).
    """
    first, last = a1(row, col), a1(row_end, col_end)
    return first if first == last else f"{first}:{last}"


_A1 = re.compile(r"^([A-Z]+)([0-9]+)(?::([A-Z]+)([0-9]+))?$")


def _parse_a1(ref: str) -> tuple[int, int, int, int]:
    m = _A1.match(ref)
    if not m:
        raise ValueError(f"not an A1 range: {ref!r}")

    def col(letters: str) -> int:
        n = 0
        for ch in letters:
            n = n * 26 + ord(ch) - ord("A") + 1
        return n

    r1, c1 = int(m.group(2)), col(m.group(1))
    r2, c2 = (int(m.group(4)), col(m.group(3))) if m.group(3) else (r1, c1)
    return r1, c1, r2, c2


def format_seconds(ms: int) -> str:
    """Milliseconds as W3C Media Fragments NPT seconds: ``132400`` → ``132.4``, ``5000`` → ``5``."""
    whole, frac = divmod(int(ms), 1000)
    return f"{whole}.{frac:03d}".rstrip("0").rstrip(".") if frac else str(whole)


def _clock(ms: int) -> str:
    """``m:ss.s`` (or ``h:mm:ss.s``) for people: 132400 → ``2:12.4``."""
    h, rest = divmod(int(ms), 3_600_000)
    m, rest = divmod(rest, 60_000)
    s = format_seconds(rest)
    s = ("0" + s) if rest < 10_000 else s
    return f"{h}:{m:02d}:{s}" if h else f"{m}:{s}"


@dataclass(frozen=True)
class CellSpan:
    """The characters of canonical text that come from one spreadsheet cell.

    Attributes
    ----------
    start, end : int
        ``[start, end)`` in canonical text (code points): exactly the cell's text.
    sheet : str
        The sheet's name (a CSV: its file's stem).
    row, col : int
        1-based row and column of the cell (its top-left cell when merged).
    row_end, col_end : int
        The last row and column of a merged range (equal to ``row``/``col`` otherwise).
    stored : str
        The cell's stored value as text (:func:`audit.ingest.spreadsheet.cell_text`) where the text is the
        value as the sheet shows it under its number format and differs from it (``0.15`` for ``15%``); ""
        where the text is the stored value.
    """

    start: int
    end: int
    sheet: str
    row: int
    col: int
    row_end: int
    col_end: int
    stored: str = ""

    @property
    def ref(self) -> str:
        """``B3``, or the merge's range ``B3:C4``."""
        return a1_range(self.row, self.col, self.row_end, self.col_end)


@dataclass(frozen=True)
class CueSpan:
    """The characters of canonical text that come from one transcript cue.

    ``[start, end)`` in canonical text (the speaker prefix included); ``t_start_ms`` and
    ``t_end_ms`` the cue's times in integer milliseconds from the media's start.
    """

    start: int
    end: int
    t_start_ms: int
    t_end_ms: int


@dataclass(frozen=True)
class LocatorMap:
    """What a loader knows about where its canonical text came from, beyond character offsets.

    Attributes
    ----------
    kind : str
        ``sheet`` (a workbook), ``csv`` (one sheet, rows as RFC 7111 counts them), ``cues``
        (a transcript) or ``text`` (a Word file: only its outline and notes).
    cells : tuple of CellSpan
        Spreadsheets: every cell written, in text order (disjoint ranges).
    cues : tuple of CueSpan
        Transcripts: every cue written, in text order (disjoint ranges).
    notes : tuple of str
        What the loader left out and why (a hidden sheet, a formula without a cached value):
        listed by the CLI (``warning:``) and the Overview page.
    media : str
        Transcripts: the corpus-relative path of a media file with the same stem beside it, or "".
    outline : tuple of (int, int, str)
        Word: every heading as ``(offset of its line in canonical text, level as the author styled it
        — Heading 1 is 1 —, text)``, in text order; what gives a range its heading path.
    """

    kind: str
    cells: tuple[CellSpan, ...] = ()
    cues: tuple[CueSpan, ...] = ()
    notes: tuple[str, ...] = ()
    media: str = ""
    outline: tuple[tuple[int, int, str], ...] = ()

    def heading_path(self, offset: int) -> tuple[str, ...]:
        """The headings that hold character ``offset``, outermost first, innermost last (from :attr:`outline`).

        A heading holds what follows it up to the next heading of its level or a shallower one, so
        ``Day one`` (level 2) under ``Your first week`` (level 1) gives ``("Your first week", "Day one")``.
        """
        path: list[tuple[int, str]] = []
        for at, level, title in self.outline:
            if at > offset:
                break
            while path and path[-1][0] >= level:
                path.pop()
            path.append((level, title))
        return tuple(t for _, t in path)

    @cached_property
    def _ends(self) -> list[int]:
        return [s.end for s in (self.cells or self.cues)]

    def spans_in(self, start: int, end: int) -> list:
        """The cell or cue spans holding any character of ``[start, end)``, in text order."""
        spans = self.cells or self.cues
        end = max(end, start + 1)
        i = bisect.bisect_right(self._ends, start)
        out = []
        while i < len(spans) and spans[i].start < end:
            out.append(spans[i])
            i += 1
        return out

    def to_json(self) -> str:
        """Compact JSON (what the index's ``document.locators`` column stores); :meth:`from_json` reads it."""
        sheets = list(dict.fromkeys(c.sheet for c in self.cells))
        ix = {s: i for i, s in enumerate(sheets)}
        return json.dumps({"kind": self.kind, "sheets": sheets,
                           "cells": [[c.start, c.end, ix[c.sheet], c.row, c.col, c.row_end, c.col_end]
                                     + ([c.stored] if c.stored else []) for c in self.cells],
                           "cues": [[c.start, c.end, c.t_start_ms, c.t_end_ms] for c in self.cues],
                           "notes": list(self.notes), "media": self.media,
                           "outline": [list(h) for h in self.outline]},
                          ensure_ascii=False, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str | None) -> "LocatorMap | None":
        """Inverse of :meth:`to_json`; ``None`` for an empty value (an index written before maps were stored)."""
        if not text:
            return None
        d = json.loads(text)
        sheets = d.get("sheets", [])
        return cls(kind=d["kind"],
                   cells=tuple(CellSpan(int(a), int(b), sheets[int(s)], int(r), int(c), int(r2), int(c2),
                                        str(rest[0]) if rest else "")
                               for a, b, s, r, c, r2, c2, *rest in d.get("cells", [])),
                   cues=tuple(CueSpan(int(a), int(b), int(t0), int(t1)) for a, b, t0, t1 in d.get("cues", [])),
                   notes=tuple(d.get("notes", [])), media=str(d.get("media", "")),
                   outline=tuple((int(a), int(lv), str(t)) for a, lv, t in d.get("outline", [])))


@dataclass(frozen=True)
class Locator:
    """Every locator of one range ``[start, end)`` of one document.

    Attributes
    ----------
    start, end : int
        The range in canonical text (code points, end exclusive): ``#char=start,end``.
    page, page_end : int or None
        PDF: the 1-based first page and the last page the range reaches (``end − 1``).
    sheet, range : str or None
        Spreadsheets: the sheet and the A1 range (bounding rectangle) of every cell any
        character of the range comes from; a CSV's sheet is its file's stem.
    row, row_end : int or None
        CSV: the first and last record (RFC 7111 rows, from 1, the header record included).
    t_start, t_end : float or None
        Transcripts: seconds from the media's start of the first cue's start and the last cue's
        end (exact decimals of whole milliseconds).
    headings : tuple of str
        Word: the heading path of the range's start, outermost first, innermost last
        (:meth:`LocatorMap.heading_path`); a citation names the innermost.
    note : str
        Why a format's locator is missing or partial ("" when it is complete).
    """

    start: int
    end: int
    page: int | None = None
    page_end: int | None = None
    sheet: str | None = None
    range: str | None = None
    row: int | None = None
    row_end: int | None = None
    t_start_ms: int | None = None
    t_end_ms: int | None = None
    note: str = ""
    headings: tuple[str, ...] = ()

    @property
    def char(self) -> str:
        """``#char=start,end``."""
        return f"#char={self.start},{self.end}"

    @property
    def t_start(self) -> float | None:
        return None if self.t_start_ms is None else self.t_start_ms / 1000

    @property
    def t_end(self) -> float | None:
        return None if self.t_end_ms is None else self.t_end_ms / 1000

    @property
    def fragment(self) -> str:
        """The format's own fragment: ``#page=N``, ``#sheet=NAME&range=A2:D9``, ``#row=2-9``, ``#t=12.5,20``; "" for text.

        A sheet name is percent-encoded (RFC 3986), so ``Q1 prices`` is ``Q1%20prices``.
        """
        if self.page is not None:
            return f"#page={self.page}"
        if self.row is not None:
            return f"#row={self.row}" + (f"-{self.row_end}" if self.row_end != self.row else "")
        if self.sheet is not None:
            return f"#sheet={quote(self.sheet, safe='')}&range={self.range}"
        if self.t_start_ms is not None:
            return f"#t={format_seconds(self.t_start_ms)},{format_seconds(self.t_end_ms)}"
        return ""

    @property
    def where(self) -> str:
        """For people, beside the fragment: ``pages 3–4``, ``page 3``, ``sheet Prices, A2:D9``, ``0:12.5–0:20``."""
        if self.page is not None:
            return f"pages {self.page}–{self.page_end}" if self.page_end != self.page else f"page {self.page}"
        if self.sheet is not None:
            rows = ""
            if self.row is not None:
                rows = f"rows {self.row}–{self.row_end}" if self.row_end != self.row else f"row {self.row}"
                return f"{self.sheet}, {rows}"
            return f"sheet {self.sheet}, {self.range}"
        if self.t_start_ms is not None:
            return f"{_clock(self.t_start_ms)}–{_clock(self.t_end_ms)}"
        if self.headings:
            return "§ " + " › ".join(self.headings)
        return ""

    @property
    def display(self) -> str:
        """``#char=…`` then the format's fragment and its reading: ``#char=40,95 #page=3 (pages 3–4)``."""
        out = self.char
        if self.fragment:
            out += f" {self.fragment}"
        if self.where:
            out += f" ({self.where})"
        return out

    def fields(self) -> dict:
        """The documented record fields of this range's format (none for plain text).

        PDF: ``page``, ``page_end``; spreadsheet: ``sheet``, ``range``; CSV: ``sheet``, ``range``,
        ``row``, ``row_end``; transcript: ``t_start``, ``t_end`` (seconds); Word: ``heading`` (the
        innermost heading) and ``heading_path`` (outermost first, joined by `` › ``); plus ``fragment``
        (the format's fragment) and ``locator_note`` when the locator is partial.
        """
        out: dict = {}
        if self.page is not None:
            out.update(page=self.page, page_end=self.page_end)
        if self.sheet is not None:
            out.update(sheet=self.sheet, range=self.range)
        if self.row is not None:
            out.update(row=self.row, row_end=self.row_end)
        if self.t_start_ms is not None:
            out.update(t_start=self.t_start, t_end=self.t_end)
        if self.headings:
            out.update(heading=self.headings[-1], heading_path=" › ".join(self.headings))
        if self.fragment:
            out["fragment"] = self.fragment
        if self.note:
            out["locator_note"] = self.note
        return out


#: Every field :meth:`Locator.fields` may write, in the order tables show them.
FIELDS = ("page", "page_end", "sheet", "range", "row", "row_end", "t_start", "t_end", "heading", "heading_path",
          "fragment", "locator_note")


def locator_columns(locators: Iterable[Locator]) -> dict[str, list]:
    """Table columns of the documented fields that at least one of ``locators`` has (None elsewhere).

    A table of markdown citations gets no column; one mixing PDF and spreadsheet citations gets
    ``page``, ``page_end``, ``sheet``, ``range`` and ``fragment``.
    """
    rows = [loc.fields() for loc in locators]
    return {f: [r.get(f) for r in rows] for f in FIELDS if any(f in r for r in rows)}


def locator(doc: "Document", start: int, end: int) -> Locator:
    """Every locator of ``doc``'s canonical range ``[start, end)`` (code points, end exclusive).

    Parameters
    ----------
    doc : Document
        Its ``pages`` (PDF page starts) and ``locators`` map (:class:`LocatorMap`) are read.
    start, end : int
        The range, e.g. a chunk's ``content`` range.

    Returns
    -------
    Locator
        ``page``/``page_end`` from :meth:`Document.page_span`; ``sheet``/``range`` from the cells
        of the map that hold any character of the range (the sheet of the first such cell, the
        bounding A1 rectangle of that sheet's cells, a merged cell counting with its whole merge);
        CSV rows likewise; ``t_start``/``t_end`` from the first and last cue the range touches;
        Word: ``headings``, the heading path of ``start``. A range touching no cell or cue (a title
        line) has only ``#char=``. A document of a mapped
        format without its map (a Lance dataset, an index written before maps were stored) gets
        ``#char=`` and a ``note`` saying so.
    """
    loc = Locator(start, end)
    span = doc.page_span(start, end)
    if span is not None:
        loc = Locator(start, end, page=span[0], page_end=span[1])
    m = getattr(doc, "locators", None)
    if m is None:
        if doc.extractor in MAPPED_EXTRACTORS:
            what = "cell ranges" if MAPPED_EXTRACTORS[doc.extractor] != "cues" else "cue times"
            return Locator(start, end, note=f"no {what} stored with this document's index: #char= only")
        return loc
    if m.kind == "text":
        return Locator(start, end, headings=m.heading_path(start))
    spans = m.spans_in(start, end)
    if not spans:
        return loc
    if m.kind == "cues":
        return Locator(start, end, t_start_ms=min(s.t_start_ms for s in spans),
                       t_end_ms=max(s.t_end_ms for s in spans))
    sheet = spans[0].sheet
    mine = [s for s in spans if s.sheet == sheet]
    others = list(dict.fromkeys(s.sheet for s in spans if s.sheet != sheet))
    r1, c1 = min(s.row for s in mine), min(s.col for s in mine)
    r2, c2 = max(s.row_end for s in mine), max(s.col_end for s in mine)
    note = ("the range continues into sheet " + ", ".join(repr(o) for o in others)) if others else ""
    if m.kind == "csv":
        return Locator(start, end, sheet=sheet, range=a1_range(r1, c1, r2, c2), row=r1, row_end=r2, note=note)
    return Locator(start, end, sheet=sheet, range=a1_range(r1, c1, r2, c2), note=note)


def quote_locator(doc: "Document", start: int, end: int, quote: str) -> Locator | None:
    """The locator of the words ``quote`` inside the range ``[start, end)`` of ``doc`` (a chunk's), or None.

    A quote is found in the matching view (:func:`audit.matching.find_view`: whitespace runs as one
    space), first occurrence; its locator is :func:`locator` of its own range: the cues that hold it
    (``#t=19,25.6`` where its chunk spans ``#t=1,31``), its cell range, its page, its heading path.
    The chunk's locator is :func:`locator` of ``[start, end)``; a citation shows both. None when the
    quote is not inside the range (or is empty).
    """
    from ..matching import find_view

    hit = find_view(doc.text[start:end], quote)
    if hit is None:
        return None
    return locator(doc, start + hit[0], start + hit[1])


def check_locator(doc: "Document", loc: Locator) -> str:
    """Check a range's format locator against the document's map: "" when it holds, else the reason.

    For a spreadsheet, every cell any character of ``[loc.start, loc.end)`` comes from must lie
    in ``loc.sheet`` inside ``loc.range`` (CSV: inside rows ``row``–``row_end``), and the range
    must be no wider than those cells. For a transcript, every cue the range touches must lie
    within ``[t_start, t_end]``, and those bounds must be the cues' own. A PDF page must be the
    one holding ``start``. The quote itself is checked against ``#char=`` by
    :func:`audit.evaluation.citations.verify_citation`.
    """
    expected = locator(doc, loc.start, loc.end)
    if expected.note and expected.sheet is None and expected.t_start_ms is None:
        return ""  # nothing to check against: only #char= is known
    if loc.page is not None and (loc.page, loc.page_end) != (expected.page, expected.page_end):
        return f"the range lies on {expected.where or 'no page'}, the locator says {loc.where}"
    m = getattr(doc, "locators", None)
    if m is None or (loc.sheet is None and loc.t_start_ms is None):
        if expected.sheet is not None or expected.t_start_ms is not None:
            return f"the locator names no {'cells' if expected.sheet is not None else 'times'}; the range is at " \
                   f"{expected.fragment}"
        return ""
    spans = m.spans_in(loc.start, loc.end)
    if loc.t_start_ms is not None:
        outside = [s for s in spans if s.t_start_ms < loc.t_start_ms or s.t_end_ms > loc.t_end_ms]
        if outside:
            s = outside[0]
            return (f"a cue at {format_seconds(s.t_start_ms)}–{format_seconds(s.t_end_ms)} s lies outside "
                    f"{loc.fragment}")
        if (loc.t_start_ms, loc.t_end_ms) != (expected.t_start_ms, expected.t_end_ms):
            return f"the cues span {expected.fragment}, wider or narrower than {loc.fragment}"
        return ""
    r1, c1, r2, c2 = _parse_a1(loc.range or "")
    for s in spans:
        if s.sheet != loc.sheet and s.sheet == spans[0].sheet:
            return f"cell {s.ref} lies in sheet {s.sheet!r}, the locator says {loc.sheet!r}"
        if s.sheet == loc.sheet and not (r1 <= s.row and s.row_end <= r2 and c1 <= s.col and s.col_end <= c2):
            return f"cell {s.ref} of sheet {s.sheet!r} lies outside {loc.range}"
    if loc.range != expected.range:
        return f"the cells span {expected.range}, the locator says {loc.range}"
    return ""
