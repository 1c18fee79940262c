"""Word: ``.docx`` files (python-docx) as canonical markdown, located by ``#char=``.

The body is read in order: the Title style gives the title, Heading styles give the headings
(Heading 1 → ``## `` section, Heading 2–9 → ``### ``), list paragraphs are kept as list lines,
tables are written as spreadsheets are (the header row once, then ``header: value`` rows).
The body is Word's final view (tracked insertions kept, deletions dropped) read through content
controls, and every heading is kept in the document's outline (its heading path). Headers,
footers, footnotes, comments and text boxes are not read; unaccepted changes and text boxes are
named in the document's notes (docs/definitions.md, *Canonical text*; docs/readers.md).
"""

from __future__ import annotations

import io
import re
from dataclasses import replace

from .document import Document
from .locators import LocatorMap
from .spreadsheet import OLE_MAGIC, TextBuilder, _ole_reason, cell_text, render_table

__all__ = ["docx_document"]

_HEADING = re.compile(r"^heading ([1-9])$", re.I)
_LIST_LEVEL = re.compile(r"^list(?: \w+)*? ([2-9])$", re.I)


def _style_kind(style) -> tuple[str, int]:
    """``("title", 1)``, ``("heading", n)`` or ``("", 0)`` from a paragraph style and its base styles."""
    for _ in range(8):
        if style is None:
            break
        name = (style.name or "").strip()
        if name.lower() == "title":
            return "title", 1
        m = _HEADING.match(name)
        if m:
            return "heading", int(m.group(1))
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


def _paragraph_text(p) -> str:
    """A paragraph's text in Word's final view: python-docx's run text (``w:t``, tabs, line breaks) of every
    run :func:`_runs` keeps."""
    return "".join(r.text for r in _runs(p))


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


def _cell_text(tc) -> str:
    """A table cell's text: its paragraphs in Word's final view (those of a nested table and of content
    controls included), one line each."""
    return "\n".join(_paragraph_text(p) for p in tc.iter(_W + "p")
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


def _table_rows(table) -> list:
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
            text = cell_text(_cell_text(tc))
            if text:
                cells.append((c + 1, text, r2 + 1, c2 + 1))
        if cells:
            rows.append((r + 1, cells))
    return rows


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
    title = None
    body = TextBuilder()
    outline: list[tuple[int, int, str]] = []  # (offset in body, level as styled, text)
    in_list = False
    for item in items:
        if isinstance(item, Table):
            rows = _table_rows(item)
            if rows:
                render_table(body, rows, "", label=lambda c: f"column {c}")
                in_list = False
            continue
        text = _paragraph_text(item._p).replace("\r\n", "\n").replace("\r", "\n").strip()
        if not text:
            continue
        style = styles.of(item)
        kind, level = styles.kind(style)
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
    lmap = LocatorMap("text", notes=tuple(_reader_notes(body_el)),
                      outline=tuple((offset + at, lv, t) for at, lv, t in outline))
    return replace(doc, title=title, locators=lmap)
