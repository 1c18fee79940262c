"""The one locator function (audit/ingest/locators.py): A1 references, fragments, PDF page ranges, the map's JSON."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pdfmaker import make_pdf

from audit.evaluation.citations import build_context
from audit.ingest import Corpus, document_from_bytes
from audit.ingest.locators import (
                                   CellSpan,
                                   CueSpan,
                                   Locator,
                                   LocatorMap,
                                   a1_range,
                                   column_letters,
                                   format_seconds,
                                   locator,
                                   locator_columns,
)
from audit.ingest.markdown import markdown_document


def test_column_letters_and_a1():
    # bijective base 26, as spreadsheets count: Z is 26, AA 27, AZ 52, BA 53, ZZ 702, AAA 703
    assert [column_letters(n) for n in (1, 26, 27, 52, 53, 702, 703, 16384)] == \
        ["A", "Z", "AA", "AZ", "BA", "ZZ", "AAA", "XFD"]  # XFD: Excel's last column
    assert a1_range(2, 1, 9, 4) == "A2:D9" and a1_range(3, 2, 3, 2) == "B3"
    with pytest.raises(ValueError, match="column numbers start at 1, got 0"):
        column_letters(0)


def test_seconds_are_exact_decimals_of_milliseconds():
    assert [format_seconds(ms) for ms in (0, 5000, 132400, 158900, 4500, 1, 3_600_000)] == \
        ["0", "5", "132.4", "158.9", "4.5", "0.001", "3600"]
    # the specification's example #t=132.4,158.9
    assert Locator(0, 1, t_start_ms=132400, t_end_ms=158900).fragment == "#t=132.4,158.9"


def test_pdf_pages_of_a_chunk_crossing_a_break():
    doc = document_from_bytes("r.pdf", make_pdf(["First page ends here.", "Second page starts here."]))
    p2 = doc.text.index("Second")
    across = locator(doc, doc.text.index("ends"), p2 + 6)
    # #page= takes one page (PDF Open Parameters): the first; the reading says both
    assert (across.page, across.page_end, across.fragment, across.where) == (1, 2, "#page=1", "pages 1–2")
    assert across.display == f"#char={across.start},{across.end} #page=1 (pages 1–2)"
    assert across.fields() == {"page": 1, "page_end": 2, "fragment": "#page=1"}
    on2 = locator(doc, p2, p2 + 6)
    assert (on2.fragment, on2.where) == ("#page=2", "page 2")
    # a citation of the crossing range carries both pages
    from audit.chunking import Chunk

    chunk = Chunk(0, "r.pdf", doc.title, "", doc.text[across.start:across.end], doc.text[across.start:across.end],
                  across.start, across.end)
    (cit,) = build_context("q", [(chunk, 0.1)], Corpus("t", (doc,))).citations
    assert cit.page == "#page=1" and cit.where.where == "pages 1–2"


def test_plain_text_has_only_char():
    doc = markdown_document("a.md", "# A\n\nsome text\n")
    loc = locator(doc, 5, 9)
    assert (loc.char, loc.fragment, loc.where, loc.fields()) == ("#char=5,9", "", "", {})


def test_a_mapped_format_without_its_map_says_so():
    doc = markdown_document("a.csv", "# a\n\n## a\n\nx | y", extractor="csv")  # e.g. read back from a Lance dataset
    loc = locator(doc, 10, 15)
    assert loc.fragment == "" and loc.note == "no cell ranges stored with this document's index: #char= only"
    assert loc.fields() == {"locator_note": loc.note}


def test_locator_columns_only_where_some_citation_has_them():
    assert locator_columns([Locator(0, 1), Locator(2, 3)]) == {}
    cols = locator_columns([Locator(0, 1, page=2, page_end=3), Locator(2, 3, sheet="S", range="A1")])
    assert cols == {"page": [2, None], "page_end": [3, None], "sheet": [None, "S"], "range": [None, "A1"],
                    "fragment": ["#page=2", "#sheet=S&range=A1"]}


def test_map_json_round_trip():
    m = LocatorMap("sheet", cells=(CellSpan(3, 8, "Q1 prices", 2, 1, 3, 2), CellSpan(9, 12, "Notes", 1, 1, 1, 1)),
                   notes=("sheet 'Draft' is hidden: skipped",))
    assert LocatorMap.from_json(m.to_json()) == m
    c = LocatorMap("cues", cues=(CueSpan(0, 4, 1000, 4500),), media="talks/a.mp4")
    assert LocatorMap.from_json(c.to_json()) == c
    assert LocatorMap.from_json(None) is None and LocatorMap.from_json("") is None


@st.composite
def _sheet(draw):
    """A random layout: cells of one sheet laid out one after another in the text, some merged."""
    n = draw(st.integers(1, 25))
    cells, pos = [], 0
    for _ in range(n):
        pos += draw(st.integers(0, 4))  # separators and labels between cells
        width = draw(st.integers(1, 6))
        r, c = draw(st.integers(1, 40)), draw(st.integers(1, 30))
        r2, c2 = r + draw(st.integers(0, 2)), c + draw(st.integers(0, 2))
        cells.append(CellSpan(pos, pos + width, "S", r, c, r2, c2))
        pos += width
    return cells, pos


@pytest.mark.slow
@given(_sheet(), st.data())
def test_range_is_the_bounding_box_of_the_touched_cells(layout, data):
    cells, length = layout
    doc = markdown_document("s.xlsx", "x" * length, extractor="xlsx")
    from dataclasses import replace

    doc = replace(doc, locators=LocatorMap("sheet", cells=tuple(cells)))
    start = data.draw(st.integers(0, length - 1))
    end = data.draw(st.integers(start + 1, length))
    touched = [c for c in cells if c.start < end and start < c.end]
    loc = locator(doc, start, end)
    if not touched:
        assert loc.sheet is None and loc.fragment == ""
        return
    expect = a1_range(min(c.row for c in touched), min(c.col for c in touched),
                      max(c.row_end for c in touched), max(c.col_end for c in touched))
    assert loc.range == expect and loc.sheet == "S"
