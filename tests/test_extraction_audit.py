"""The extraction audit (issue 26): where content dies, per document, on PDFs drawn with a real PDF library.

The three PDFs of :mod:`pdfdraw` each show one failure; each must give exactly its findings, with its
pages and the number of chunks of strategy E (boundaries, header, target 512) it reaches.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

import pdfdraw
from audit.chunking import PRESETS, chunk_corpus
from audit.ingest import Corpus, load_folder, pdf_document
from audit.ingest.extraction_audit import (
    GARBLED_BOUND,
    ExtractionNotes,
    audit_document,
    bad_characters,
    chunks_reaching,
    find_running_lines,
    format_pages,
    normalise_digits,
    page_ranges,
    strip_running_lines,
)


def _audit(raw: bytes, name: str, strip: bool = False):
    doc = pdf_document(name, raw, name.removesuffix(".pdf"), strip)
    chunks = chunk_corpus(Corpus("t", (doc,)), PRESETS["E"]).chunks
    return doc, chunks, audit_document(doc.doc_id, doc.text, doc.pages, doc.extraction,
                                       [(c.start, c.end) for c in chunks])


def _summary(audit) -> list[tuple[str, tuple[int, ...], int]]:
    return [(f.check, f.pages, f.chunks) for f in audit.findings]


# --------------------------------------------------------------------------- the three PDFs of the issue

def test_a_blank_page_inside_a_text_pdf_is_listed_and_the_document_still_indexed():
    doc, chunks, audit = _audit(pdfdraw.blank_page_pdf(), "blank.pdf")
    assert len(doc.pages) == 3 and doc.text[doc.pages[1]:doc.pages[2]] == "\n\n"  # page 2 is empty
    # The whole text (133 characters) is one chunk of E (under 512): it spans the empty page 2.
    assert len(chunks) == 1
    assert _summary(audit) == [("no_text_layer", (2,), 1)]
    one, three = "The first page says that keys rotate every thirty days.", ("The third page says that backups "
                                                                           "are kept for ninety days.")
    assert [p.characters for p in audit.pages] == [len(one.replace(" ", "")), 0, len(three.replace(" ", ""))]
    assert audit.searchable  # pages 1 and 3 have text: a warning, not unhealthy


def test_running_header_and_footer_on_six_pages_reach_every_chunk_that_crosses_a_page_break():
    doc, chunks, audit = _audit(pdfdraw.running_lines_pdf(), "handbook.pdf")
    assert len(doc.pages) == 6
    # Each page is one paragraph of header + body + footer (172 characters); E packs two pages a chunk
    # (18 + 172 + 2 + 172 = 364 ≤ 512, a third would pass 512): 3 chunks, each holding the footer of
    # one page and the header of the next.
    assert len(chunks) == 3
    for c in chunks:
        assert "Page " in c.content and pdfdraw.HEADER in c.content
    assert _summary(audit) == [("running_lines", (1, 2, 3, 4, 5, 6), 3)]
    ev = audit.findings[0].evidence
    assert "header 'Relay handbook - Internal' on pages 1–6 (3 chunks)" in ev
    assert "footer 'Page 1 of 6' on pages 1–6 (3 chunks)" in ev
    # every occurrence is placed on its page, and reads the line itself
    for s, e in audit.findings[0].ranges:
        assert doc.text[s:e] == pdfdraw.HEADER or normalise_digits(doc.text[s:e]) == "Page # of #"


def test_a_two_column_page_with_a_table_gives_exactly_a_column_and_a_table_finding():
    doc, chunks, audit = _audit(pdfdraw.columns_and_table_pdf(), "layout.pdf")
    assert _summary(audit) == [("tables", (1,), 1), ("columns", (1,), 1)]
    tables, columns = audit.findings
    assert "4 rows × 3 cells" in tables.evidence and "'Service | Port | Owner'" in tables.evidence
    (ts, te), = tables.ranges
    assert doc.text[ts:te] == "\n".join(" ".join(row) for row in pdfdraw.TABLE)
    # the extractor joined each left line with the right one on the same baseline: the interleaving itself
    (cs, ce), = columns.ranges
    assert doc.text[cs:ce] == "\n".join(f"{a} {b}" for a, b in zip(pdfdraw.LEFT, pdfdraw.RIGHT))
    assert "6 lines join a left and a right column (x = 56.7 and 311.8 pt)" in columns.evidence  # 20 mm, 110 mm


def test_item54_a_table_with_numbers_flush_right_is_a_table_and_bold_words_are_not():
    # issue 54, also seen: a report's table pages escaped the audit. Its number columns are set flush right, so
    # each row starts those cells at another x; only Service and Owner (left-aligned) share columns. The rows still
    # fill the same four cells in the same order: a table read as lines of words. The prose above it, three pieces a
    # line (a bold word in each), puts its pieces at other places on every line: no table.
    doc, _, audit = _audit(pdfdraw.report_table_pdf(), "report.pdf")
    assert _summary(audit) == [("tables", (1,), 1)]
    (t,) = audit.findings
    assert "5 rows × 4 cells read as lines of words, first row 'Service | Port | Requests | Owner'" in t.evidence
    (ts, te), = t.ranges
    assert doc.text[ts:te] == "\n".join(" ".join(row) for row in pdfdraw.REPORT_TABLE)


def test_two_columns_drawn_column_by_column_are_read_right_and_not_flagged():
    doc, _, audit = _audit(pdfdraw.columns_in_order_pdf(), "ordered.pdf")
    assert audit.findings == ()
    assert doc.text.index(pdfdraw.LEFT[-1]) < doc.text.index(pdfdraw.RIGHT[0])


def test_stripping_removes_the_running_lines_from_the_chunks_and_keeps_every_offset_true():
    raw = pdfdraw.running_lines_pdf()
    plain = pdf_document("h.pdf", raw, "h")
    doc, chunks, audit = _audit(raw, "h.pdf", strip=True)
    assert doc.extractor_version == plain.extractor_version + "+strip-running-lines"
    assert [(r.where, r.text, r.pages) for r in doc.extraction.stripped] == [
        ("header", pdfdraw.HEADER, (1, 2, 3, 4, 5, 6)), ("footer", "Page 1 of 6", (1, 2, 3, 4, 5, 6))]
    for c in chunks:
        assert doc.text[c.start:c.end] == c.content
        assert pdfdraw.HEADER not in c.content and "of 6" not in c.content
    # each page is the plain page without its first and last line
    plain_pages = [plain.text[s:e] for s, e in page_ranges(plain.text, plain.pages)]
    assert [doc.text[s:e] for s, e in page_ranges(doc.text, doc.pages)] == [
        "\n".join(p.split("\n")[1:-1]) for p in plain_pages]
    # the rule is applied once, at extraction: the body's first line ("Step N explains …", digits aside the
    # same on every page) is content, not a second header
    assert _summary(audit) == []
    assert [s.title for s in doc.sections] == [] and doc.title == "Relay handbook"


def test_the_three_pdfs_in_one_index_give_their_findings_in_health(tmp_path):
    from audit.index import IndexStore, index_corpus
    from audit.index.health import check_index
    from audit.models import HashingEncoder

    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "blank.pdf").write_bytes(pdfdraw.blank_page_pdf())
    (folder / "handbook.pdf").write_bytes(pdfdraw.running_lines_pdf())
    (folder / "layout.pdf").write_bytes(pdfdraw.columns_and_table_pdf())
    (folder / "notes.md").write_text("# Notes\n\nNothing to see.\n", encoding="utf-8")
    store = IndexStore(tmp_path / "i.sqlite")
    index_corpus(store, load_folder(folder), PRESETS["E"], HashingEncoder(dims=32))
    rep = check_index(store, "E")
    by = {f.check: f for f in rep.findings}
    assert rep.healthy  # warnings only: every document has something searchable
    got = {c: [(d["doc_id"], d["pages"], d["chunks"]) for d in by[c].documents]
           for c in ("no_text_layer", "running_lines", "tables", "columns", "garbled")}
    assert got == {"no_text_layer": [("blank.pdf", [2], 1)], "running_lines": [("handbook.pdf", [1, 2, 3, 4, 5, 6], 3)],
                   "tables": [("layout.pdf", [1], 1)], "columns": [("layout.pdf", [1], 1)], "garbled": []}
    assert [by[c].severity for c in got] == ["warning"] * 4 + ["ok"]
    # characters per PDF page, in the JSON and one line of the text
    pages = {(r["doc_id"], r["page"]): r for r in rep.to_json()["pages"]}
    assert len(pages) == 3 + 6 + 1 and pages[("blank.pdf", 2)]["characters"] == 0
    hb = pages[("handbook.pdf", 3)]
    assert hb["characters"] - hb["own_characters"] == len(pdfdraw.HEADER.replace(" ", "")) + len("Page3of6")
    assert "fewest 0 (blank.pdf page 2); no garbled character" in rep.render()


def test_a_pdf_whose_pages_hold_only_their_running_lines_is_unhealthy(tmp_path):
    from audit.index import IndexStore, index_corpus
    from audit.index.health import check_index
    from audit.models import HashingEncoder

    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "stamped-scan.pdf").write_bytes(pdfdraw.running_lines_pdf(pages=3, body=False))
    store = IndexStore(tmp_path / "i.sqlite")
    index_corpus(store, load_folder(folder), PRESETS["E"], HashingEncoder(dims=32))
    rep = check_index(store, "E")
    by = {f.check: f for f in rep.findings}
    assert not rep.healthy and by["no_text_layer"].severity == "unhealthy"
    assert by["no_text_layer"].documents[0]["pages"] == [1, 2, 3]
    assert "nothing in this document is searchable" in by["no_text_layer"].documents[0]["why"]
    assert by["running_lines"].severity == "warning" and by["failed"].severity == "ok"  # indexed, not failed


# --------------------------------------------------------------------------- the rules, by hand

def test_running_lines_need_three_pages_and_half_of_them():
    head = ["Acme - Internal\nbody one", "Acme - Internal\nbody two", "other\nbody three"]
    # 3 pages, the header opens 2 = ceil(3 / 2): running; as 2 pages it proves nothing
    assert [(r.where, r.pages) for r in find_running_lines(head)] == [("header", (1, 2))]
    assert find_running_lines(head[:2]) == []
    # 4 pages whose lines all differ: nothing repeats
    assert find_running_lines(["a\nx", "b\ny", "c\nz", "d\nw"]) == []
    four = ["Acme\nsame end 1", "Beta\nsame end 2", "Gamma\nsame end 3", "Delta\nother"]
    assert [(r.where, r.pattern, r.pages) for r in find_running_lines(four)] == [("footer", "same end #", (1, 2, 3))]
    assert normalise_digits("  Page 12   of 60 ") == "Page # of #"


def test_a_page_holding_only_its_running_lines_has_no_text_layer_and_nothing_searchable():
    pages = ["Acme - Internal\nPage 1 of 3", "Acme - Internal\nPage 2 of 3", "Acme - Internal\nPage 3 of 3"]
    text, starts = "# T\n\n", []
    for i, p in enumerate(pages):
        text += "\n\n" if i else ""
        starts.append(len(text))
        text += p
    audit = audit_document("scan.pdf", text, starts, ExtractionNotes())
    assert [f.check for f in audit.findings] == ["no_text_layer", "running_lines"]
    assert audit.findings[0].pages == (1, 2, 3) and not audit.searchable


def test_garbled_share_counts_private_use_unassigned_controls_and_replacement_characters():
    # 4 bad characters: U+E000 (Co), U+0378 (Cn), U+0007 (Cc), U+FFFD; tab and newline are not bad
    text = "a\tb\nc" + "\ue000\u0378\u0007\ufffd"
    assert bad_characters(text) == 4
    clean = "x" * 196
    over = audit_document("g.md", clean + "\ufffd" * 3 + "y", ())  # 3 of 200 = 1.5 % > 1 %
    at = audit_document("g.md", clean + "\ufffd" * 2 + "yy", ())   # 2 of 200 = 1.0 %, not over the bound
    assert [f.check for f in over.findings] == ["garbled"] and over.pages[0].garbled_share == 0.015
    assert at.findings == () and at.pages[0].garbled_share == GARBLED_BOUND
    assert "worst 1.5%: 3 of 200" in over.findings[0].evidence


def test_chunks_reaching_counts_each_chunk_once():
    spans = [(0, 10), (12, 20), (22, 30)]
    assert chunks_reaching([(5, 13)], spans) == 2           # overlaps the first two
    assert chunks_reaching([(10, 12)], spans) == 0          # the gap between two chunks
    assert chunks_reaching([(5, 6), (7, 8)], spans) == 1    # two places, one chunk
    assert chunks_reaching([(21, 21)], spans) == 0          # an empty page between chunks
    assert chunks_reaching([(15, 15)], spans) == 1          # an empty page inside a chunk
    assert format_pages([5, 1, 2, 3, 3]) == "1–3, 5"


def test_notes_round_trip_through_json():
    _, _, audit = _audit(pdfdraw.columns_and_table_pdf(), "layout.pdf")
    doc = pdf_document("h.pdf", pdfdraw.running_lines_pdf(), "h", True)
    for notes in (pdf_document("l.pdf", pdfdraw.columns_and_table_pdf(), "l").extraction, doc.extraction):
        assert ExtractionNotes.from_json(notes.to_json()) == notes
    with pytest.raises(ValueError, match="extraction notes"):
        ExtractionNotes.from_json('{"layout": [{"kind": "table"}]}')


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(hs.lists(hs.lists(hs.sampled_from(["Acme 1", "Acme 2", "body", "more body", "Page 3", ""]), max_size=5)
                .map("\n".join).map(lambda t: t.strip("\n")), min_size=0, max_size=7))
def test_stripping_only_removes_edge_lines_of_the_pages_a_running_line_names(pages):
    out, removed = strip_running_lines(pages)
    assert len(out) == len(pages)
    named = {(p, r.where) for r in removed for p in r.pages}
    for i, (before, after) in enumerate(zip(pages, out), start=1):
        # what is left is one piece of the page (its edge lines cut off), at most two non-blank lines fewer
        assert after in before
        assert not after.startswith("\n") and not after.endswith("\n")
        if not any(p == i for p, _ in named):
            assert after == before
        lost = [x for x in before.split("\n") if x.strip()]
        assert len(lost) - len([x for x in after.split("\n") if x.strip()]) <= 2


# --------------------------------------------------------------------------- sidebar / CLI / config

def test_index_strip_option_is_stamped_and_health_judges_it_against_the_current_configuration(tmp_path, capsys,
                                                                                              monkeypatch):
    from audit.cli import main

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("AUDIT_CONFIG", raising=False)
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "handbook.pdf").write_bytes(pdfdraw.running_lines_pdf())
    db = str(tmp_path / "i.sqlite")
    assert main(["index", str(folder), "--db", db, "--model", "hashing", "--strip-running-lines"]) == 0
    capsys.readouterr()
    # judged without the option, the stripped extraction is stale: exit 1 naming both versions
    assert main(["health", "--db", db, "--model", "hashing"]) == 1
    assert "extractor pdf 5+strip-running-lines → 5" in capsys.readouterr().out
    out_json = tmp_path / "h.json"
    assert main(["health", "--db", db, "--model", "hashing", "--strip-running-lines", "--json", str(out_json)]) == 0
    text = capsys.readouterr().out
    assert "no running headers or footers in the text: none; 1 documents had theirs stripped at extraction" in text
    findings = {f["check"]: f for f in json.loads(out_json.read_text())[0]["findings"]}
    assert findings["running_lines"]["severity"] == "ok"
    # audit.toml's [ingest] gives the same default; the flag still wins
    (tmp_path / "audit.toml").write_text("[ingest]\nstrip_running_lines = true\n", encoding="utf-8")
    assert main(["health", "--db", db, "--model", "hashing"]) == 0
    assert main(["health", "--db", db, "--model", "hashing", "--no-strip-running-lines"]) == 1
    # the corpus command writes the canonical text the chunks' offsets refer to
    out = tmp_path / "c.jsonl"
    assert main(["corpus", "--corpus", str(folder), "--jsonl", str(out)]) == 0
    assert pdfdraw.HEADER not in json.loads(out.read_text().splitlines()[0])["text"]


def test_a_malformed_ingest_table_is_one_line_and_exit_2(tmp_path, capsys, monkeypatch):
    from audit.cli import main

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("AUDIT_CONFIG", raising=False)
    (tmp_path / "audit.toml").write_text('[ingest]\nstrip_running_lines = "yes"\n', encoding="utf-8")
    assert main(["corpus", "--corpus", "python-reference", "--jsonl", str(tmp_path / "c.jsonl")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "[ingest] strip_running_lines must be true or false, not 'yes'" in err[0]
    (tmp_path / "audit.toml").write_text("[ingest]\nstrip = true\n", encoding="utf-8")
    assert main(["corpus", "--corpus", "python-reference", "--jsonl", str(tmp_path / "c.jsonl")]) == 2
    assert "[ingest] unknown key(s) strip; known: strip_running_lines" in capsys.readouterr().err
