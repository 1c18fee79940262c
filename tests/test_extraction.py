"""PDF and HTML extraction: page locators, text layers, scripts dropped, broken files listed."""

from __future__ import annotations

import pytest
from pdfmaker import make_pdf

from audit.chunking import Strategy, chunk_corpus
from audit.ingest import (
    EXTRACTOR_VERSIONS,
    Corpus,
    document_from_bytes,
    html_to_markdown,
    load_folder,
    pdf_document,
)


def test_pdf_pages_and_page_locators():
    raw = make_pdf(["First page line one.\nFirst page line two.", "Second page text here.", "Third."],
                   title="Manual")
    d = pdf_document("m.pdf", raw, "m")
    assert d.title == "Manual" and d.extractor == "pdf"
    assert d.text.startswith("# Manual\n\n")
    assert len(d.pages) == 3
    assert d.text[d.pages[1]:].startswith("Second page text here.")
    assert d.page_span(d.pages[0], d.pages[0] + 5) == (1, 1)
    # a range crossing the break between pages 1 and 2 names page 1 and reaches page 2
    assert d.page_span(d.pages[1] - 10, d.pages[1] + 3) == (1, 2)
    assert d.page_span(d.pages[2], len(d.text)) == (3, 3)
    # the title line (before page 1's text) counts as page 1; never above the page count
    assert d.page_span(0, 3) == (1, 1)
    assert d.page_span(len(d.text) - 1, len(d.text) + 50)[1] == 3
    cs = chunk_corpus(Corpus("t", (d,)), Strategy("x", "boundaries", target=30))
    for c in cs.chunks:
        first, last = d.page_span(c.start, c.end)
        assert 1 <= first <= last <= 3


def test_scanned_pdf_and_corrupt_pdf_fail_with_reasons():
    with pytest.raises(ValueError, match=r"no text layer \(needs OCR\)"):
        pdf_document("s.pdf", make_pdf([None, None]), "s")
    with pytest.raises(ValueError, match="corrupt PDF"):
        pdf_document("c.pdf", b"%PDF-1.4\n garbage that is not a pdf", "c")
    with pytest.raises(ValueError, match="empty file"):
        pdf_document("e.pdf", b"", "e")


def test_html_headings_sections_scripts_dropped():
    html = """<html><head><title>Guide</title><style>p {color: red}</style>
    <script>alert('x')</script></head><body>
    <h1>Ignored h1 since title exists</h1>
    <p>Intro   paragraph
       spread over lines.</p>
    <h2>Install</h2><p>Run <b>setup</b> twice.<br>Then reboot.</p>
    <img src="x" onerror="alert(1)">
    <h3>Details</h3><ul><li>one</li><li>two</li></ul>
    <pre>code line 1
code line 2</pre>
    </body></html>"""
    md, title = html_to_markdown(html, "fallback")
    assert title == "Guide"
    assert "alert" not in md and "color: red" not in md and "onerror" not in md
    assert md.startswith("# Guide\n\n")
    assert "Intro paragraph spread over lines." in md
    assert "## Install\n\nRun setup twice.\nThen reboot." in md
    assert "### Details" in md and "one\n\ntwo" in md
    assert "code line 1\ncode line 2" in md


def test_an_h1_repeating_the_title_is_not_a_second_heading():
    # issue 24: <title>Backups</title> and <h1>Backups</h1> gave "# Backups" then "## Backups": the text
    # before the first section was the title line alone, a chunk "[Backups]\n# Backups" holding no content
    html = ("<html><head><title>Backups</title></head><body><h1> backups </h1>"
            "<p>Snapshots run hourly.</p><h2>Restore</h2><p>Use the newest snapshot.</p></body></html>")
    md, title = html_to_markdown(html, "fallback")
    assert title == "Backups"
    assert md == "# Backups\n\nSnapshots run hourly.\n\n## Restore\n\nUse the newest snapshot."
    doc = document_from_bytes("b.html", html.encode())
    chunks = chunk_corpus(Corpus("t", (doc,)), Strategy("E", "boundaries", header=True)).chunks
    # the span before the first section holds the title line and the paragraph, as in markdown
    assert [c.content for c in chunks] == ["# Backups\n\nSnapshots run hourly.", "Use the newest snapshot."]
    assert [s.title for s in doc.sections] == ["Restore"]
    # an <h1> that differs from the title stays a section
    md, _ = html_to_markdown("<title>Guide</title><h1>Backups</h1><p>x</p>", "f")
    assert md == "# Guide\n\n## Backups\n\nx"
    assert EXTRACTOR_VERSIONS["html"] == "3"  # the canonical text of such files changed: re-extracted


def test_folder_with_pdf_html_and_broken_files(tmp_path):
    (tmp_path / "good.pdf").write_bytes(make_pdf(["A page of real text."]))
    (tmp_path / "scan.pdf").write_bytes(make_pdf([None]))
    (tmp_path / "broken.pdf").write_bytes(b"%PDF-1.7 truncated")
    (tmp_path / "page.html").write_text("<h1>T</h1><h2>S</h2><p>body</p>", encoding="utf-8")
    c = load_folder(tmp_path)
    assert [d.doc_id for d in c.documents] == ["good.pdf", "page.html"]
    reasons = {f.source: f.reason for f in c.failures}
    assert reasons["scan.pdf"] == "no text layer (needs OCR)"
    assert reasons["broken.pdf"].startswith("corrupt PDF")
    assert [s.title for s in c.get("page.html").sections] == ["S"]
