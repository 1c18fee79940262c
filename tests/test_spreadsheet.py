"""Spreadsheets (audit/ingest/spreadsheet.py): real .xlsx files written by XlsxWriter and openpyxl, CSV by hand.

Each test writes its file with the library that writes that format and checks the canonical text,
the cell map and the locator worked out by hand from the layout.
"""

from __future__ import annotations

import datetime as dt
import io

import pytest

from audit.chunking import PRESETS, chunk_corpus
from audit.groundtruth import Needle, validate
from audit.ingest import Corpus, document_from_bytes
from audit.ingest.locators import Locator, check_locator, locator
from audit.ingest.spreadsheet import cell_text


def _xlsx(build) -> bytes:
    import xlsxwriter

    buf = io.BytesIO()
    wb = xlsxwriter.Workbook(buf, {"in_memory": True})
    build(wb)
    wb.close()
    return buf.getvalue()


def _prices(wb) -> None:
    ws = wb.add_worksheet("Q1 prices")
    ws.write_row(0, 0, ["Item", "Price", "Stock"])
    ws.write_row(1, 0, ["Widget", 12.5, 40])
    ws.write_row(2, 0, ["Gadget", 30, 2])
    ws.write(3, 0, "Total stock")
    ws.write_formula(3, 2, "=C2+C3", None, 42)  # XlsxWriter stores the cached value it is given
    ws.merge_range("A6:B7", "Ships within three working days.")
    hidden = wb.add_worksheet("Draft")
    hidden.write(0, 0, "secret draft")
    hidden.hide()
    notes = wb.add_worksheet("Notes")
    notes.write_row(0, 0, ["Topic", "Text"])
    notes.write_row(1, 0, ["Returns", "Refunds are paid back to the original card."])


PRICES_TEXT = ("# prices\n\n## Q1 prices\n\n"
               "Item | Price | Stock\n\n"
               "Item: Widget | Price: 12.5 | Stock: 40\n\n"
               "Item: Gadget | Price: 30 | Stock: 2\n\n"
               "Item: Total stock | Stock: 42\n\n"
               "Item: Ships within three working days.\n\n"
               "## Notes\n\n"
               "Topic | Text\n\n"
               "Topic: Returns | Text: Refunds are paid back to the original card.")


def test_workbook_canonical_text_sections_and_notes():
    doc = document_from_bytes("prices.xlsx", _xlsx(_prices))
    # header row once, then one "header: value" paragraph a row; the formula's cached 42; the merge once;
    # the hidden sheet left out
    assert doc.text == PRICES_TEXT
    assert doc.extractor == "xlsx" and doc.extractor_version == "3" and doc.title == "prices"
    assert [s.title for s in doc.sections] == ["Q1 prices", "Notes"]
    assert "secret draft" not in doc.text
    assert doc.locators.notes == ("sheet 'Draft' is hidden: skipped",)
    # every cell span is exactly its cell's text
    for span in doc.locators.cells:
        assert doc.text[span.start:span.end].strip() == doc.text[span.start:span.end] != ""
    merged = [s for s in doc.locators.cells if doc.text[s.start:s.end] == "Ships within three working days."]
    assert [s.ref for s in merged] == ["A6:B7"]


def test_needle_in_a_cell_is_found_and_its_citation_names_the_cells():
    doc = document_from_bytes("prices.xlsx", _xlsx(_prices))
    corpus = Corpus("t", (doc,))
    needle = Needle("n1", "Refunds are paid back to the original card.", ("How are refunds paid?",))
    accepted, where, rejected = validate([needle], corpus)
    assert rejected == [] and accepted == [needle]
    at = where["n1"]
    # the needle is cell B2 of sheet Notes: one cell, so the range is that cell
    loc = locator(doc, at.start, at.end)
    assert (loc.sheet, loc.range, loc.fragment) == ("Notes", "B2", "#sheet=Notes&range=B2")
    # the chunk holding it (strategy E: one chunk per sheet here) spans the Notes header and row 2
    chunks = chunk_corpus(corpus, PRESETS["E"])
    (chunk,) = [c for c in chunks.chunks if c.start <= at.start and at.end <= c.end]
    cl = locator(doc, chunk.start, chunk.end)
    assert (cl.sheet, cl.range) == ("Notes", "A1:B2") and chunk.header == "[prices > Notes]"
    assert check_locator(doc, cl) == ""
    # the first sheet's chunk: rows 1-7 (the merge A6:B7 widens it to row 7), columns A-C
    first = locator(doc, *next((c.start, c.end) for c in chunks.chunks if c.section == "Q1 prices"))
    assert (first.sheet, first.range, first.where) == ("Q1 prices", "A1:C7", "sheet Q1 prices, A1:C7")
    assert first.fragment == "#sheet=Q1%20prices&range=A1:C7"  # the sheet name percent-encoded


def test_a_wrong_range_fails_the_citation_check():
    doc = document_from_bytes("prices.xlsx", _xlsx(_prices))
    s = doc.text.index("Item: Gadget")
    e = s + len("Item: Gadget | Price: 30 | Stock: 2")
    good = locator(doc, s, e)
    assert good.range == "A3:C3"
    assert check_locator(doc, good) == ""
    shifted = Locator(s, e, sheet="Q1 prices", range="A2:C2")
    assert check_locator(doc, shifted) == "cell A3 of sheet 'Q1 prices' lies outside A2:C2"
    wider = Locator(s, e, sheet="Q1 prices", range="A3:D4")
    assert check_locator(doc, wider) == "the cells span A3:C3, the locator says A3:D4"
    other = Locator(s, e, sheet="Notes", range="A3:C3")
    assert "lies in sheet 'Q1 prices', the locator says 'Notes'" in check_locator(doc, other)


def test_formula_without_cached_value_is_listed_not_written():
    import openpyxl

    wb = openpyxl.Workbook()  # openpyxl writes formulas without a cached value
    ws = wb.active
    ws.title = "Calc"
    ws["A1"], ws["B1"] = "n", "double"
    ws["A2"], ws["B2"] = 4, "=A2*2"
    buf = io.BytesIO()
    wb.save(buf)
    doc = document_from_bytes("calc.xlsx", buf.getvalue())
    assert doc.text == "# calc\n\n## Calc\n\nn | double\n\nn: 4"
    assert doc.locators.notes == ("Calc!B2: formula without a cached value (=A2*2)",)


def test_cell_values_are_their_stored_values():
    assert [cell_text(v) for v in (30.0, 12.5, 0.1, 7, True, False, None, "  a\r\nb  ")] == \
        ["30", "12.5", "0.1", "7", "TRUE", "FALSE", "", "a\nb"]
    assert cell_text(dt.datetime(2026, 3, 1)) == "2026-03-01"
    assert cell_text(dt.datetime(2026, 3, 1, 14, 30)) == "2026-03-01 14:30:00"
    assert cell_text(dt.time(9, 5)) == "09:05:00"


def test_dates_from_a_workbook_are_iso():
    def build(wb):
        ws = wb.add_worksheet("Log")
        ws.write_row(0, 0, ["When", "What"])
        ws.write_datetime(1, 0, dt.datetime(2026, 2, 3), wb.add_format({"num_format": "dd/mm/yyyy"}))
        ws.write(1, 1, "backup restored")

    doc = document_from_bytes("log.xlsx", _xlsx(build))
    assert "When: 2026-02-03 | What: backup restored" in doc.text  # the value, not the dd/mm/yyyy display


def test_header_cells_name_the_columns_and_empty_headers_use_letters():
    def build(wb):
        ws = wb.add_worksheet("S")
        ws.write_row(0, 0, ["Name", None, "City"])
        ws.write_row(1, 0, ["Ada", "x", "Paris", "extra"])

    doc = document_from_bytes("s.xlsx", _xlsx(build))
    assert doc.text.endswith("Name | City\n\nName: Ada | B: x | City: Paris | D: extra")


def test_csv_rows_are_rfc7111_records():
    raw = ('id,summary\r\nINC-1,"Disk full, again"\r\nINC-2,"two\nlines"\r\n\r\nINC-3,The restore worked.\r\n'
           ).encode("utf-8")
    doc = document_from_bytes("incidents.csv", raw)
    assert doc.text == ("# incidents\n\n## incidents\n\nid | summary\n\nid: INC-1 | summary: Disk full, again\n\n"
                        "id: INC-2 | summary: two\nlines\n\nid: INC-3 | summary: The restore worked.")
    corpus = Corpus("t", (doc,))
    _, where, rejected = validate([Needle("n", "The restore worked.", ("q",))], corpus)
    assert rejected == []
    loc = locator(doc, where["n"].start, where["n"].end)
    # records: 1 header, 2 INC-1, 3 INC-2 (its quoted newline is still one record), 4 the blank line, 5 INC-3
    assert (loc.row, loc.row_end, loc.fragment, loc.range) == (5, 5, "#row=5", "B5")
    both = locator(doc, doc.text.index("id: INC-1"), len(doc.text))
    assert (both.fragment, both.where) == ("#row=2-5", "incidents, rows 2–5")
    assert both.fields() == {"sheet": "incidents", "range": "A2:B5", "row": 2, "row_end": 5, "fragment": "#row=2-5"}


def test_csv_delimiter_is_sniffed():
    doc = document_from_bytes("eu.csv", "name;amount\nrent;1200,50\n".encode("utf-8"))
    assert doc.text.endswith("name: rent | amount: 1200,50")


@pytest.mark.parametrize("raw, reason", [
    (b'a,b\n1,"unclosed\n', "malformed CSV at record 2 (line 2): unexpected end of data"),
    (b",,\n\n", "no value in the CSV file"),
    (b"", "empty file"),
])
def test_bad_csv_gives_one_reason(raw, reason):
    with pytest.raises(ValueError) as e:
        document_from_bytes("x.csv", raw)
    assert str(e.value) == reason


def test_bad_workbooks_give_one_reason():
    with pytest.raises(ValueError, match=r"^corrupt workbook \(BadZipFile: "):
        document_from_bytes("x.xlsx", b"PK\x03\x04 not really a zip")
    ole = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 100
    with pytest.raises(ValueError, match=r"^Excel 97-2003 \(\.xls\) content, not workbook"):
        document_from_bytes("old.xlsx", ole)
    with pytest.raises(ValueError, match=r"^password-protected workbook"):
        document_from_bytes("locked.xlsx", ole + "EncryptedPackage".encode("utf-16-le"))

    def only_hidden(wb):
        wb.add_worksheet("Visible")
        h = wb.add_worksheet("H")
        h.write(0, 0, "x")
        h.hide()

    with pytest.raises(ValueError) as e:
        document_from_bytes("empty.xlsx", _xlsx(only_hidden))
    assert str(e.value) == ("no value in any visible sheet (sheet 'Visible' holds no value: skipped; "
                            "sheet 'H' is hidden: skipped)")


# --------------------------------------------------------------------------- cells as the sheet shows them (issue 53)

def _excel_display(value, fmt: str) -> str:
    """The independent reading of the formats this test writes: Python's own format specifications, one per
    number format code, half away from zero as Excel rounds (never the product's formatter)."""
    from decimal import ROUND_HALF_UP, Decimal

    def rounded(x, places):
        return Decimal(repr(x)).quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)

    specs = {"0%": lambda v: f"{rounded(v * 100, 0):.0f}%", "0.0%": lambda v: f"{rounded(v * 100, 1):.1f}%",
             "0.00%": lambda v: f"{rounded(v * 100, 2):.2f}%", "0.00": lambda v: f"{rounded(v, 2):.2f}",
             "#,##0": lambda v: f"{rounded(v, 0):,.0f}", "#,##0.00": lambda v: f"{rounded(v, 2):,.2f}",
             '"$"#,##0.00': lambda v: ("-" if v < 0 else "") + f"${rounded(abs(v), 2):,.2f}",
             '0.0 "kg"': lambda v: f"{rounded(v, 1):.1f} kg"}
    return specs[fmt](value)


SHOWN = [(0.15, "0%"), (0.155, "0.0%"), (0.0725, "0.00%"), (3.14159, "0.00"), (1234567.891, "#,##0"),
         (1234.5, "#,##0.00"), (-5, '"$"#,##0.00'), (12, '0.0 "kg"')]


def _formatted_workbook() -> bytes:
    import xlsxwriter

    buf = io.BytesIO()
    wb = xlsxwriter.Workbook(buf, {"in_memory": True})
    ws = wb.add_worksheet("Targets")
    ws.write_row(0, 0, ["metric", "value", "plain"])
    for r, (v, fmt) in enumerate(SHOWN, start=1):
        ws.write(r, 0, f"m{r}")
        ws.write_number(r, 1, v, wb.add_format({"num_format": fmt}))
        ws.write_number(r, 2, v)  # General: read as stored
    ws.write(len(SHOWN) + 1, 0, "when")
    ws.write_datetime(len(SHOWN) + 1, 1, dt.datetime(2026, 3, 1), wb.add_format({"num_format": "d mmm yyyy"}))
    wb.close()
    return buf.getvalue()


def test_a_cell_reads_as_the_sheet_shows_it_and_keeps_its_stored_value():
    import openpyxl

    raw = _formatted_workbook()
    ref = openpyxl.load_workbook(io.BytesIO(raw))["Targets"]  # the independent reading: openpyxl's number format
    doc = document_from_bytes("targets.xlsx", raw)
    cells = {(s.row, s.col): s for s in doc.locators.cells}
    for r, (v, fmt) in enumerate(SHOWN, start=2):
        c = ref.cell(r, 2)
        assert c.number_format == fmt and c.value == v
        span = cells[(r, 2)]
        assert doc.text[span.start:span.end] == _excel_display(v, fmt), fmt
        assert span.stored == cell_text(v)  # the stored value, kept with the cell's locator
        plain = cells[(r, 3)]
        assert doc.text[plain.start:plain.end] == cell_text(v) and plain.stored == ""
    assert "value: 15%" in doc.text and "value: 1,234.50" in doc.text and "value: -$5.00" in doc.text
    # a date keeps its ISO form whatever its format (dates are not read as shown)
    span = cells[(len(SHOWN) + 2, 2)]
    assert doc.text[span.start:span.end] == "2026-03-01" and span.stored == ""
    # a needle typed as the sheet reads is found, and its locator is the cell that stores 0.15
    corpus = Corpus("t", (doc,))
    _, where, rejected = validate([Needle("n1", "metric: m1 | value: 15%", ("Target?",))], corpus)
    assert rejected == []
    loc = locator(doc, where["n1"].start, where["n1"].end)
    assert (loc.sheet, loc.range) == ("Targets", "A2:B2") and check_locator(doc, loc) == ""


def test_the_stored_value_survives_the_index_json():
    from audit.ingest.locators import LocatorMap

    doc = document_from_bytes("targets.xlsx", _formatted_workbook())
    again = LocatorMap.from_json(doc.locators.to_json())
    assert again == doc.locators
    # a map written before stored values were kept (seven fields a cell) still reads
    old = LocatorMap.from_json('{"kind":"sheet","sheets":["S"],"cells":[[0,2,0,1,1,1,1]],"cues":[],"notes":[]}')
    assert old.cells[0].stored == ""


@pytest.mark.parametrize("value,fmt,shown", [
    (0.15, "0%", "15%"), (2.5, "0", "3"), (-2.5, "0", "-3"),  # half away from zero
    (-5, "#,##0_);(#,##0)", "(5)"), (5, "#,##0_);(#,##0)", "5"),  # the negative section, padding
    (0, '#,##0;(#,##0);"-"', "-"), (1234, "[Red]#,##0", "1,234"), (1234.5, "[$€-407] #,##0.00", "€ 1,234.50"),
    (0.5, "#.00", ".50"), (2, "#.##", "2."), (-0.001, "0.00", "0.00"),
    (0.15, "General", None), (45000, "yyyy-mm-dd", None), (1e6, "0.00E+00", None), (7, "@", None),
    (1234, "#,##0,", None), (5, "[>100]0;0", None), (True, "0%", None), ("15", "0%", None)])
def test_shown_text_by_hand(value, fmt, shown):
    from audit.ingest.spreadsheet import shown_text

    assert shown_text(value, fmt) == shown
