"""Needle candidates in a workbook (issue 54, item 7): a cell is a candidate, and a long cell's sentences are too.

The workbook is written by XlsxWriter; every expected text is read off the layout below by hand: a row is the
paragraph ``Item: X | Notes: Y``, and the row's cells are its candidates (never the ``Item: `` names nor the
`` | `` separators, which are not in any cell), a cell of several sentences followed by each of them.
"""

from __future__ import annotations

import io

from audit.authoring.checks import candidate_sentences, picked_needle
from audit.ingest import document_from_bytes
from audit.ingest.markdown import markdown_document
from audit.views.ground_truth import sentences_frame


def _workbook() -> bytes:
    import xlsxwriter

    buf = io.BytesIO()
    wb = xlsxwriter.Workbook(buf, {"in_memory": True})
    ws = wb.add_worksheet("Limits")
    ws.write_row(0, 0, ["Item", "Limit", "Notes"])
    ws.write_row(1, 0, ["Uploads", "50 MB", "Larger files are refused. The refusal names the file. Ask the operator."])
    ws.write_row(2, 0, ["Sessions", "8 hours", "A session ends after eight idle hours."])
    wb.close()
    return buf.getvalue()


def test_a_workbook_row_offers_its_cells_and_a_long_cells_sentences():
    doc = document_from_bytes("limits.xlsx", _workbook())
    at = doc.text.index("refusal names")
    got = candidate_sentences(doc, at, at + 13)
    # the row "Item: Uploads | Limit: 50 MB | Notes: Larger files … operator.": its three cells, the third one
    # (three sentences) whole and then sentence by sentence
    assert [(s.text, s.cell) for s in got] == [
        ("Uploads", "Limits!A2"),
        ("50 MB", "Limits!B2"),
        ("Larger files are refused. The refusal names the file. Ask the operator.", "Limits!C2"),
        ("Larger files are refused.", "Limits!C2, sentence 1 of 3"),
        ("The refusal names the file.", "Limits!C2, sentence 2 of 3"),
        ("Ask the operator.", "Limits!C2, sentence 3 of 3"),
    ]
    for s in got:  # every candidate is the canonical text at its range
        assert doc.text[s.start:s.end] == s.text
    # picking the second sentence gives it alone: no counting of characters to trim "Notes: " away
    second = got[4]
    assert picked_needle(doc, second.start, second.end)[2] == "The refusal names the file."
    frame = sentences_frame(got)
    assert list(frame["cell"]) == [s.cell for s in got] and list(frame["sentence"])[2].startswith("Larger files")


def test_a_one_sentence_cell_is_one_candidate_and_text_documents_keep_the_sentence_rule():
    doc = document_from_bytes("limits.xlsx", _workbook())
    at = doc.text.index("idle hours")
    got = candidate_sentences(doc, at, at + 4)
    assert [(s.text, s.cell) for s in got] == [("Sessions", "Limits!A3"), ("8 hours", "Limits!B3"),
                                               ("A session ends after eight idle hours.", "Limits!C3")]
    md = markdown_document("x.md", "# X\n\nOne sentence here. Another one.\n")
    at = md.text.index("Another")
    assert [(s.text, s.cell) for s in candidate_sentences(md, at, at + 3)] == [("One sentence here.", ""),
                                                                              ("Another one.", "")]
    assert "cell" not in sentences_frame(candidate_sentences(md, at, at + 3))
