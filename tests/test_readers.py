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
