"""A reader accounts for the text of its source (issue 40, the rule behind the readers).

One property a format: a file is written by the library that writes that format, from values drawn by
hypothesis; the format's own text nodes are read back by an independent reader (lxml over the OOXML part
for Word's ``w:t`` outside deletions, openpyxl in normal mode for a sheet's values, the csv module for a
CSV's fields, webvtt-py for cue payloads, pypdf for a PDF page's text layer), never by the product's code;
and every character of those nodes is in what the product's reader returns, or the difference is a named
note of the document (``locators.notes``, the extraction notes), never a silent drop. Markup the product
adds (``#`` headings, ``header:`` labels, `` | ``) and whitespace runs are not text. Derandomized (CI
gives the same examples every run); the slow tier holds the formats that take seconds.
"""

from __future__ import annotations

import csv
import io
import re
import zipfile

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as hs
from lxml import etree

from audit.ingest import document_from_bytes

W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
#: Letters a team's files hold (accents, a curly apostrophe), never markup of ours at a line's start.
WORDS = hs.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJ0123456789 .,;:'’éüß-", min_size=1, max_size=30)


def _collapse(text: str) -> str:
    return " ".join(text.split())


def _in_order(pieces, text: str) -> list[str]:
    """The pieces (whitespace collapsed) not found in ``text`` (collapsed) in order, each after the previous one."""
    hay, at, missing = _collapse(text), 0, []
    for p in pieces:
        p = _collapse(p)
        if not p:
            continue
        i = hay.find(p, at)
        if i < 0:
            missing.append(p)
        else:
            at = i + len(p)
    return missing


# --------------------------------------------------------------------------- Word

def _w(tag, *children, **attrs):
    el = etree.Element(f"{{{W}}}{tag}", {f"{{{W}}}{k}": v for k, v in attrs.items()})
    el.extend(children)
    return el


def _r(text: str, deleted: bool = False):
    t = _w("delText" if deleted else "t")
    t.text = text
    t.set("{http://www.w3.org/XML/1998/namespace}space", "preserve")
    return _w("r", t)


#: Symbols (``w:sym``) by font and code, and the character each draws in the font's published encoding (Adobe's
#: Symbol: 0xB3 greaterequal, 0xA3 lessequal, 0xAE arrowright; Wingdings 0xE0 a right arrow, 0xFC a check mark);
#: None for a code the reader has no mapping for (it must say so).
SYMBOLS = {("Symbol", "F0B3"): "≥", ("Symbol", "F0A3"): "≤", ("Symbol", "F0AE"): "→", ("Wingdings", "F0E0"): "→",
           ("Wingdings", "F0FC"): "✓", ("Wingdings", "F0E8"): None}
#: A run: its text and how it sits in the paragraph (plain, inserted, deleted, inside an inline content control),
#: a footnote reference (the text is the note's; ``fn-del``: the reference inside a deletion), or a symbol.
RUN = hs.one_of(hs.tuples(WORDS, hs.sampled_from(["plain", "plain", "ins", "del", "sdt"])),
                hs.tuples(WORDS, hs.sampled_from(["fn", "fn", "fn-del"])),
                hs.tuples(hs.sampled_from(sorted(SYMBOLS)), hs.just("sym")))
#: A block: a paragraph of runs, a heading (level 1-3), a paragraph in a block content control, or a table.
BLOCK = hs.one_of(
    hs.tuples(hs.just("p"), hs.lists(RUN, min_size=1, max_size=4)),
    hs.tuples(hs.just("h"), hs.tuples(hs.integers(1, 3), WORDS)),
    hs.tuples(hs.just("sdt"), hs.lists(RUN, min_size=1, max_size=3)),
    hs.tuples(hs.just("table"), hs.lists(hs.lists(WORDS, min_size=2, max_size=2), min_size=1, max_size=3)),
)


def _footnotes_part(d, notes: dict[int, str]) -> None:
    """A footnotes part holding ``notes`` after Word's two separators (python-docx writes none of its own)."""
    from docx.opc.constants import CONTENT_TYPE as CT
    from docx.opc.constants import RELATIONSHIP_TYPE as RT
    from docx.opc.packuri import PackURI
    from docx.opc.part import Part

    root = _w("footnotes", _w("footnote", _w("p", _w("r", _w("separator"))), type="separator", id="-1"),
              _w("footnote", _w("p", _w("r", _w("continuationSeparator"))), type="continuationSeparator", id="0"))
    for i, text in notes.items():
        root.append(_w("footnote", _w("p", _w("r", _w("footnoteRef")), _r(" " + text)), id=str(i)))
    d.part.relate_to(Part(PackURI("/word/footnotes.xml"), CT.WML_FOOTNOTES, etree.tostring(root), d.part.package),
                     RT.FOOTNOTES)


def _word_file(blocks) -> bytes:
    import docx

    d = docx.Document()
    n = 0
    notes: dict[int, str] = {}
    for kind, spec in blocks:
        if kind == "h":
            d.add_heading(spec[1], level=spec[0])
        elif kind == "table":
            t = d.add_table(rows=len(spec), cols=2)
            for i, row in enumerate(spec):
                for j, v in enumerate(row):
                    t.cell(i, j).text = v
        else:
            p = d.add_paragraph()
            for text, how in spec:
                n += 1
                if how == "plain":
                    p._p.append(_r(text))
                elif how == "sym":
                    p._p.append(_w("r", _w("sym", font=text[0], char=text[1])))
                elif how in ("fn", "fn-del"):
                    notes[n] = text
                    ref = _w("r", _w("footnoteReference", id=str(n)))
                    p._p.append(ref if how == "fn" else _w("del", ref, id=str(n), author="R",
                                                           date="2026-03-01T09:00:00Z"))
                elif how == "sdt":
                    p._p.append(_w("sdt", _w("sdtPr"), _w("sdtContent", _r(text))))
                else:
                    p._p.append(_w(how, _r(text, deleted=how == "del"), id=str(n), author="R",
                                   date="2026-03-01T09:00:00Z"))
            if kind == "sdt":
                body = p._p.getparent()
                at = body.index(p._p)
                body.insert(at, _w("sdt", _w("sdtPr"), _w("sdtContent", p._p)))
    if notes:
        _footnotes_part(d, notes)
    buf = io.BytesIO()
    d.save(buf)
    return buf.getvalue()


def _word_text_nodes(raw: bytes) -> tuple[list[str], int]:
    """Each paragraph's ``w:t`` text outside deletions, in document order, and the tracked changes, read with
    lxml straight from ``word/document.xml``."""
    root = etree.fromstring(zipfile.ZipFile(io.BytesIO(raw)).read("word/document.xml"))
    ns = {"w": W}
    paragraphs = ["".join(t.text or "" for t in p.xpath(".//w:t[not(ancestor::w:del)]", namespaces=ns))
                  for p in root.xpath("//w:body//w:p", namespaces=ns)]
    return paragraphs, len(root.xpath("//w:ins | //w:del", namespaces=ns))


def _word_pieces(raw: bytes) -> tuple[list[str], int, list[str], list[str]]:
    """The body's pieces in document order, read with lxml from the zip: each run's ``w:t`` text outside deletions
    and each symbol as the character :data:`SYMBOLS` gives; the symbols without one; the footnotes' texts in the
    order of their references outside deletions; the texts of those referenced only inside a deletion."""
    z = zipfile.ZipFile(io.BytesIO(raw))
    ns = {"w": W}
    root = etree.fromstring(z.read("word/document.xml"))
    pieces, unmapped, order = [], 0, []
    for r in root.xpath("//w:body//w:r[not(ancestor::w:del)]", namespaces=ns):
        for c in r:
            if c.tag == f"{{{W}}}t":
                pieces.append(c.text or "")
            elif c.tag == f"{{{W}}}sym":
                ch = SYMBOLS[(c.get(f"{{{W}}}font"), c.get(f"{{{W}}}char"))]
                unmapped += ch is None
                pieces.append(ch or "")
            elif c.tag == f"{{{W}}}footnoteReference":
                order.append(c.get(f"{{{W}}}id"))
    texts = {}
    if "word/footnotes.xml" in z.namelist():
        notes = etree.fromstring(z.read("word/footnotes.xml"))
        texts = {n.get(f"{{{W}}}id"): _collapse("".join(n.xpath(".//w:t/text()", namespaces=ns)))
                 for n in notes.xpath("w:footnote[not(@w:type)]", namespaces=ns)}
    read = [texts[i] for i in order if texts.get(i)]
    left = [t for i, t in texts.items() if t and i not in order]
    return pieces, unmapped, read, left


@pytest.mark.slow  # seconds: a file written and read per example
@settings(max_examples=40, derandomize=True)
@given(hs.lists(BLOCK, min_size=1, max_size=6))
def test_word_keeps_every_text_node_of_the_final_view(blocks):
    raw = _word_file(blocks)
    paragraphs, changes = _word_text_nodes(raw)
    pieces, unmapped, notes, left = _word_pieces(raw)
    if not any(p.strip() for p in paragraphs + pieces):
        return  # nothing to read: the reader refuses the file ("no text in the Word file")
    event(f"footnotes read: {bool(notes)}, deleted: {bool(left)}, symbols: {sum(p in '≥≤→✓' for p in pieces)}, "
          f"unmapped: {unmapped}")
    doc = document_from_bytes("f.docx", raw)
    body, _, read_notes = doc.text.partition("\n\n## Footnotes\n\n")
    # every run's text and every mapped symbol of the body, in order; every footnote referenced, in order
    assert _in_order(pieces, body) == []
    assert _in_order(notes, read_notes) == [] and bool(read_notes) == bool(notes)
    said = " ".join(doc.locators.notes)
    assert ("unaccepted tracked changes" in said) == (changes > 0)
    # what is not read is named: the notes whose mark is deleted, the symbols without a mapping
    m = re.search(r"(\d+) footnotes? whose reference mark is not in the text read", said)
    assert (int(m.group(1)) if m else 0) == len(left)
    m = re.search(r"(\d+) symbol characters? without a Unicode mapping left out", said)
    assert (int(m.group(1)) if m else 0) == unmapped


# --------------------------------------------------------------------------- xlsx

#: A percentage cell: the stored value and its number format.
PERCENT = hs.tuples(hs.floats(-10, 10, allow_nan=False).map(lambda x: round(x, 5)), hs.sampled_from(["0%", "0.00%"]))
VALUE = hs.one_of(hs.none(), hs.none(), WORDS.filter(lambda s: not s.startswith("=")), hs.integers(-10 ** 6, 10 ** 6),
                  hs.just("=1+1"), PERCENT)


def _percent(value: float, fmt: str) -> str:
    """A percentage as Excel shows it: × 100, half away from zero to the format's places (Decimal, not the product)."""
    from decimal import ROUND_HALF_UP, Decimal

    places = 2 if fmt == "0.00%" else 0
    q = (Decimal(repr(value)) * 100).quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)
    return f"{abs(q) if q == 0 else q:.{places}f}%"


@pytest.mark.slow  # seconds: a file written and read per example
@settings(max_examples=40, derandomize=True)
@given(hs.lists(hs.lists(VALUE, min_size=1, max_size=4), min_size=1, max_size=6), hs.booleans(), hs.booleans())
def test_a_sheet_gives_every_cell_value_or_a_note(grid, wrong_dimension, hidden):
    import openpyxl
    from openpyxl.utils import get_column_letter

    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Data"
    for r, row in enumerate(grid, 1):
        for c, v in enumerate(row, 1):
            if isinstance(v, tuple):
                ws.cell(r, c, v[0]).number_format = v[1]
            else:
                ws.cell(r, c, v)
    if hidden:
        h = wb.create_sheet("Draft")
        h["A1"] = "draft words"
        h.sheet_state = "hidden"
    buf = io.BytesIO()
    wb.save(buf)
    raw = buf.getvalue()
    if wrong_dimension:  # as some exporters write it
        raw = _edit_zip(raw, "xl/worksheets/sheet1.xml",
                        lambda b: re.sub(rb'<dimension ref="[^"]*"/>', b'<dimension ref="A1"/>', b))
    # the independent reading: openpyxl in normal mode, every sheet, every cell with a value
    ref = openpyxl.load_workbook(io.BytesIO(raw))
    values = {(s.title, c.row, c.column): c.value for s in ref.worksheets for row in s.iter_rows() for c in row
              if c.value is not None and str(c.value).strip()}
    try:
        doc = document_from_bytes("f.xlsx", raw)
    except ValueError as e:  # nothing visible to read: the reason lists what was left out
        assert all(k[0] == "Draft" or str(v).startswith("=") for k, v in values.items()), e
        return
    cells = {(s.sheet, s.row, s.col): doc.text[s.start:s.end] for s in doc.locators.cells}
    spans = {(s.sheet, s.row, s.col): s for s in doc.locators.cells}
    event(f"percent cells: {sum(1 for k in values if ref[k[0]].cell(k[1], k[2]).number_format.endswith('%'))}")
    said = " ".join(doc.locators.notes)
    for (sheet, r, c), v in values.items():
        where = f"{sheet}!{get_column_letter(c)}{r}"
        if sheet == "Draft":
            assert "sheet 'Draft' is hidden: skipped" in said
        elif isinstance(v, str) and v.startswith("="):  # openpyxl writes no cached value
            assert f"{where}: formula without a cached value ({v})" in said
        elif ref[sheet].cell(r, c).number_format in ("0%", "0.00%"):  # shown as the sheet shows it, stored kept
            span = spans[(sheet, r, c)]
            assert doc.text[span.start:span.end] == _percent(v, ref[sheet].cell(r, c).number_format), where
            assert span.stored == "" or float(span.stored) == v, where
        else:
            assert cells[(sheet, r, c)] == str(v).strip(), where


def _edit_zip(raw: bytes, name: str, edit) -> bytes:
    src = zipfile.ZipFile(io.BytesIO(raw))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as out:
        for item in src.infolist():
            data = src.read(item.filename)
            out.writestr(item, edit(data) if item.filename == name else data)
    return buf.getvalue()


# --------------------------------------------------------------------------- csv

FIELD = hs.one_of(hs.just(""), hs.text(alphabet="abcdefgh XYZ0123,\"\n'’é.", max_size=20),
                  hs.just("x" * 140_000))  # a field over the csv module's 128 KiB default bound


@pytest.mark.slow  # seconds: a file written and read per example
@settings(max_examples=40, derandomize=True)
@given(hs.lists(hs.lists(FIELD, min_size=3, max_size=3), min_size=1, max_size=6))
def test_a_csv_gives_every_field(rows):
    buf = io.StringIO(newline="")
    csv.writer(buf).writerows([["id", "name", "body"]] + rows)
    text = buf.getvalue()
    doc = document_from_bytes("f.csv", text.encode())
    csv.field_size_limit(max(csv.field_size_limit(), len(text) + 1))
    cells = {(s.row, s.col): doc.text[s.start:s.end] for s in doc.locators.cells}
    for n, record in enumerate(csv.reader(io.StringIO(text, newline="")), 1):  # RFC 7111 rows, from 1
        for c, v in enumerate(record, 1):
            v = v.replace("\r\n", "\n").replace("\r", "\n").strip()
            if v:
                assert cells[(n, c)] == v, (n, c)


# --------------------------------------------------------------------------- WebVTT

LINE = hs.text(alphabet="abcdefghij klmnop.,'’é", min_size=1, max_size=25).filter(lambda s: s.strip())


def _ts(ms: int) -> str:
    return f"{ms // 3_600_000:02d}:{ms // 60_000 % 60:02d}:{ms // 1000 % 60:02d}.{ms % 1000:03d}"


@settings(max_examples=40, derandomize=True)
@given(hs.lists(LINE, min_size=1, max_size=6), hs.booleans())
def test_a_transcript_gives_every_spoken_line_or_says_what_repeats(lines, rolling):
    import webvtt

    out, prev, t = ["WEBVTT\n"], None, 1000
    for line in lines:
        if rolling and prev is not None:  # YouTube's form: the previous line stays on screen above this one
            out.append(f"{_ts(t)} --> {_ts(t + 2000)}\n{prev}\n{line}\n")
        else:
            out.append(f"{_ts(t)} --> {_ts(t + 2000)}\n{line}\n")
        prev, t = line, t + 2000
    raw = "\n".join(out)
    # the independent reading: webvtt-py's cue payloads, one display line at a time
    cues = [[_collapse(x) for x in c.text.split("\n") if x.strip()] for c in webvtt.from_string(raw).captions]
    doc = document_from_bytes("f.vtt", raw.encode())
    body = doc.text[doc.text.index("\n\n") + 2:]
    said = " ".join(doc.locators.notes)
    m = re.search(r"rolling captions: (\d+) repeated caption line", said)
    # every spoken line, in order (a line said twice running and read once is among the repeats counted)
    assert len(_in_order([_collapse(x) for x in lines], body)) <= (int(m.group(1)) if m else 0)
    if m:  # each line once: what was left out is counted, and every line read is one a cue shows
        read = [_collapse(x) for x in body.split("\n") if x.strip()]
        assert len(read) + int(m.group(1)) == sum(map(len, cues))
        assert set(read) <= {x for c in cues for x in c}
    else:  # each cue a paragraph, its display lines joined
        assert [_collapse(p) for p in body.split("\n\n")] == [" ".join(c) for c in cues] and said == ""


# --------------------------------------------------------------------------- PDF

@pytest.mark.slow  # seconds: a file written and read per example
@settings(max_examples=15, derandomize=True)
@given(hs.lists(hs.lists(LINE, min_size=1, max_size=4), min_size=1, max_size=5), hs.booleans(), hs.booleans())
def test_a_pdf_gives_every_page_of_its_text_layer_or_names_what_it_stripped(pages, header, strip):
    from fpdf import FPDF
    from pypdf import PdfReader

    from audit.ingest.extraction_audit import page_ranges
    from audit.ingest.pdf import pdf_document

    pdf = FPDF(format="A4")
    pdf.set_font("Helvetica", size=11)
    for body in pages:
        pdf.add_page()
        if header:
            pdf.cell(0, 8, "Relay handbook - Internal")
            pdf.ln(12)
        for line in body:
            pdf.cell(0, 6, line.encode("latin-1", "replace").decode("latin-1"))
            pdf.ln(6)
    raw = bytes(pdf.output())
    # the independent reading: pypdf's text layer of each page
    layer = [page.extract_text() or "" for page in PdfReader(io.BytesIO(raw)).pages]
    doc = pdf_document("f.pdf", raw, "f", strip_running_lines=strip)
    texts = [doc.text[s:e] for s, e in page_ranges(doc.text, doc.pages)]
    stripped = {r.text for r in doc.extraction.stripped}
    for own, ours in zip(layer, texts):
        lines = [x for x in own.split("\n") if x.strip()]
        kept = [x for x in lines if _collapse(x) not in stripped]
        assert _in_order(kept, ours) == []
        assert all(_collapse(x) in stripped for x in lines if x not in kept)
        if not strip:
            assert _collapse(own) == _collapse(ours)
