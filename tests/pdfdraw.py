"""The extraction audit's test PDFs, drawn with a real PDF library (fpdf2), each showing one way content dies.

- :func:`blank_page_pdf`: three pages, the second with no text at all (what a scanned page looks like).
- :func:`running_lines_pdf`: six pages, each opened by the header ``Relay handbook - Internal`` and
  closed by the footer ``Page N of 6`` (fpdf2's ``header()``/``footer()``, as report generators do).
- :func:`columns_and_table_pdf`: one page of two text columns drawn line by line across the page (left
  line, right line, next baseline: how many generators write them), then a 4 × 3 table.
- :func:`columns_in_order_pdf`: the same two columns drawn column by column (the extractor reads them right).
- :func:`report_table_pdf`: a report's table whose number columns are set flush right (fpdf2's ``table`` with
  ``text_align``), beside a paragraph with bold words on each line (prose, not a table).

Core fonts only (Helvetica, Latin-1), so nothing depends on the fonts of the machine.
"""

from __future__ import annotations

from fpdf import FPDF

#: Body of each page of :func:`running_lines_pdf` (about 150 characters: six pages make three chunks of 512).
BODY = ("Step {n} explains one part of the relay rotation. The operator checks the vault, rotates the key "
        "and records the change in the log book.")

HEADER = "Relay handbook - Internal"

LEFT = ["The relay keeps its signing keys", "in the vault and rotates them", "every thirty days without fail.",
        "A rotation writes a new version", "and retires the old one after", "a grace period of two days."]
RIGHT = ["Backups of the vault run nightly", "and are copied to cold storage", "in a second region at once.",
         "Each copy is checked by a hash", "and kept for ninety days before", "it is removed for good."]
TABLE = [("Service", "Port", "Owner"), ("relay", "8443", "ops"), ("vault", "8200", "security"),
         ("backup", "9000", "ops")]


def _new(title: str) -> FPDF:
    pdf = FPDF(format="A4")
    pdf.set_title(title)
    pdf.set_font("Helvetica", size=11)
    return pdf


def blank_page_pdf() -> bytes:
    """Page 1 and 3 hold a paragraph; page 2 holds nothing."""
    pdf = _new("Blank inside")
    pdf.add_page()
    pdf.multi_cell(0, 6, "The first page says that keys rotate every thirty days.")
    pdf.add_page()  # nothing drawn: a page without a text layer
    pdf.add_page()
    pdf.multi_cell(0, 6, "The third page says that backups are kept for ninety days.")
    return bytes(pdf.output())


class _Handbook(FPDF):
    def header(self) -> None:
        self.set_font("Helvetica", size=9)
        self.cell(0, 8, HEADER)
        self.ln(12)
        self.set_font("Helvetica", size=11)

    def footer(self) -> None:
        self.set_y(-15)
        self.set_font("Helvetica", size=9)
        self.cell(0, 8, f"Page {self.page_no()} of {{nb}}")


def running_lines_pdf(pages: int = 6, body: bool = True) -> bytes:
    """``pages`` pages, each: the header, the body :data:`BODY` (wrapped on several lines; none without
    ``body``: a scan stamped with a digital header and page number), the footer."""
    pdf = _Handbook(format="A4")
    pdf.set_title("Relay handbook")
    pdf.alias_nb_pages()
    for n in range(1, pages + 1):
        pdf.add_page()
        if body:
            pdf.multi_cell(0, 6, BODY.format(n=n))
    return bytes(pdf.output())


def columns_and_table_pdf() -> bytes:
    """Two columns (x = 20 mm and 110 mm) drawn a baseline at a time, then the table :data:`TABLE`."""
    pdf = _new("Columns and table")
    pdf.add_page()
    y = 30
    for left, right in zip(LEFT, RIGHT):
        pdf.text(20, y, left)
        pdf.text(110, y, right)
        y += 6
    pdf.set_y(80)
    with pdf.table(col_widths=(40, 30, 30), width=120) as t:
        for row in TABLE:
            r = t.row()
            for cell in row:
                r.cell(cell)
    return bytes(pdf.output())


def columns_in_order_pdf() -> bytes:
    """The two columns of :func:`columns_and_table_pdf`, drawn the left column first, then the right one."""
    pdf = _new("Columns in order")
    pdf.add_page()
    for x, lines in ((20, LEFT), (110, RIGHT)):
        y = 30
        for line in lines:
            pdf.text(x, y, line)
            y += 6
    return bytes(pdf.output())


def outline_pdf() -> bytes:
    """Two pages with an outline (bookmarks) of two top-level entries, "Rotation" and "Backups"."""
    pdf = _new("Outlined")
    pdf.add_page()
    pdf.start_section("Rotation")
    pdf.multi_cell(0, 6, "Rotation\nKeys rotate every thirty days.")
    pdf.add_page()
    pdf.start_section("Backups")
    pdf.multi_cell(0, 6, "Backups\nBackups are kept for ninety days.")
    return bytes(pdf.output())


#: A report's table: the Port and Requests columns hold numbers, set flush right as reports set them.
REPORT_TABLE = [("Service", "Port", "Requests", "Owner"), ("relay", "8443", "1,204", "ops"),
                ("vault", "8200", "87", "security"), ("backup", "9000", "12,950", "ops"),
                ("gateway", "443", "310", "edge")]


def report_table_pdf() -> bytes:
    """A paragraph whose lines each carry a bold word, then :data:`REPORT_TABLE` with its number columns flush
    right: a cell's start moves with its width, so those columns share no x position from row to row."""
    pdf = _new("Traffic report")
    pdf.add_page()
    for _ in range(4):  # prose with a bold word a line: three pieces a line, at other places on each line
        pdf.write(6, "The relay keeps its ")
        pdf.set_font("Helvetica", "B", 11)
        pdf.write(6, "signing")
        pdf.set_font("Helvetica", size=11)
        pdf.write(6, " keys in the vault.\n")
        pdf.write(6, "Backups of the ")
        pdf.set_font("Helvetica", "B", 11)
        pdf.write(6, "vault")
        pdf.set_font("Helvetica", size=11)
        pdf.write(6, " run nightly and are kept for ninety days.\n")
    pdf.ln(4)
    with pdf.table(text_align=("LEFT", "RIGHT", "RIGHT", "LEFT"), width=140, first_row_as_headings=False) as t:
        for row in REPORT_TABLE:
            r = t.row()
            for cell in row:
                r.cell(cell)
    return bytes(pdf.output())
