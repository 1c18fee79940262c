"""Where content dies: what extraction did to each document, measured on its canonical text and layout.

The specification: "extraction is where content dies. A PDF is not text; it is drawing instructions.
Two-column layouts interleave, tables become word soup, page headers repeat in every chunk, and a
scanned page has no text until OCR gives it some." Each rule below is stated, with the reason for its
bound, in docs/definitions.md (*Extraction audit*):

- **no text layer**: a page whose text, once its running lines are set aside, has no character
  other than whitespace (a scanned page, or a scan stamped with a digital page number);
- **running lines**: a page's first or last non-blank line that, digits normalised, opens (or
  closes) at least half of the pages of a document of three pages or more, or half of the pages of
  one parity when the lines alternate (:func:`find_running_lines`; :func:`strip_running_lines`
  removes them at extraction);
- **table flattened into lines** and **column interleaving**: from the PDF's drawing positions
  (:func:`layout_evidence`): three or more consecutive extracted lines each joining pieces drawn in
  the same columns (a row with an empty cell has a piece fewer); two long pieces a line are two
  columns read across, anything else a table whose cells lost their borders; and three or more rows
  of cells the extractor wrote one cell per line (a table drawn a column at a time);
- **garbled**: the share of characters in Unicode categories Co, Cn, Cc (tab and newline excepted)
  plus U+FFFD, per page, over :data:`GARBLED_BOUND`;
- **reader notes**: what a format's reader left out or changed and said so (a hidden sheet, a
  formula without a cached value, unaccepted tracked changes, repeated caption lines).

:func:`audit_document` gives a document's :class:`DocumentExtraction`; :func:`chunks_reaching` counts
the chunks a finding's places reach. Everything here is pure (no index, no Streamlit).
"""

from __future__ import annotations

import bisect
import json
import math
import re
import unicodedata
from dataclasses import dataclass, field, replace
from typing import Iterable, Sequence

__all__ = ["COLUMN_MIN_CHARACTERS", "GARBLED_BOUND", "GRID_MIN_LINES", "RUNNING_MIN_PAGES", "X_TOLERANCE",
           "Y_TOLERANCE", "DocumentExtraction", "ExtractionFinding", "ExtractionNotes", "Fragment",
           "LayoutBlock", "PageStats", "RunningLine", "audit_document", "bad_characters", "chunks_reaching",
           "find_running_lines", "format_pages", "layout_evidence", "normalise_digits", "page_ranges",
           "strip_running_lines"]


#: A running line needs a document of at least this many pages (two pages sharing a line prove nothing).
RUNNING_MIN_PAGES = 3

#: Share of pages a line must open (or close) to be running: at least half, ``ceil(n / 2)`` pages.
RUNNING_SHARE = 0.5

#: A page is garbled when more than 1% of its characters are private-use, unassigned, control or U+FFFD.
GARBLED_BOUND = 0.01

#: Consecutive extracted lines with aligned pieces that make a table or a pair of columns.
GRID_MIN_LINES = 3

#: Median characters per piece from which two aligned pieces a line are prose columns, not table cells.
COLUMN_MIN_CHARACTERS = 20

#: Pieces start "at the same horizontal position" within this many PDF points (1/72 inch).
X_TOLERANCE = 2.0

#: Fragments are on one baseline within this many points.
Y_TOLERANCE = 1.0

_DIGITS = re.compile(r"\d+")


# --------------------------------------------------------------------------- types

@dataclass(frozen=True)
class RunningLine:
    """A line repeated at the top (``header``) or bottom (``footer``) of a document's pages.

    Attributes
    ----------
    text : str
        The line as it reads on the first page it opens or closes (whitespace collapsed).
    pattern : str
        The line with every run of digits replaced by ``#`` (``Page # of #``): what is compared.
    where : {"header", "footer"}
    pages : tuple of int
        1-based pages the line opens (header) or closes (footer).
    ranges : tuple of (int, int)
        ``[start, end)`` of each occurrence in the canonical text (characters); empty once stripped.
    """

    text: str
    pattern: str
    where: str
    pages: tuple[int, ...]
    ranges: tuple[tuple[int, int], ...] = ()


@dataclass(frozen=True)
class Fragment:
    """One piece of text as the PDF draws it: its start ``x``, baseline ``y`` (PDF points, origin
    bottom left, rounded to 0.1 pt) and its text, in content-stream order."""

    x: float
    y: float
    text: str


@dataclass(frozen=True)
class LayoutBlock:
    """Lines whose pieces are drawn at the same horizontal positions, read across by the extractor.

    Attributes
    ----------
    kind : {"table", "columns"}
    page : int
        1-based page.
    start, end : int
        The block's range in the canonical text (characters, end exclusive).
    lines : int
        Extracted lines in the block.
    pieces : int
        Pieces per line (table columns, or 2 for two text columns).
    x : tuple of float
        Where each piece starts (PDF points from the left edge).
    example : str
        The block's first row, pieces joined by `` | ``.
    read : {"lines of words", "one cell per line"}
        How the extractor wrote the table: each row's cells run together on one line, or each cell on a
        line of its own (the stream draws the table a column at a time).
    """

    kind: str
    page: int
    start: int
    end: int
    lines: int
    pieces: int
    x: tuple[float, ...]
    example: str
    read: str = "lines of words"

    @property
    def read_as(self) -> str:
        """``as lines of words`` or ``one cell per line``: how the evidence sentence says it."""
        return "as lines of words" if self.read == "lines of words" else self.read


@dataclass(frozen=True)
class ExtractionNotes:
    """What the extractor alone knows, kept with the document (and in the index, as JSON).

    ``layout`` holds the tables and column blocks seen in the drawing positions (PDF only);
    ``stripped`` the running lines removed at extraction (``--strip-running-lines``), without ranges
    since they are no longer in the text; ``layout_checked`` is False for a format without layout.
    """

    layout: tuple[LayoutBlock, ...] = ()
    stripped: tuple[RunningLine, ...] = ()
    layout_checked: bool = True

    def to_json(self) -> str:
        """Sorted-key JSON of the notes (what the index's ``extraction`` column holds)."""
        return json.dumps({"layout": [b.__dict__ | {"x": list(b.x)} for b in self.layout],
                           "stripped": [{"text": r.text, "pattern": r.pattern, "where": r.where,
                                         "pages": list(r.pages)} for r in self.stripped],
                           "layout_checked": self.layout_checked}, sort_keys=True, ensure_ascii=False)

    @classmethod
    def from_json(cls, raw: str | None) -> "ExtractionNotes | None":
        """The notes of :meth:`to_json` (None for None or an empty string).

        Raises
        ------
        ValueError
            ``raw`` is not the JSON :meth:`to_json` writes.
        """
        if not raw:
            return None
        try:
            d = json.loads(raw)
            return cls(layout=tuple(LayoutBlock(**(b | {"x": tuple(b["x"])})) for b in d.get("layout", ())),
                       stripped=tuple(RunningLine(r["text"], r["pattern"], r["where"], tuple(r["pages"]))
                                      for r in d.get("stripped", ())),
                       layout_checked=bool(d.get("layout_checked", True)))
        except (TypeError, KeyError, json.JSONDecodeError) as e:
            raise ValueError(f"extraction notes are not readable ({e})") from None


@dataclass(frozen=True)
class PageStats:
    """One page's extraction figures.

    Attributes
    ----------
    page : int
        1-based (0: a document without pages, the whole text).
    start, end : int
        The page's range in the canonical text (characters).
    characters : int
        Characters of the page's text, whitespace excluded.
    own_characters : int
        The same without its running lines: what the page says of its own.
    bad : int
        Characters in Co, Cn, Cc (tab and newline excepted) or U+FFFD.
    garbled_share : float
        ``bad / characters`` rounded to 4 decimals (0 for an empty page).
    """

    page: int
    start: int
    end: int
    characters: int
    own_characters: int
    bad: int
    garbled_share: float

    @property
    def has_text(self) -> bool:
        """Whether the page has text of its own (not only running lines)."""
        return self.own_characters > 0

    @property
    def garbled(self) -> bool:
        """Whether the page's share is over :data:`GARBLED_BOUND` (compared on the rounded share)."""
        return self.garbled_share > GARBLED_BOUND


@dataclass(frozen=True)
class ExtractionFinding:
    """One finding of one document.

    Attributes
    ----------
    check : {"no_text_layer", "running_lines", "tables", "columns", "garbled", "reader_notes"}
    pages : tuple of int
        1-based pages it concerns (empty for a document without pages).
    ranges : tuple of (int, int)
        Its places in the canonical text (characters, end exclusive); an empty range ``(a, a)`` is a
        page with no text at offset ``a``.
    evidence : str
        What was seen, in one sentence (the line's text, the table's first row, the shares...).
    chunks : int
        Chunks of the index the places reach (:func:`chunks_reaching`); 0 before counting.
    """

    check: str
    pages: tuple[int, ...]
    ranges: tuple[tuple[int, int], ...]
    evidence: str
    chunks: int = 0


@dataclass(frozen=True)
class DocumentExtraction:
    """A document's extraction audit: its pages' figures and its findings.

    ``searchable`` is False when no page has text of its own within the garbled bound: then the
    findings are unhealthy, not warnings (docs/definitions.md, *Extraction audit*).
    ``layout_checked`` is False when the drawing positions were not recorded (not a PDF, or an
    index written before they were).
    """

    doc_id: str
    pages: tuple[PageStats, ...]
    findings: tuple[ExtractionFinding, ...] = ()
    searchable: bool = True
    layout_checked: bool = False
    stripped: tuple[RunningLine, ...] = field(default_factory=tuple)

    @property
    def n_pages(self) -> int:
        """Pages of the document (0 for a format without pages)."""
        return sum(1 for p in self.pages if p.page > 0)


# --------------------------------------------------------------------------- pages and lines

def page_ranges(text: str, pages: Sequence[int]) -> list[tuple[int, int]]:
    """``[start, end)`` of each page's text in a PDF's canonical text (characters).

    Pages are joined by one blank line (``\\n\\n``), so page i ends two characters before page
    i + 1 starts; the last page runs to the end of the text. No pages: ``[(0, len(text))]``.
    """
    if not pages:
        return [(0, len(text))]
    out = []
    for i, s in enumerate(pages):
        e = pages[i + 1] - 2 if i + 1 < len(pages) else len(text)
        out.append((s, max(s, e)))
    return out


def normalise_digits(line: str) -> str:
    """``line`` with whitespace runs collapsed and every run of digits replaced by ``#``.

    ``Page 3 of 6`` and ``Page 12 of 60`` both read ``Page # of #``: a page number never makes a
    running line look different from page to page.
    """
    return _DIGITS.sub("#", " ".join(line.split()))


def _edge_lines(page: str) -> tuple[tuple[int, int] | None, tuple[int, int] | None]:
    """``[start, end)`` within ``page`` of its first and of its last non-blank line (None when blank)."""
    first = last = None
    pos = 0
    for line in page.split("\n"):
        if line.strip():
            span = (pos, pos + len(line))
            first = first or span
            last = span
        pos += len(line) + 1
    return first, last


def _edge_patterns(page_texts: Sequence[str], pick: int, numbers: Iterable[int]) -> dict:
    """``pattern → [(page, span, line)]`` of the first (``pick`` 0) or last (1) non-blank line of the given pages."""
    seen: dict[str, list[tuple[int, tuple[int, int], str]]] = {}
    for p in numbers:
        t = page_texts[p - 1]
        span = _edge_lines(t)[pick]
        if span is None:
            continue
        line = " ".join(t[span[0]:span[1]].split())
        seen.setdefault(normalise_digits(line), []).append((p, span, line))
    return seen


def find_running_lines(page_texts: Sequence[str]) -> list[RunningLine]:
    """The running headers and footers of a document, from its pages' texts.

    A page's first and last non-blank lines are compared after :func:`normalise_digits`. A pattern
    is a running header when it opens at least ``ceil(n / 2)`` of the ``n`` pages (blank pages
    count in ``n``), a running footer when it closes that many, and only when ``n`` ≥
    :data:`RUNNING_MIN_PAGES`. A two-sided document alternates its lines (the chapter on odd pages,
    the book on even ones), so each parity is also read alone: a pattern opening (closing) at least
    half of the ``m`` ≥ 2 pages of one parity, and two at least, is running when ``m`` ≥ :data:`RUNNING_MIN_PAGES`, or
    when the other parity has a running line of its own at the same edge (the two lines alternate:
    four pages at least, two of each parity, agree on the layout). The returned ``ranges`` are
    relative to each page's own text, in page order (the caller adds each page's offset).

    Parameters
    ----------
    page_texts : sequence of str
        Each page's text, in order.

    Returns
    -------
    list of RunningLine
        Headers first, then footers, each group in order of first appearance (lines of every page
        before the lines of one parity, odd pages first).
    """
    n = len(page_texts)
    if n < RUNNING_MIN_PAGES:
        return []
    out: list[RunningLine] = []
    for where, pick in (("header", 0), ("footer", 1)):
        need = math.ceil(n * RUNNING_SHARE)
        found = set()
        for pattern, hits in _edge_patterns(page_texts, pick, range(1, n + 1)).items():
            if len(hits) >= need:
                found.add(pattern)
                out.append(RunningLine(hits[0][2], pattern, where, tuple(h[0] for h in hits),
                                       tuple(h[1] for h in hits)))
        by_parity = []
        for first in (1, 2):
            numbers = range(first, n + 1, 2)
            m = len(numbers)
            lines = [(pattern, hits) for pattern, hits in _edge_patterns(page_texts, pick, numbers).items()
                     if m >= 2 and len(hits) >= max(2, math.ceil(m * RUNNING_SHARE))]
            by_parity.append((m, lines))
        for i, (m, lines) in enumerate(by_parity):
            other = by_parity[1 - i][1]
            for pattern, hits in lines:
                if pattern in found or not (m >= RUNNING_MIN_PAGES or any(o != pattern for o, _ in other)):
                    continue
                found.add(pattern)
                out.append(RunningLine(hits[0][2], pattern, where, tuple(h[0] for h in hits),
                                       tuple(h[1] for h in hits)))
    return out


def _running_spans(page_texts: Sequence[str], lines: Iterable[RunningLine]) -> list[list[tuple[int, int]]]:
    """Per page, the ``[start, end)`` spans (page-relative) of its running lines."""
    out: list[list[tuple[int, int]]] = [[] for _ in page_texts]
    for r in lines:
        for p, span in zip(r.pages, r.ranges):
            if span not in out[p - 1]:
                out[p - 1].append(span)
    return out


def strip_running_lines(page_texts: Sequence[str]) -> tuple[list[str], list[RunningLine]]:
    """Remove the running lines of :func:`find_running_lines` from each page.

    Each removed line goes with its ``\\n``; the page's text then loses its leading and trailing
    newlines again, as every page text does (docs/definitions.md, *Canonical text*, PDF). Only the
    pages a line opens or closes lose it: the same words inside a page stay. One pass: the lines
    that lay under the running lines are never compared again (a body line reading
    ``Step 3 of the rotation`` on every page is content, not a header).

    Returns
    -------
    (list of str, list of RunningLine)
        The pages' new texts, and the lines removed (without ranges: they are no longer in the text).
    """
    lines = find_running_lines(page_texts)
    spans = _running_spans(page_texts, lines)
    out = []
    for t, cut in zip(page_texts, spans):
        for s, e in sorted(cut, reverse=True):
            t = t[:s] + t[e + 1:] if e < len(t) else t[:s]
        out.append(t.strip("\n"))
    return out, [replace(r, ranges=()) for r in lines]


# --------------------------------------------------------------------------- garbled characters

def _is_bad(ch: str) -> bool:
    cat = unicodedata.category(ch)
    return cat in ("Co", "Cn") or (cat == "Cc" and ch not in "\t\n") or ch == "\ufffd"


def bad_characters(text: str) -> int:
    """Characters of ``text`` in Unicode categories Co (private use), Cn (unassigned), Cc (controls,
    tab and newline excepted) or equal to U+FFFD (the replacement character).

    Each distinct character is classified once (``unicodedata`` of this Python), so a long text costs
    one pass of ``str.count`` per distinct bad character.
    """
    return sum(text.count(ch) for ch in set(text) if _is_bad(ch))


# --------------------------------------------------------------------------- layout

def _lines(fragments: Sequence[Fragment]) -> list[list[Fragment]]:
    """Extracted lines: runs of consecutive non-blank fragments (stream order) on one baseline.

    This is how the extractor reads a page: what the stream draws next on the same baseline is put
    on the same line, whatever lies between on the page.
    """
    out: list[list[Fragment]] = []
    for f in fragments:
        if not f.text.strip():
            continue
        if out and abs(out[-1][-1].y - f.y) <= Y_TOLERANCE:
            out[-1].append(f)
        else:
            out.append([f])
    return [sorted(line, key=lambda f: f.x) for line in out]


def _within(xs: Sequence[float], cols: Sequence[float]) -> bool:
    """Whether every position of ``xs`` is one of the columns ``cols`` (within :data:`X_TOLERANCE` points)."""
    return all(any(abs(a - b) <= X_TOLERANCE for b in cols) for a in xs)


def _same_slots(xs: Sequence[float], cols: Sequence[float]) -> bool:
    """Whether a line of pieces ``xs`` fills the same cells as a row at ``cols`` where some cells are aligned to the
    right or centred (their start moves with their width): as many pieces, at least :data:`GRID_MIN_LINES` of
    them, at least two starting at a column of ``cols`` (within :data:`X_TOLERANCE`: the left-aligned cells), and
    each piece lying between its neighbours' columns in the other line (``cols[i-1] < xs[i] < cols[i+1]`` and the
    reverse), so the pieces are the same cells in the same order. Prose with a bold word breaks it: its pieces
    fall at other places on the next line."""
    if len(xs) != len(cols) or len(xs) < GRID_MIN_LINES:
        return False
    if sum(abs(a - b) <= X_TOLERANCE for a, b in zip(xs, cols)) < 2:
        return False
    for a, b in ((xs, cols), (cols, xs)):
        for i, x in enumerate(a):
            if (i and not b[i - 1] < x) or (i + 1 < len(b) and not x < b[i + 1]):
                return False
    return True


def _blocks(lines: list[list[Fragment]]) -> list[tuple[list[list[Fragment]], list[float]]]:
    """Maximal runs of ≥ :data:`GRID_MIN_LINES` consecutive lines of ≥ 2 pieces drawn in the same columns,
    with the columns' x positions.

    A line belongs to the run when each of its pieces starts at one of the run's columns (a row with an
    empty cell has fewer pieces), or when the run's columns are all among its own (the run's first line
    had the empty cell: its columns become the line's), or when it fills the same cells in the same order,
    some of them aligned to the right or centred (``_same_slots``: a column of numbers set flush right).
    """
    out, cur, cols = [], [], []
    for line in lines + [[]]:
        xs = [round(f.x, 1) for f in line]
        if len(line) >= 2 and cur:
            if _within(xs, cols) or _same_slots(xs, cols):
                cur.append(line)
                continue
            if _within(cols, xs):
                cur.append(line)
                cols = xs
                continue
        if len(cur) >= GRID_MIN_LINES:
            out.append((cur, cols))
        cur, cols = ([line], xs) if len(line) >= 2 else ([], [])
    return out


def _cell_grids(lines: list[list[Fragment]]) -> list[tuple[list[list[Fragment]], list[float]]]:
    """Tables the extractor wrote one cell per line: in a run of consecutive one-piece lines, the pieces drawn
    on one baseline at two or more columns are a row; ≥ :data:`GRID_MIN_LINES` such rows are a table.

    Rows are returned top first, each sorted by x, with the columns' x positions (left to right).
    """
    out, run = [], []
    for line in lines + [[]]:
        if len(line) == 1:
            run.append(line[0])
            continue
        rows: list[list[Fragment]] = []
        for f in sorted(run, key=lambda f: -f.y):  # top first; one sort, not a search per piece
            if rows and abs(rows[-1][0].y - f.y) <= Y_TOLERANCE:
                rows[-1].append(f)
            else:
                rows.append([f])
        grid = [sorted(r, key=lambda f: f.x) for r in rows if len({round(f.x) for f in r}) >= 2]
        if len(grid) >= GRID_MIN_LINES:
            cols: list[float] = []
            for f in sorted((f for r in grid for f in r), key=lambda f: f.x):
                if not cols or f.x - cols[-1] > X_TOLERANCE:
                    cols.append(round(f.x, 1))
            out.append((grid, cols))
        run = []
    return out


def layout_evidence(fragments: Sequence[Fragment], page_text: str, offset: int, page: int) -> list[LayoutBlock]:
    """Tables and column blocks of one PDF page, placed in the canonical text.

    A **block** is a run of at least :data:`GRID_MIN_LINES` consecutive extracted lines (see
    ``_lines``) that each join two pieces or more, each starting at one of the block's columns
    (within :data:`X_TOLERANCE` points; ``_blocks``: a row with an empty cell stays in its table). A
    block of two columns whose pieces' median length is at least :data:`COLUMN_MIN_CHARACTERS`
    characters is **columns** (two columns of prose read across, line by line); any other block is a
    **table** whose cells became words on a line. A table drawn a column at a time comes out one cell
    per line (``_cell_grids``): a **table** read ``one cell per line``; two columns of prose drawn so
    are read right and give nothing.

    Parameters
    ----------
    fragments : sequence of Fragment
        The page's drawn text, in content-stream order.
    page_text : str
        The page's final text (as in the canonical text: ligatures folded, lines right-stripped,
        running lines removed when stripped).
    offset : int
        Where the page's text starts in the canonical text.
    page : int
        1-based page number.

    Returns
    -------
    list of LayoutBlock
        In page order; a block whose text cannot be found in ``page_text`` (e.g. stripped) is left out.
    """
    from .document import fold_ligatures

    lines = _lines(fragments)
    # where each fragment's text sits in the page text: found in order, never before the previous one
    place: dict[int, tuple[int, int]] = {}
    cursor = 0
    ordered = [f for f in fragments if f.text.strip()]
    for f in ordered:
        needle = fold_ligatures(f.text.strip())
        at = page_text.find(needle, cursor)
        if at == -1:
            continue
        place[id(f)] = (at, at + len(needle))
        cursor = at + len(needle)
    out = []
    found = [(block, cols, "lines of words") for block, cols in _blocks(lines)]
    found += [(grid, cols, "one cell per line") for grid, cols in _cell_grids(lines)]
    for block, cols, read in found:
        spans = [place[id(f)] for line in block for f in line if id(f) in place]
        if not spans:
            continue
        pieces = len(cols)
        lengths = sorted(len(f.text.strip()) for line in block for f in line)
        median = lengths[len(lengths) // 2] if len(lengths) % 2 else (lengths[len(lengths) // 2 - 1]
                                                                       + lengths[len(lengths) // 2]) / 2
        prose = pieces == 2 and median >= COLUMN_MIN_CHARACTERS
        if prose and read == "one cell per line":
            continue  # two columns of prose drawn a column at a time: read in the right order
        kind = "columns" if prose else "table"
        example = " | ".join(" ".join(f.text.split()) for f in block[0])
        out.append(LayoutBlock(kind, page, offset + min(s for s, _ in spans), offset + max(e for _, e in spans),
                               len(block), pieces, tuple(cols), example, read))
    return sorted(out, key=lambda b: b.start)


# --------------------------------------------------------------------------- the audit

def chunks_reaching(ranges: Iterable[tuple[int, int]], spans: Sequence[tuple[int, int]]) -> int:
    """How many chunks (``spans``: each chunk's ``[start, end)`` content range) reach ``ranges``.

    A chunk reaches a non-empty range when the two overlap (``start < b and a < end``), and an empty
    range ``(a, a)`` (a page with no text) when it spans it (``start < a < end``). Each chunk counts
    once, whatever the number of ranges it reaches.
    """
    spans = sorted(spans)
    starts = [s for s, _ in spans]
    hit: set[int] = set()
    for a, b in ranges:
        stop = bisect.bisect_left(starts, b if b > a else a)  # chunks starting before the range ends
        for i in range(stop):
            s, e = spans[i]
            if (a < e) if b > a else (s < a < e):
                hit.add(i)
    return len(hit)


def _visible(text: str) -> int:
    """Characters of ``text`` that are not whitespace (``str.isspace``): ``str.split()`` splits on exactly those,
    so joining its pieces counts them in C instead of one Python test per character."""
    return sum(map(len, text.split()))


def format_pages(pages: Sequence[int]) -> str:
    """Pages as people write them: ``1–3, 5`` for pages 1, 2, 3, 5 (sorted, each once)."""
    out, run = [], []
    for p in sorted(set(pages)):
        if run and p == run[-1] + 1:
            run.append(p)
            continue
        if run:
            out.append(f"{run[0]}–{run[-1]}" if len(run) > 1 else str(run[0]))
        run = [p]
    if run:
        out.append(f"{run[0]}–{run[-1]}" if len(run) > 1 else str(run[0]))
    return ", ".join(out)


def audit_document(doc_id: str, text: str, pages: Sequence[int], notes: ExtractionNotes | None = None,
                   chunk_spans: Sequence[tuple[int, int]] = (), reader_notes: Sequence[str] = ()
                   ) -> DocumentExtraction:
    """The extraction audit of one document (docs/definitions.md, *Extraction audit*).

    Parameters
    ----------
    doc_id : str
    text : str
        The canonical text.
    pages : sequence of int
        Each page's start offset (PDF); empty for a format without pages (then only the garbled
        check applies, to the whole text as page 0).
    notes : ExtractionNotes or None
        What the extractor recorded (layout blocks, stripped lines); None: not recorded (the table
        and column checks are not made, ``layout_checked`` is False).
    chunk_spans : sequence of (int, int)
        The document's chunks' ``[start, end)`` content ranges, to count what each finding reaches.
    reader_notes : sequence of str
        What the format's reader left out or changed, one note each (``Document.locators.notes``: a
        hidden sheet, unaccepted tracked changes, repeated caption lines); they become one
        ``reader_notes`` finding, so no loss is silent.

    Returns
    -------
    DocumentExtraction
        Findings in the order no_text_layer, running_lines, tables, columns, garbled, reader_notes;
        only those that found something.
    """
    ranges = page_ranges(text, pages)
    texts = [text[s:e] for s, e in ranges]
    # once stripped, a page's edges are the lines that lay under its running lines: the rule was applied to
    # the pages as drawn, at extraction, and is not applied again to what is left
    stripped = notes.stripped if notes is not None else ()
    running = find_running_lines(texts) if pages and not stripped else []
    per_page = _running_spans(texts, running)
    stats = []
    for i, ((s, e), t) in enumerate(zip(ranges, texts)):
        own = t
        for a, b in sorted(per_page[i], reverse=True):
            own = own[:a] + own[b:]
        chars = _visible(t)
        bad = bad_characters(t)
        stats.append(PageStats(i + 1 if pages else 0, s, e, chars, _visible(own), bad,
                               round(bad / chars, 4) if chars else 0.0))
    findings: list[ExtractionFinding] = []

    def add(check: str, pgs, rngs, evidence: str) -> None:
        rngs = tuple(rngs)
        findings.append(ExtractionFinding(check, tuple(pgs), rngs, evidence, chunks_reaching(rngs, chunk_spans)))

    blank = [p for p in stats if pages and not p.has_text]
    if blank:
        add("no_text_layer", [p.page for p in blank], [(p.start, p.start) if p.characters == 0 else (p.start, p.end)
                                                      for p in blank],
            f"page{'s' if len(blank) > 1 else ''} {format_pages([p.page for p in blank])} of {len(stats)} "
            "ha" + ("ve" if len(blank) > 1 else "s") + " no text of its own (a scan needs OCR)")
    placed = [replace(r, ranges=tuple((ranges[p - 1][0] + a, ranges[p - 1][0] + b) for p, (a, b)
                                      in zip(r.pages, r.ranges))) for r in running]
    if placed:
        add("running_lines", sorted({p for r in placed for p in r.pages}), [x for r in placed for x in r.ranges],
            "; ".join(f"{r.where} {r.text!r} on pages {format_pages(r.pages)} "
                      f"({chunks_reaching(r.ranges, chunk_spans)} chunks)" for r in placed))
    layout = notes.layout if notes is not None else ()
    for kind, check in (("table", "tables"), ("columns", "columns")):
        blocks = [b for b in layout if b.kind == kind]
        if not blocks:
            continue
        if kind == "table":
            ev = "; ".join(f"page {b.page}: {b.lines} rows × {b.pieces} cells read {b.read_as}, first row "
                           f"{b.example!r}" for b in blocks)
        else:
            ev = "; ".join(f"page {b.page}: {b.lines} lines join a left and a right column (x = {b.x[0]:g} and "
                           f"{b.x[1]:g} pt), e.g. {b.example!r}" for b in blocks)
        add(check, sorted({b.page for b in blocks}), [(b.start, b.end) for b in blocks], ev)
    garbled = [p for p in stats if p.garbled]
    if garbled:
        where = (f"pages {format_pages([p.page for p in garbled])}" if pages else "the text")
        worst = max(garbled, key=lambda p: (p.garbled_share, -p.page))
        add("garbled", [p.page for p in garbled if p.page], [(p.start, p.end) for p in garbled],
            f"{where}: over {GARBLED_BOUND:.0%} private-use, unassigned, control or U+FFFD characters "
            f"(worst {worst.garbled_share:.1%}: {worst.bad} of {worst.characters})")
    if reader_notes:
        add("reader_notes", (), (), "; ".join(reader_notes))
    searchable = any(p.has_text and not p.garbled for p in stats)
    return DocumentExtraction(doc_id, tuple(stats), tuple(findings), searchable,
                              notes is not None and notes.layout_checked, tuple(stripped))
