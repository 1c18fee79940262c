"""Word: ``.docx`` files (python-docx) as canonical markdown, located by ``#char=``.

The body is read in order: the Title style gives the title, Heading styles give the headings
(Heading 1 → ``## `` section, Heading 2–9 → ``### ``), list paragraphs are kept as list lines,
tables are written as spreadsheets are (the header row once, then ``header: value`` rows).
The body is Word's final view (tracked insertions kept, deletions dropped) read through content
controls, and every heading is kept in the document's outline (its heading path); a paragraph with an
outline level (Word's navigation pane) is a heading like a Heading style. Footnotes and endnotes are
read at the end of the document, each after its reference mark (``[^1]`` in the text where Word shows the
number); symbol characters (``w:sym``, a Symbol or Wingdings font) are read as the Unicode character they
draw. Headers, footers, comments and text boxes are not read; they, unaccepted changes, symbols
without a Unicode mapping and notes whose mark is not in the text read are named in the document's
notes (docs/definitions.md, *Canonical text*; docs/readers.md).
"""

from __future__ import annotations

import io
import re
from dataclasses import replace

from .document import Document
from .locators import LocatorMap
from .spreadsheet import OLE_MAGIC, TextBuilder, _ole_reason, cell_text, render_table

__all__ = ["docx_document", "symbol_character"]

_HEADING = re.compile(r"^heading ([1-9])$", re.I)
_LIST_LEVEL = re.compile(r"^list(?: \w+)*? ([2-9])$", re.I)


def _outline_level(ppr) -> int | None:
    """The outline level a paragraph's (or a style's) properties ``ppr`` give, as a heading level (Word's 0 → 1,
    8 → 9), 0 for body text (Word's 9), None when they set none."""
    el = ppr.find(_W + "outlineLvl") if ppr is not None else None
    if el is None:
        return None
    try:
        val = int(el.get(_W + "val"))
    except (TypeError, ValueError):
        return None
    return val + 1 if 0 <= val <= 8 else 0


def _style_kind(style) -> tuple[str, int]:
    """``("title", 1)``, ``("heading", n)`` or ``("", 0)`` from a paragraph style and its base styles.

    A style named Title or Heading N decides; else the first heading outline level set along the chain (a
    custom "Subheading" style with outline level 2 is a Heading 2, as Word's navigation pane shows it). An
    outline level only makes headings: "body text" (Word's TOC Heading sets it) never unmakes one, so a style
    based on Heading 1 stays a heading whatever its outline level.
    """
    for _ in range(8):
        if style is None:
            break
        name = (style.name or "").strip()
        if name.lower() == "title":
            return "title", 1
        m = _HEADING.match(name)
        if m:
            return "heading", int(m.group(1))
        level = _outline_level(style.element.find(_W + "pPr"))
        if level:
            return "heading", level
        style = style.base_style
    return "", 0


class _Styles:
    """Paragraph styles by id, read once (python-docx's ``paragraph.style`` scans every style on each call)."""

    def __init__(self, document) -> None:
        from docx.enum.style import WD_STYLE_TYPE

        self._by_id = {s.style_id: s for s in document.styles if s.type == WD_STYLE_TYPE.PARAGRAPH}
        self._default = document.styles.default(WD_STYLE_TYPE.PARAGRAPH)
        self._kind: dict = {}

    def of(self, paragraph):
        sid = paragraph._p.style
        return self._by_id.get(sid, self._default) if sid else self._default

    def kind(self, style) -> tuple[str, int]:
        key = getattr(style, "style_id", None)
        if key not in self._kind:
            self._kind[key] = _style_kind(style)
        return self._kind[key]


def _num_pr(paragraph, style):
    """The numbering properties of a paragraph, or of its style chain: ``(numId, ilvl)`` or None."""
    ppr = paragraph._p.pPr
    if ppr is not None and ppr.numPr is not None and ppr.numPr.numId is not None:
        ilvl = ppr.numPr.ilvl.val if ppr.numPr.ilvl is not None else None
        return int(ppr.numPr.numId.val), ilvl
    for _ in range(8):
        if style is None:
            break
        sppr = style.element.pPr
        if sppr is not None and sppr.numPr is not None and sppr.numPr.numId is not None:
            ilvl = sppr.numPr.ilvl.val if sppr.numPr.ilvl is not None else None
            return int(sppr.numPr.numId.val), ilvl
        style = style.base_style
    return None


class _Numbering:
    """Bullet or number for each list paragraph, counted as Word counts them (per list, per level)."""

    def __init__(self, document) -> None:
        try:
            self._root = document.part.numbering_part.element
        except Exception:  # a file without a numbering part
            self._root = None
        self._counts: dict[tuple[int, int], int] = {}
        self._formats: dict[tuple[int, int], str] = {}

    def _format(self, num_id: int, ilvl: int) -> str:
        if (num_id, ilvl) not in self._formats:
            self._formats[(num_id, ilvl)] = self._lookup(num_id, ilvl)
        return self._formats[(num_id, ilvl)]

    def _lookup(self, num_id: int, ilvl: int) -> str:
        if self._root is None:
            return ""
        abstract = self._root.xpath(f'w:num[@w:numId="{num_id}"]/w:abstractNumId/@w:val')
        if not abstract:
            return ""
        fmt = self._root.xpath(f'w:abstractNum[@w:abstractNumId="{abstract[0]}"]/w:lvl[@w:ilvl="{ilvl}"]'
                               "/w:numFmt/@w:val")
        return fmt[0] if fmt else ""

    def marker(self, paragraph, style) -> tuple[str, int] | None:
        """``(marker, level)`` of a list paragraph (``"- "`` or ``"3. "``), None for any other paragraph."""
        pr = _num_pr(paragraph, style)
        name = (style.name or "") if style is not None else ""
        if pr is None:
            if not name.lower().startswith("list"):
                return None
            num_id, ilvl = -1, None
        else:
            num_id, ilvl = pr
        if ilvl is None:
            m = _LIST_LEVEL.match(name)
            ilvl = int(m.group(1)) - 1 if m else 0
        ilvl = int(ilvl)
        fmt = self._format(num_id, ilvl) if num_id >= 0 else ""
        if not fmt:
            fmt = "decimal" if "number" in name.lower() else "bullet"
        if fmt == "none":
            return "", ilvl
        if fmt == "bullet":
            return "- ", ilvl
        for key in [k for k in self._counts if k[0] == num_id and k[1] > ilvl]:
            del self._counts[key]  # a shallower item restarts the deeper levels
        n = self._counts.get((num_id, ilvl), 0) + 1
        self._counts[(num_id, ilvl)] = n
        return f"{n}. ", ilvl


_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
#: What Word's final view leaves out of a paragraph: deletions, the source of a move, text boxes (not read).
_NOT_FINAL = {_W + "del", _W + "moveFrom", _W + "txbxContent"}
#: The second copy of an alternate content (markup compatibility): its first choice is read.
_FALLBACK = "{http://schemas.openxmlformats.org/markup-compatibility/2006}Fallback"
#: Block containers read through in document order: content controls, custom XML, block-level insertions.
_THROUGH = {_W + "sdt", _W + "sdtContent", _W + "customXml", _W + "ins", _W + "moveTo", _W + "smartTag"}


def _runs(element) -> list:
    """The runs (``w:r``) of ``element`` in Word's final view, in document order.

    Runs inside insertions, content controls, hyperlinks, fields and smart tags are kept; runs inside
    deletions (``w:del``), a move's source (``w:moveFrom``) and text boxes (``w:txbxContent``) are not.
    """
    out = []

    def walk(el) -> None:
        for child in el:
            tag = child.tag
            if not isinstance(tag, str) or tag in _NOT_FINAL or tag == _FALLBACK:
                continue
            if tag == _W + "r":
                out.append(child)
            elif tag not in (_W + "pPr", _W + "rPr"):
                walk(child)

    walk(element)
    return out


#: Adobe's Symbol encoding (Word's "Symbol" font), codes 0x20–0xFE: the Unicode character each code draws;
#: ``\0`` where none exists (the pieces of large brackets and of the radical, the arrow extenders, the logo).
_SYMBOL = (" !∀#∃%&∋()∗+,−./0123456789:;<=>?≅ΑΒΧΔΕΦΓΗΙϑΚΛΜΝΟΠΘΡΣΤΥςΩΞΨΖ[∴]⊥_\0αβχδεφγηιϕκλμνοπθρστυϖωξψζ{|}∼"
           + "\0" * 33 + "€ϒ′≤⁄∞ƒ♣♦♥♠↔←↑→↓°±″≥×∝∂•÷≠≡≈…\0\0↵ℵℑℜ℘⊗⊕∅∩∪⊃⊇⊄⊂⊆∈∉∠∇®©™∏√⋅¬∧∨⇔⇐⇑⇒⇓◊〈®©™∑"
           + "\0" * 10 + "\0〉∫⌠\0⌡" + "\0" * 9)
#: Wingdings codes that Word's AutoCorrect and bullets use, and the Unicode character each draws
#: (``-->`` is Wingdings F0E0, ``:)`` F04A, the check-mark bullet F0FC).
_WINGDINGS = {0x4A: "☺", 0x4B: "😐", 0x4C: "☹", 0x6C: "●", 0x6E: "■", 0x6F: "□", 0x71: "❑", 0x75: "◆", 0x76: "❖",
              0xA7: "▪", 0xD8: "➢", 0xDF: "←", 0xE0: "→", 0xE1: "↑", 0xE2: "↓", 0xEF: "⇦", 0xF0: "⇨", 0xF1: "⇧",
              0xF2: "⇩", 0xFB: "✗", 0xFC: "✓", 0xFD: "☒", 0xFE: "☑"}
#: What python-docx reads as a run's text (each child's ``str``), in the run's order.
_RUN_TEXT = {_W + "t", _W + "tab", _W + "br", _W + "cr", _W + "noBreakHyphen", _W + "ptab"}
#: A run's children that python-docx's run text leaves out and this reader reads.
_MARKED = {_W + "sym", _W + "footnoteReference", _W + "endnoteReference"}


def symbol_character(font: str, code: str) -> str | None:
    """The Unicode character a Word symbol (``<w:sym w:font="Symbol" w:char="F0B3"/>``) draws, or None.

    Parameters
    ----------
    font : str
        The symbol's font (``w:font``); Symbol and Wingdings are mapped.
    code : str
        Its character code in hex (``w:char``). A symbol font's codes lie in U+F020–U+F0FF (Word adds
        0xF000 to the font's own code) or are given as the font's code alone.

    Returns
    -------
    str or None
        ``≥`` for Symbol F0B3, ``→`` for Wingdings F0E0; the code itself as a Unicode character for a
        text font (its code is a Unicode code point); None for a code without a mapping.
    """
    try:
        n = int(code, 16)
    except (TypeError, ValueError):
        return None
    own = n - 0xF000 if 0xF000 <= n <= 0xF0FF else n
    name = (font or "").strip().lower()
    if name == "symbol":
        ch = _SYMBOL[own - 0x20] if 0x20 <= own <= 0xFE else "\0"
        return ch if ch != "\0" else None
    if name == "wingdings":
        return _WINGDINGS.get(own)
    if n == own and n >= 0x20 and not 0xD800 <= n <= 0xDFFF and n <= 0x10FFFF:
        return chr(n)  # a text font: the code is the character's code point
    return None


class _Marks:
    """Footnote and endnote marks given as the text is read, and the symbols found without a mapping.

    Footnotes are numbered 1, 2, 3… and endnotes i, ii, iii… in the order their marks are read (Word's
    default numbering); a note without text gives no mark.
    """

    def __init__(self, footnotes: dict[str, str], endnotes: dict[str, str],
                 unmapped_in: dict[tuple[str, str], list[str]] | None = None) -> None:
        self.notes = {"footnote": footnotes, "endnote": endnotes}
        self._unmapped_in = unmapped_in or {}  # (kind, note id) → the symbols without a mapping in that note
        self.read: dict[str, list[tuple[str, str]]] = {"footnote": [], "endnote": []}  # (mark, text)
        self.given: dict[tuple[str, str], str] = {}  # (kind, note id) → its mark's label
        self.unmapped: list[str] = []  # "Wingdings F0E8"

    def mark(self, kind: str, note_id: str | None) -> str:
        key = (kind, note_id or "")
        if key in self.given:
            return f"[^{self.given[key]}]"
        text = self.notes[kind].get(note_id or "")
        if not text:
            return ""
        n = len(self.read[kind]) + 1
        label = str(n) if kind == "footnote" else _roman(n)
        self.given[key] = label
        self.read[kind].append((label, text))
        self.unmapped += self._unmapped_in.get(key, [])
        return f"[^{label}]"

    def symbol(self, el) -> str:
        font, code = el.get(_W + "font") or "", el.get(_W + "char") or ""
        ch = symbol_character(font, code)
        if ch is None:
            self.unmapped.append(f"{font or 'no font'} {code.upper() or '(no code)'}")
            return ""
        return ch


def _roman(n: int) -> str:
    """``n`` in lower-case Roman numerals (Word's endnote numbers: i, ii, iii, iv…)."""
    out = ""
    for value, letters in ((1000, "m"), (900, "cm"), (500, "d"), (400, "cd"), (100, "c"), (90, "xc"), (50, "l"),
                           (40, "xl"), (10, "x"), (9, "ix"), (5, "v"), (4, "iv"), (1, "i")):
        while n >= value:
            out += letters
            n -= value
    return out


def _run_text(r, marks: "_Marks | None") -> str:
    """A run's text: python-docx's (``w:t``, tabs, line breaks) with its symbols (``w:sym``) as the characters they
    draw and its footnote and endnote references as their marks (``[^1]``; none without ``marks``)."""
    if not any(c.tag in _MARKED for c in r):
        return r.text
    out = []
    for c in r:
        if c.tag in _RUN_TEXT:
            out.append(str(c))
        elif c.tag == _W + "sym":
            out.append(marks.symbol(c) if marks is not None else (symbol_character(
                c.get(_W + "font") or "", c.get(_W + "char") or "") or ""))
        elif marks is not None and c.tag in (_W + "footnoteReference", _W + "endnoteReference"):
            out.append(marks.mark("footnote" if c.tag == _W + "footnoteReference" else "endnote", c.get(_W + "id")))
    return "".join(out)


def _paragraph_text(p, marks: "_Marks | None" = None) -> str:
    """A paragraph's text in Word's final view: the text (:func:`_run_text`) of every run :func:`_runs` keeps."""
    return "".join(_run_text(r, marks) for r in _runs(p))


def _blocks(container) -> list:
    """The paragraphs (``w:p``) and tables (``w:tbl``) of a body, in document order, read through content
    controls (``w:sdt``), custom XML and block-level insertions; a block-level deletion or move source is dropped."""
    out = []
    for child in container:
        tag = child.tag
        if not isinstance(tag, str):
            continue
        if tag in (_W + "p", _W + "tbl"):
            out.append(child)
        elif tag in _THROUGH:
            out += _blocks(child)
    return out


def _cell_text(tc, marks: "_Marks | None" = None) -> str:
    """A table cell's text: its paragraphs in Word's final view (those of a nested table and of content
    controls included), one line each."""
    return "\n".join(_paragraph_text(p, marks) for p in tc.iter(_W + "p")
                     if not any(a.tag == _W + "txbxContent" for a in p.iterancestors()))


def _unwrap_controls(tbl) -> None:
    """Lift the rows and cells a content control or custom XML holds (a form's repeating section) into their
    table, in place, in this in-memory copy of the document: python-docx reads a table's own rows and cells only."""
    for el in list(tbl.iter(_W + "sdt", _W + "customXml")):
        parent = el.getparent()
        content = el.find(_W + "sdtContent") if el.tag == _W + "sdt" else el
        if parent is None or content is None or parent.tag not in (_W + "tbl", _W + "tr"):
            continue
        at = parent.index(el)
        for child in [c for c in content if isinstance(c.tag, str) and c.tag != _W + "customXmlPr"]:
            parent.insert(at, child)
            at += 1
        parent.remove(el)


def _table_rows(table, marks: "_Marks | None" = None) -> list:
    """The table's non-empty cells as :func:`~audit.ingest.spreadsheet.render_table` reads them.

    A merged cell (python-docx repeats it in each grid cell it covers) is given once, at its
    top-left cell, with its last row and column. A cell's text is :func:`_cell_text`.
    """
    _unwrap_controls(table._tbl)
    grid = [[c._tc for c in row.cells] for row in table.rows]
    seen: set = set()
    rows = []
    for r, row in enumerate(grid):
        cells = []
        for c, tc in enumerate(row):
            if id(tc) in seen:
                continue
            seen.add(id(tc))
            c2 = c
            while c2 + 1 < len(row) and row[c2 + 1] is tc:
                c2 += 1
            r2 = r
            while r2 + 1 < len(grid) and c < len(grid[r2 + 1]) and grid[r2 + 1][c] is tc:
                r2 += 1
            text = cell_text(_cell_text(tc, marks))
            if text:
                cells.append((c + 1, text, r2 + 1, c2 + 1))
        if cells:
            rows.append((r + 1, cells))
    return rows


_REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/"
#: The parts beside the body that a Word file relates to its document, by relationship type.
_PARTS = {"footnotes": _REL + "footnotes", "endnotes": _REL + "endnotes", "header": _REL + "header",
          "footer": _REL + "footer", "comments": _REL + "comments"}


def _related(document, kind: str) -> list:
    """The XML roots of the parts of ``kind`` (a key of :data:`_PARTS`) the document relates to, in relationship
    order, parsed as python-docx parses the body (its run elements read their text alike); a part that does not
    parse is left out (the body is what matters)."""
    from docx.oxml.parser import parse_xml

    out = []
    for rel in document.part.rels.values():
        if rel.is_external or rel.reltype != _PARTS[kind]:
            continue
        try:
            out.append(parse_xml(rel.target_part.blob))
        except Exception:  # a damaged side part: the body is still read
            continue
    return out


def _notes_of(document, kind: str, unmapped: dict) -> dict[str, str]:
    """``id → text`` of the footnotes or endnotes (``kind`` ``footnote``/``endnote``) Word numbers: every note
    but the separators, its paragraphs in the final view, one line each; the symbols without a mapping in each
    go into ``unmapped`` under ``(kind, id)`` (counted once the note is read)."""
    out = {}
    for root in _related(document, kind + "s"):
        for note in root.iter(_W + kind):
            if note.get(_W + "type") not in (None, "normal"):
                continue  # the separator lines Word draws above the notes
            own = _Marks({}, {})
            lines = [" ".join(_paragraph_text(p, own).split()) for p in note.iter(_W + "p")]
            note_id = note.get(_W + "id") or ""
            out[note_id] = "\n".join(x for x in lines if x)
            if own.unmapped:
                unmapped[(kind, note_id)] = own.unmapped
    return out


def _side_notes(document, marks: _Marks) -> list[str]:
    """What the parts beside the body hold that is not read: notes whose mark is not in the text read, page
    headers and footers, comments; and the symbols without a Unicode mapping. One note each."""
    notes = []
    for kind in ("footnote", "endnote"):
        left = [t for i, t in marks.notes[kind].items() if t and (kind, i) not in marks.given]
        if left:
            notes.append(f"{len(left)} {kind}{'s' * (len(left) != 1)} whose reference mark is not in the text read "
                         f"(in a text box or a deletion): not read ({sum(map(len, left))} characters)")
    for kind, what in (("header", "page header"), ("footer", "page footer")):
        texts = [t for t in (_part_text(r) for r in _related(document, kind)) if t]
        if texts:
            notes.append(f"{len(texts)} {what}{'s' * (len(texts) != 1)} not read ({sum(map(len, texts))} "
                         f"characters: {texts[0][:60]!r})")
    comments = [t for r in _related(document, "comments") for t in (_part_text(c) for c in r.iter(_W + "comment"))
                if t]
    if comments:
        notes.append(f"{len(comments)} comment{'s' * (len(comments) != 1)} not read "
                     f"({sum(map(len, comments))} characters)")
    if marks.unmapped:
        seen = list(dict.fromkeys(marks.unmapped))
        notes.append(f"{len(marks.unmapped)} symbol character{'s' * (len(marks.unmapped) != 1)} without a Unicode "
                     f"mapping left out ({', '.join(seen[:5])}{', …' if len(seen) > 5 else ''})")
    return notes


def _part_text(el) -> str:
    """The text of an element of a side part (a header, a comment): its paragraphs in the final view, whitespace
    runs as one space."""
    return " ".join(" ".join(_paragraph_text(p) for p in el.iter(_W + "p")).split())


def _reader_notes(body) -> list[str]:
    """What the body holds that Word's final view or this reader leaves out, one note each (never a silent drop)."""
    notes = []
    ins = len(body.findall(f".//{_W}ins")) + len(body.findall(f".//{_W}moveTo"))
    dels = len(body.findall(f".//{_W}del")) + len(body.findall(f".//{_W}moveFrom"))
    if ins or dels:
        notes.append(f"the document holds unaccepted tracked changes ({ins} insertion{'s' * (ins != 1)}, "
                     f"{dels} deletion{'s' * (dels != 1)}): read as Word's final view, insertions kept, "
                     "deletions dropped")
    boxes = [b for b in body.iter(_W + "txbxContent")
             if not any(a.tag.endswith("}Fallback") for a in b.iterancestors() if isinstance(a.tag, str))]
    words = sum(len(_paragraph_text(p)) for b in boxes for p in b.iter(_W + "p"))
    if boxes:
        notes.append(f"{len(boxes)} text box{'es' * (len(boxes) != 1)} not read ({words} characters)")
    return notes


def docx_document(doc_id: str, raw: bytes, fallback_title: str) -> Document:
    """Read a ``.docx`` file with python-docx into a :class:`Document` (canonical markdown).

    Canonical text: ``# title`` (the first paragraph in the Title style, else the core
    properties' title, else ``fallback_title``), then the body's blocks in order, separated by a
    blank line: a paragraph's text (tabs and line breaks kept, surrounding whitespace removed);
    a heading (Heading 1 → ``## ``, Heading 2–9 → ``### ``, a later Title paragraph → ``## ``; a
    style based on one of these counts as it); consecutive list paragraphs as one block of lines,
    ``- item`` for a bullet, ``N. item`` for a numbered list (numbers recounted in decimal per list
    and level), indented two spaces a level; a table as :func:`~audit.ingest.spreadsheet.render_table`
    writes it (its first row the header, the labels of columns without one ``column N``). Empty
    paragraphs are dropped. Runs are read in Word's final view (:func:`_runs`: insertions kept,
    deletions and move sources dropped) and through content controls, block, row, cell and inline.
    Locator: ``#char=`` in this text; ``locators`` (kind ``text``) holds the outline, every heading
    with its level, which gives a range its heading path, and the notes (unaccepted tracked
    changes, text boxes not read).

    A footnote or endnote reference gives its mark in the text (``[^1]``: footnotes 1, 2, 3…, endnotes i, ii,
    iii…, in the order read) and the notes follow the body under ``## Footnotes`` and ``## Endnotes``, one
    ``[^1]: text`` paragraph each (in the outline as headings of level 1). A symbol (``w:sym``) gives the
    character :func:`symbol_character` maps it to. A paragraph whose style (or own properties) sets an
    outline level is a heading of that level. The notes also name page headers, footers and comments (not
    read), footnotes whose mark is not in the text read, and symbols without a mapping (left out).

    Raises
    ------
    ValueError
        ``empty file``; ``password-protected Word file (…)``; ``Word 97-2003 (.doc) content …``;
        ``corrupt Word file (…)``; ``no text in the Word file``.
    """
    if not raw.strip():
        raise ValueError("empty file")
    if raw.startswith(OLE_MAGIC):
        raise ValueError(_ole_reason(raw, "Word file", "Word 97-2003 (.doc)"))
    try:
        import docx
        from docx.table import Table
        from docx.text.paragraph import Paragraph

        document = docx.Document(io.BytesIO(raw))
        body_el = document.element.body
        items = [Table(b, document) if b.tag == _W + "tbl" else Paragraph(b, document)
                 for b in _blocks(body_el)]
        core_title = document.core_properties.title or ""
    except Exception as e:  # python-docx and zipfile raise many types for damaged files
        first = str(e).splitlines()[0] if str(e) else "unreadable"
        raise ValueError(f"corrupt Word file ({type(e).__name__}: {first})") from None
    numbering = _Numbering(document)
    styles = _Styles(document)
    unmapped: dict = {}
    marks = _Marks(_notes_of(document, "footnote", unmapped), _notes_of(document, "endnote", unmapped), unmapped)
    title = None
    body = TextBuilder()
    outline: list[tuple[int, int, str]] = []  # (offset in body, level as styled, text)
    in_list = False
    for item in items:
        if isinstance(item, Table):
            rows = _table_rows(item, marks)
            if rows:
                render_table(body, rows, "", label=lambda c: f"column {c}")
                in_list = False
            continue
        text = _paragraph_text(item._p, marks).replace("\r\n", "\n").replace("\r", "\n").strip()
        if not text:
            continue
        style = styles.of(item)
        kind, level = styles.kind(style)
        own = _outline_level(item._p.find(_W + "pPr"))
        if own and kind != "title":  # the paragraph's own outline level makes it a heading of that level
            kind, level = "heading", own
        if kind == "title" and title is None:
            title = " ".join(text.split())
            continue
        if kind:
            words = " ".join(text.split())
            outline.append((body.n + (2 if body.n else 0), 1 if kind == "title" else level, words))
            body.heading(2 if kind == "title" or level == 1 else 3, words)
            in_list = False
            continue
        mark = numbering.marker(item, style)
        if mark is not None:
            if in_list:
                body.add("\n")
            else:
                body.block()
            body.add("  " * mark[1] + mark[0] + text)
            in_list = True
            continue
        body.block()
        body.add(text)
        in_list = False
    for kind, heading in (("footnote", "Footnotes"), ("endnote", "Endnotes")):
        if marks.read[kind] and body.n:
            outline.append((body.n + 2, 1, heading))
            body.heading(2, heading)
            for label, note in marks.read[kind]:
                body.block()
                body.add(f"[^{label}]: {note}")
    title = title or " ".join(core_title.split()) or fallback_title
    if not body.n:
        raise ValueError("no text in the Word file")
    out = TextBuilder()
    out.heading(1, title)
    out.block()
    offset = out.n
    out.add(body.text)
    headings = out.headings + [(line + out.text.count("\n", 0, offset), lvl, t) for line, lvl, t in body.headings]
    from .markdown import markdown_document

    doc = markdown_document(doc_id, out.text, source=doc_id, extractor="docx", fallback_title=title,
                            headings=headings)
    lmap = LocatorMap("text", notes=tuple(_reader_notes(body_el) + _side_notes(document, marks)),
                      outline=tuple((offset + at, lv, t) for at, lv, t in outline))
    return replace(doc, title=title, locators=lmap)
