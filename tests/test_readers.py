"""Files as their authors see them (issue 40): each kind of real file a team holds, written by the library
that writes it, read with no word lost and every loss said.

Word files come from python-docx, with raw OOXML (zipfile + lxml) for what it cannot write (tracked
changes, content controls); workbooks from openpyxl, their sheet XML edited with lxml for a wrong declared
dimension; CSV from the csv module; PDFs from the tests' PDF maker. Each expected value is read off the file
as the test builds it.
"""

from __future__ import annotations

import csv
import io
import zipfile

import pytest
from lxml import etree

from audit.ingest import document_from_bytes
from audit.ingest.locators import locator

W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
S = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"


def _rewrite_part(raw: bytes, name: str, edit) -> bytes:
    """The OOXML package ``raw`` with its part ``name`` parsed by lxml, changed by ``edit(root)`` and written back."""
    src = zipfile.ZipFile(io.BytesIO(raw))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as out:
        for item in src.infolist():
            data = src.read(item.filename)
            if item.filename == name:
                root = etree.fromstring(data)
                edit(root)
                data = etree.tostring(root, xml_declaration=True, encoding="UTF-8", standalone=True)
            out.writestr(item, data)
    return buf.getvalue()


# --------------------------------------------------------------------------- xlsx: a wrong declared dimension

def _calc_workbook() -> bytes:
    import openpyxl

    wb = openpyxl.Workbook()  # openpyxl writes formulas without a cached value
    ws = wb.active
    ws.title = "Calc"
    ws.append(["n", "double", "note"])
    ws.append([4, "=A2*2", "four"])
    ws.append([5, "=A3*2", "five"])
    buf = io.BytesIO()
    wb.save(buf)
    return buf.getvalue()


def _declare_dimension(raw: bytes, ref: str) -> bytes:
    def edit(root):
        dim = root.find(f"{{{S}}}dimension")
        dim.set("ref", ref)

    return _rewrite_part(raw, "xl/worksheets/sheet1.xml", edit)


def test_a_wrong_declared_dimension_changes_nothing():
    true = _calc_workbook()
    wrong = _declare_dimension(true, "A1")  # as some exporters write it
    assert b'<dimension ref="A1"/>' in zipfile.ZipFile(io.BytesIO(wrong)).read("xl/worksheets/sheet1.xml")
    a, b = document_from_bytes("calc.xlsx", true), document_from_bytes("calc.xlsx", wrong)
    assert a.text == b.text == ("# calc\n\n## Calc\n\nn | double | note\n\nn: 4 | note: four\n\n"
                                "n: 5 | note: five")
    # both formula cells (B2, B3) have no cached value: listed whatever the file declares
    assert a.locators.notes == b.locators.notes == ("Calc!B2: formula without a cached value (=A2*2)",
                                                    "Calc!B3: formula without a cached value (=A3*2)")


# --------------------------------------------------------------------------- csv: a field over 128 KiB

def test_a_csv_field_over_128_kib_is_read():
    body = "The relay dropped messages. " * 6000  # 168,000 characters, over the csv module's 131,072
    buf = io.StringIO(newline="")
    csv.writer(buf).writerows([["ticket", "body"], ["T-1", body.strip()], ["T-2", "short"]])
    doc = document_from_bytes("tickets.csv", buf.getvalue().encode())
    assert len(body) > 128 * 1024
    assert f"ticket: T-1 | body: {body.strip()}" in doc.text
    assert doc.text.endswith("ticket: T-2 | body: short")
    s = doc.text.index(body.strip())
    assert locator(doc, s, s + 10).fragment == "#row=2"


def test_a_malformed_csv_is_still_refused():
    with pytest.raises(ValueError, match=r"malformed CSV at record 2 \(line 2\)"):
        document_from_bytes("bad.csv", b'a,b\n1,"x"y\n')


# --------------------------------------------------------------------------- Word: tracked changes, content controls

def _w(tag: str, *children, **attrs):
    el = etree.Element(f"{{{W}}}{tag}", {f"{{{W}}}{k}": v for k, v in attrs.items()})
    el.extend(children)
    return el


def _run(text: str, deleted: bool = False):
    t = _w("delText" if deleted else "t", **{})
    t.text = text
    t.set("{http://www.w3.org/XML/1998/namespace}space", "preserve")
    return _w("r", t)


def _change(tag: str, *runs, n: int):
    return _w(tag, *runs, id=str(n), author="Reviewer", date="2026-03-01T09:00:00Z")


def _onboarding(d) -> None:
    """A handbook as HR keeps it: nested headings, unaccepted tracked changes, content controls (block and inline)."""
    d.add_paragraph("Onboarding", style="Title")
    d.add_heading("Your first week", level=1)
    d.add_heading("Day one", level=2)
    d.add_paragraph("Badges are issued at the front desk before nine.")
    p = d.add_paragraph()  # every <w:del>ninety</w:del><w:ins>thirty</w:ins> days
    p._p.extend([_run("Passwords expire every "), _change("del", _run("ninety", deleted=True), n=1),
                 _change("ins", _run("thirty"), n=2), _run(" days.")])
    p = d.add_paragraph()  # a paragraph inserted whole
    p._p.append(_change("ins", _run("Lockers are assigned on arrival."), n=3))
    p = d.add_paragraph()  # a paragraph deleted whole: not in the final view
    p._p.append(_change("del", _run("Parking is free.", deleted=True), n=4))
    p = d.add_paragraph("Your manager is ")  # an inline content control (a form field)
    p._p.extend([_w("sdt", _w("sdtPr", _w("alias", val="Manager")), _w("sdtContent", _run("Dana Whitfield"))),
                 _run(".")])
    heading = d.add_heading("Forms", level=1)  # a block content control holding a heading and a paragraph
    para = d.add_paragraph("Fill in the tax form on the first day.")
    body = heading._p.getparent()
    at = body.index(heading._p)
    sdt = _w("sdt", _w("sdtPr", _w("tag", val="forms")), _w("sdtContent"))
    sdt[1].extend([heading._p, para._p])  # moves both into the control
    body.insert(at, sdt)


def _docx(build) -> bytes:
    import docx

    d = docx.Document()
    build(d)
    buf = io.BytesIO()
    d.save(buf)
    return buf.getvalue()


ONBOARDING_TEXT = ("# Onboarding\n\n## Your first week\n\n### Day one\n\n"
                   "Badges are issued at the front desk before nine.\n\n"
                   "Passwords expire every thirty days.\n\n"
                   "Lockers are assigned on arrival.\n\n"
                   "Your manager is Dana Whitfield.\n\n"
                   "## Forms\n\n"
                   "Fill in the tax form on the first day.")


def test_word_final_view_content_controls_and_the_note():
    doc = document_from_bytes("onboarding.docx", _docx(_onboarding))
    # insertions kept, deletions dropped (Word's final view); the inline control's name in its sentence; the
    # block control's heading is a heading (a section) and its paragraph follows it
    assert doc.text == ONBOARDING_TEXT
    assert [s.title for s in doc.sections] == ["Your first week", "Forms"]
    assert doc.locators.notes == ("the document holds unaccepted tracked changes (2 insertions, 2 deletions): read as "
                                  "Word's final view, insertions kept, deletions dropped",)


def test_a_nested_heading_is_cited_by_its_path_innermost_last():
    from audit.chunking import PRESETS, chunk_corpus
    from audit.evaluation.citations import build_context
    from audit.ingest import Corpus

    doc = document_from_bytes("onboarding.docx", _docx(_onboarding))
    s = doc.text.index("Badges are issued")
    loc = locator(doc, s, s + 20)
    assert loc.headings == ("Your first week", "Day one")
    assert loc.fields()["heading"] == "Day one"
    assert loc.fields()["heading_path"] == "Your first week › Day one"
    assert doc.section_at(s) == "Your first week"  # `section` stays the ## section (docs/definitions.md)
    # the paragraph under Forms: Heading 1 closes Day one
    f = doc.text.index("Fill in the tax form")
    assert locator(doc, f, f + 5).headings == ("Forms",)
    corpus = Corpus("t", (doc,))
    chunks = chunk_corpus(corpus, PRESETS["E"])
    c = next(c for c in chunks.chunks if c.start <= s < c.end)
    ctx = build_context("Where are badges issued?", [(c, 0.2)], corpus)
    assert ctx.citations[0].locator_label == "Day one"
    assert "[1] Onboarding - Day one\n" in ctx.prompt


# --------------------------------------------------------------------------- rolling auto-captions

def _clock(ms: int) -> str:
    h, rest = divmod(ms, 3_600_000)
    m, rest = divmod(rest, 60_000)
    return f"{h:02d}:{m:02d}:{rest // 1000:02d}.{rest % 1000:03d}"


def youtube_vtt(spoken: list[tuple[int, str]], end_ms: int) -> str:
    """WebVTT as YouTube writes auto-captions: for each spoken line, a cue showing the previous line and this one
    with word timings (``<00:00:00.719><c> word</c>``), then a 10 ms cue showing this line alone, still on screen."""
    out = ["WEBVTT\nKind: captions\nLanguage: en\n"]
    prev = " "
    for i, (t0, line) in enumerate(spoken):
        t1 = spoken[i + 1][0] if i + 1 < len(spoken) else end_ms
        words = line.split()
        step = (t1 - 10 - t0) // len(words)
        timed = words[0] + "".join(f"<{_clock(t0 + step * j)}><c> {w}</c>" for j, w in enumerate(words[1:], 1))
        out.append(f"{_clock(t0)} --> {_clock(t1 - 10)} align:start position:0%\n{prev}\n{timed}\n")
        out.append(f"{_clock(t1 - 10)} --> {_clock(t1)} align:start position:0%\n{line}\n \n")
        prev = line
    return "\n".join(out)


SPOKEN = [(1000, "so the backup job runs at two"), (6500, "every night and takes about an hour"),
          (12000, "the restore test is on fridays"), (19000, "keep the relay keys for ninety days"),
          (25600, "that is all for today")]


def test_rolling_captions_give_each_spoken_line_once_at_its_first_time():
    from audit.groundtruth import Needle, validate
    from audit.ingest import Corpus

    raw = youtube_vtt(SPOKEN, 31000)
    # each line three times: with word timings, alone in the 10 ms cue, above the next line
    assert raw.count("keep the relay keys for ninety days") == 2 and "<c> relay</c>" in raw
    doc = document_from_bytes("sync.vtt", raw.encode())
    assert doc.text == "# sync\n\n" + "\n\n".join(line for _, line in SPOKEN)
    # each line at the cue that first shows it (the timed one): 19.000 until the 10 ms cue at 25.590
    s = doc.text.index("keep the relay keys")
    assert locator(doc, s, s + 10).fragment == "#t=19,25.59"
    # 5 lines, each shown again in its 10 ms cue (5) and, but the last, above the next line (4)
    assert doc.locators.notes == ("rolling captions: 9 repeated caption lines read once, each at the cue that "
                                  "first shows it",)
    needle = Needle("n1", "keep the relay keys for ninety days", ("How long are relay keys kept?",))
    _, where, rejected = validate([needle], Corpus("t", (doc,)))
    assert rejected == [] and where["n1"].start == s  # found once, not three times


def test_captions_that_do_not_roll_keep_a_repeated_line():
    raw = ("WEBVTT\n\n00:01.000 --> 00:02.000\nNo.\n\n00:02.000 --> 00:03.000\nNo.\n\n"
           "00:03.000 --> 00:04.000\nFine, yes.\n\n00:04.000 --> 00:05.000\nThen we agree.\n")
    doc = document_from_bytes("talk.vtt", raw.encode())
    assert doc.text == "# talk\n\nNo.\n\nNo.\n\nFine, yes.\n\nThen we agree."
    assert doc.locators.notes == ()


# --------------------------------------------------------------------------- xlsx: a merged title above the header

def _depots() -> bytes:
    import openpyxl

    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Depots"
    ws["A1"] = "Depot contacts and opening hours, spring 2026"
    ws.merge_cells("A1:C1")  # the title typed across the table, as report-style workbooks have it
    ws.append(["Depot", "Phone", "Opens"])
    ws.append(["Harbour", "0161 555 0100", "07:00"])
    ws.append(["Mill Lane", "0161 555 0199", "06:30"])
    buf = io.BytesIO()
    wb.save(buf)
    return buf.getvalue()


def test_a_merged_title_above_the_header_is_the_sheets_heading():
    doc = document_from_bytes("depots.xlsx", _depots())
    assert doc.text == ("# depots\n\n## Depots\n\n### Depot contacts and opening hours, spring 2026\n\n"
                        "Depot | Phone | Opens\n\n"
                        "Depot: Harbour | Phone: 0161 555 0100 | Opens: 07:00\n\n"
                        "Depot: Mill Lane | Phone: 0161 555 0199 | Opens: 06:30")
    t = doc.text.index("Depot contacts")
    assert locator(doc, t, t + 5).fragment == "#sheet=Depots&range=A1:C1"  # the title's own merged cells
    h = doc.text.index("Harbour")
    assert locator(doc, h, h + 7).fragment == "#sheet=Depots&range=A3"


def test_a_merged_cell_that_is_a_header_stays_a_header():
    import openpyxl

    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Stock"
    ws.append(["Item", "Count"])
    ws["C1"] = "Where"
    ws.merge_cells("C1:D1")  # a header over two columns: the row has several values, so it is the header
    ws.append(["Bolts", 40, "Shelf 2", "left"])
    ws.append(["Nuts", 12, "Shelf 3", "right"])
    buf = io.BytesIO()
    wb.save(buf)
    doc = document_from_bytes("stock.xlsx", buf.getvalue())
    assert "Item | Count | Where\n\nItem: Bolts | Count: 40 | Where: Shelf 2 | Where: left" in doc.text


# --------------------------------------------------------------------------- PDF: running heads by parity

STEPS = ["the vault is opened.", "a new key is made.", "the key is signed.", "the old key is retired.",
         "the log book is updated."]


def _two_sided_pdf(pages: int = 5) -> bytes:
    """A two-sided book as fpdf2 draws it: the chapter title heads odd pages, the book title even pages."""
    from fpdf import FPDF

    class Book(FPDF):
        def header(self) -> None:
            self.set_font("Helvetica", size=9)
            self.cell(0, 8, "Chapter 2 - Rotation" if self.page_no() % 2 else "The relay handbook")
            self.ln(12)
            self.set_font("Helvetica", size=11)

    pdf = Book(format="A4")
    pdf.set_title("The relay handbook")
    for n in range(1, pages + 1):
        pdf.add_page()
        pdf.multi_cell(0, 6, f"This page says one thing of its own: {STEPS[n - 1]}")
    return bytes(pdf.output())


def test_running_heads_that_alternate_by_parity_are_both_found_and_stripped():
    from audit.ingest.extraction_audit import audit_document

    doc = document_from_bytes("book.pdf", _two_sided_pdf())
    found = audit_document(doc.doc_id, doc.text, doc.pages, doc.extraction)
    (running,) = [f for f in found.findings if f.check == "running_lines"]
    # odd pages 1, 3, 5 carry the chapter (3 of 5: half the pages, as before); even pages 2, 4 the book title,
    # 2 of 5 pages but both even pages, alternating with the chapter line
    assert running.pages == (1, 2, 3, 4, 5)
    assert running.evidence.startswith("header 'Chapter 2 - Rotation' on pages 1, 3, 5 (")
    assert "header 'The relay handbook' on pages 2, 4 (" in running.evidence
    from audit.ingest.pdf import pdf_document

    stripped = pdf_document("book.pdf", _two_sided_pdf(), "book", strip_running_lines=True)
    assert "Chapter 2 - Rotation" not in stripped.text and "The relay handbook" not in stripped.text[20:]
    assert stripped.text.count("says one thing of its own") == 5 and all(step in stripped.text for step in STEPS)


def test_a_line_on_two_pages_of_one_parity_alone_proves_nothing():
    from audit.ingest.extraction_audit import find_running_lines

    # 5 pages: pages 2 and 4 open with the same line, the odd pages with lines of their own
    pages = ["one\nbody", "Draft\nbody", "three\nbody", "Draft\nbody", "five\nbody"]
    assert [r.pages for r in find_running_lines(pages) if r.where == "header"] == []
    # 6 pages: 3 odd pages share a line (half of 6 already, as before), the even pages alternate with theirs
    six = ["Chapter\na", "Book\nb", "Chapter\nc", "Book\nd", "Chapter\ne", "Other\nf"]
    assert [(r.text, r.pages) for r in find_running_lines(six) if r.where == "header"] == [
        ("Chapter", (1, 3, 5)), ("Book", (2, 4))]


# --------------------------------------------------------------------------- PDF: tables with empty cells, one cell per line

DEPOTS = [("Depot", "Phone", "Hours", "Notes"), ("Harbour", "555 0100", "07:00-19:00", "gate code at desk"),
          ("Mill Lane", "555 0199", "06:30-18:00", ""), ("Quayside", "555 0142", "08:00-16:00", ""),
          ("Station Road", "555 0177", "07:30-17:30", "closed on Sundays")]


def _borderless_table_pdf(rows=DEPOTS) -> bytes:
    """A borderless fpdf2 table (``borders_layout="NONE"``) under a sentence; the Notes column empty in two rows."""
    from fpdf import FPDF

    pdf = FPDF(format="A4")
    pdf.set_font("Helvetica", size=11)
    pdf.add_page()
    pdf.multi_cell(0, 6, "Depots and their opening hours.")
    with pdf.table(col_widths=(40, 30, 40, 50), width=160, borders_layout="NONE") as t:
        for row in rows:
            r = t.row()
            for c in row:
                r.cell(c)
    return bytes(pdf.output())


def _column_at_a_time_pdf() -> bytes:
    """The same table drawn a column at a time (``FPDF.text`` at each cell's place): pypdf writes one cell a line."""
    from fpdf import FPDF

    pdf = FPDF(format="A4")
    pdf.set_font("Helvetica", size=11)
    pdf.add_page()
    pdf.text(20, 20, "Depots and their opening hours.")
    for j, x in enumerate((20, 60, 90, 130)):
        for i, row in enumerate(DEPOTS):
            if row[j]:
                pdf.text(x, 30 + 7 * i, row[j])
    return bytes(pdf.output())


def _tables(raw: bytes):
    from audit.ingest.extraction_audit import audit_document

    doc = document_from_bytes("depots.pdf", raw)
    found = audit_document(doc.doc_id, doc.text, doc.pages, doc.extraction)
    return doc, [f for f in found.findings if f.check == "tables"]


def test_a_borderless_table_with_empty_cells_is_found():
    doc, (table,) = _tables(_borderless_table_pdf())
    # 5 rows: three of 4 cells, two of 3 (no note): still one table of 4 columns
    assert table.evidence == ("page 1: 5 rows × 4 cells read as lines of words, first row "
                              "'Depot | Phone | Hours | Notes'")
    s, e = table.ranges[0]
    assert doc.text[s:e].startswith("Depot Phone Hours Notes\n") and doc.text[s:e].endswith("closed on Sundays")
    # the same table with every cell filled gives the same finding (the rule no longer needs every cell)
    full = [r[:3] + (r[3] or "none",) for r in DEPOTS]
    _, (same,) = _tables(_borderless_table_pdf(full))
    assert same.evidence == table.evidence


def test_a_table_read_one_cell_per_line_is_found():
    doc, (table,) = _tables(_column_at_a_time_pdf())
    assert "Depot\nHarbour\nMill Lane" in doc.text  # what the extractor made of it: a cell a line
    assert table.evidence == ("page 1: 5 rows × 4 cells read one cell per line, first row "
                              "'Depot | Phone | Hours | Notes'")
    s, e = table.ranges[0]
    assert doc.text[s:e].startswith("Depot\n") and doc.text[s:e].endswith("closed on Sundays")


# --------------------------------------------------------------------------- a quote's own locator

SYNC = """WEBVTT

00:00:01.000 --> 00:00:06.500
The backup job runs at two every night.

00:00:06.500 --> 00:00:12.000
It takes about an hour and writes to cold storage.

00:00:12.000 --> 00:00:19.000
The restore test is on Fridays.

00:00:19.000 --> 00:00:25.600
Keep the relay keys for ninety days,
then retire them.

00:00:25.600 --> 00:00:31.000
That is all for today.
"""


def test_a_quotes_locator_is_the_quotes_and_its_chunks_is_beside_it():
    from audit.chunking import PRESETS, chunk_corpus
    from audit.evaluation.citations import build_context
    from audit.ingest import Corpus
    from audit.ingest.locators import quote_locator
    from audit.views.citations import citations_frame, with_needle_checks

    doc = document_from_bytes("sync.vtt", SYNC.encode())
    corpus = Corpus("t", (doc,))
    (chunk,) = chunk_corpus(corpus, PRESETS["E"]).chunks  # one chunk: every cue
    needle = "Keep the relay keys for ninety days, then retire them."
    # the words were spoken in the fourth cue, 0:19.0-0:25.6 (read off the file); the chunk spans 1 s to 31 s
    loc = quote_locator(doc, chunk.start, chunk.end, needle)
    assert (loc.fragment, loc.where) == ("#t=19,25.6", "0:19–0:25.6")
    assert locator(doc, chunk.start, chunk.end).fragment == "#t=1,31"
    ctx = build_context("How long are relay keys kept?", [(chunk, 0.2)], corpus)
    cf = with_needle_checks(citations_frame(ctx, corpus), ctx, needle, frozenset({chunk.chunk_id}), corpus)
    s = doc.text.index("Keep the relay")
    assert cf["needle at"].tolist() == [f"#char={s},{s + len(needle)} #t=19,25.6 (0:19–0:25.6)"]
    assert cf["locator"].tolist() == [f"#char={chunk.start},{chunk.end} #t=1,31"]
    assert quote_locator(doc, chunk.start, chunk.end, "not said") is None


def test_a_quotes_cell_range_and_page_are_its_own():
    from pdfmaker import make_pdf

    from audit.ingest.locators import quote_locator

    sheet = document_from_bytes("depots.xlsx", _depots())
    s, end = sheet.text.index("Harbour"), len(sheet.text)
    assert locator(sheet, s, end).fragment == "#sheet=Depots&range=A3:C4"  # the two data rows
    assert quote_locator(sheet, s, end, "0161 555 0199").fragment == "#sheet=Depots&range=B4"  # one cell
    pdf = document_from_bytes("two.pdf", make_pdf(["Keys rotate every thirty days.",
                                                   "Backups are kept for ninety days."]))
    assert locator(pdf, 0, len(pdf.text)).where == "pages 1–2"
    assert quote_locator(pdf, 0, len(pdf.text), "kept for ninety days").fragment == "#page=2"


# --------------------------------------------------------------------------- every note reaches the extraction findings

def test_reader_notes_are_findings_of_index_health_its_json_and_its_text(tmp_path):
    from audit.chunking import PRESETS
    from audit.index import IndexStore, index_corpus
    from audit.index.health import check_index
    from audit.ingest import load_folder
    from audit.models import HashingEncoder

    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "onboarding.docx").write_bytes(_docx(_onboarding))
    (folder / "calc.xlsx").write_bytes(_declare_dimension(_calc_workbook(), "A1"))
    (folder / "notes.md").write_text("# Notes\n\nNothing left out.\n", encoding="utf-8")
    store = IndexStore(tmp_path / "i.sqlite")
    index_corpus(store, load_folder(folder), PRESETS["E"], HashingEncoder(dims=32))
    rep = check_index(store, "E")
    (f,) = [f for f in rep.findings if f.check == "reader_notes"]
    assert f.severity == "warning"
    why = {d["doc_id"]: d["why"] for d in f.documents}
    assert sorted(why) == ["calc.xlsx", "onboarding.docx"]  # notes.md: nothing to say
    assert why["onboarding.docx"].startswith("the document holds unaccepted tracked changes (2 insertions")
    assert "Calc!B3: formula without a cached value (=A3*2)" in why["calc.xlsx"]
    js = rep.to_json()
    assert any(c["check"] == "reader_notes" for c in js["findings"])
    assert "nothing left out by a reader without a word" in rep.render()  # what `health` prints
    from audit.index.health import snapshot
    from audit.views.index_health import extraction_view

    view = extraction_view(snapshot(store, "E")).findings  # the Index health page's table
    rows = view[view["finding"] == "left out or changed by the reader (said)"]
    assert sorted(rows["document"]) == ["calc.xlsx", "onboarding.docx"]


def test_rows_and_cells_inside_content_controls_are_read():
    def build(d):
        d.add_paragraph("Forms", style="Title")
        t = d.add_table(rows=3, cols=2)
        for r, row in enumerate([["Item", "Owner"], ["Badge", "Front desk"], ["Laptop", "IT"]]):
            for c, v in enumerate(row):
                t.cell(r, c).text = v
        tbl = t._tbl
        trs = tbl.findall(f"{{{W}}}tr")
        # a repeating section: rows 2 and 3 inside one content control
        sdt = _w("sdt", _w("sdtPr", _w("tag", val="items")), _w("sdtContent"))
        tbl.insert(tbl.index(trs[1]), sdt)
        sdt[1].extend(trs[1:])
        # a cell-level control around the header's second cell
        tc = trs[0].findall(f"{{{W}}}tc")[1]
        cell_sdt = _w("sdt", _w("sdtPr"), _w("sdtContent"))
        trs[0].insert(trs[0].index(tc), cell_sdt)
        cell_sdt[1].append(tc)

    doc = document_from_bytes("forms.docx", _docx(build))
    assert doc.text == "# Forms\n\nItem | Owner\n\nItem: Badge | Owner: Front desk\n\nItem: Laptop | Owner: IT"
