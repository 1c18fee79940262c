"""Documents as people write them (issue 10): every CommonMark heading form, <pre> in HTML,
PDF ligatures, encryption and outlines, broken symbolic links, and the matching view."""

from __future__ import annotations

import io
import os

import pytest
from pdfmaker import make_pdf

from audit.chunking import PRESETS, chunk_document
from audit.groundtruth import Needle, validate
from audit.ingest import (
    Corpus,
    document_from_bytes,
    load_folder,
    markdown_document,
    pdf_document,
)
from audit.matching import find_view, view, view_with_map

# --------------------------------------------------------------------------- markdown headings

def test_closing_sequence_is_not_part_of_the_heading():
    d = markdown_document("b.md", "# Backup guide #\n\n## Retention policy ##\n\nKeep 30 days of dumps.\n")
    assert d.title == "Backup guide"
    assert [s.title for s in d.sections] == ["Retention policy"]
    (c,) = chunk_document(d, PRESETS["E"])[-1:]
    assert c.header == "[Backup guide > Retention policy]"


@pytest.mark.parametrize("text, sections", [
    ("   ## Indented three ##   \n\nbody\n", ["Indented three"]),        # 0-3 spaces of indent
    ("Setext two\n----------\n\nbody\n", ["Setext two"]),                 # setext level 2
    ("## A ## b\n\nbody\n", ["A ## b"]),                                 # a '#' run inside the text stays
    ("##\n\n## Named\n\nbody\n", ["Named"]),                             # an empty heading names no section
    ("    ## code, indented four\n\nbody\n", []),                        # indented code
    ("```\n## fenced\n```\n\nbody\n", []),                               # fenced code
    ("~~~~\n## tilde\n~~~\n## still code\n~~~~\n", []),                  # a shorter fence does not close
    ("<div>\n## inside html\n</div>\n\nbody\n", []),                     # an HTML block
    ("- item\n\n  ## in a list\n\nbody\n", []),                           # inside a list item
    ("> ## quoted\n\nbody\n", []),                                       # inside a block quote
    ("#5 bolt\n\n##nospace\n", []),                                     # no space after the #s
])
def test_every_heading_form(text, sections):
    d = markdown_document("x.md", text)
    assert [s.title for s in d.sections] == sections
    assert d.text == text  # the canonical text is the file itself


def test_setext_heading_spans_both_lines_and_a_needle_on_it_is_rejected():
    text = "Title here\n==========\n\nIntro line.\n\nBackups run nightly\n-------------------\n\nThey finish by six.\n"
    d = markdown_document("s.md", text)
    assert d.title == "Title here"
    assert [s.title for s in d.sections] == ["Backups run nightly"]
    s = d.sections[0]
    # the heading range covers the text line and its underline, not the blank line after
    assert text[s.start:s.body_start] == "Backups run nightly\n-------------------\n"
    assert (0, len("Title here\n==========")) in d.headings
    acc, locs, rej = validate([Needle("a", "Backups run nightly", ("q",), 1),
                               Needle("b", "They finish by six.", ("q",), 2)], Corpus("t", (d,)))
    assert [r.id for r in rej] == ["a"] and "overlaps a heading line" in rej[0].reason
    assert text[locs["b"].start:locs["b"].end] == "They finish by six."


def test_yaml_front_matter_is_metadata_not_a_heading():
    # without the rule, the closing "---" underlines "tags: [ops]" into a setext heading
    text = "---\ntitle: 'Backup guide'\ntags: [ops]\n---\n\n## Retention policy ##\n\nKeep 30 days.\n"
    d = markdown_document("b.md", text)
    assert d.text == text
    assert d.title == "Backup guide"  # no level-1 heading: the front matter's title
    assert [s.title for s in d.sections] == ["Retention policy"]
    assert [text[s:e] for s, e in d.headings] == ["## Retention policy ##"]
    assert markdown_document("c.md", "---\ntitle: X\n---\n# Own title\n").title == "Own title"


def test_a_hash_line_in_code_is_a_valid_needle_place():
    text = "# Doc\n\n```sh\n# enable the site now\n```\n"
    d = markdown_document("c.md", text)
    acc, locs, rej = validate([Needle("n", "# enable the site now", ("q",), 1)], Corpus("t", (d,)))
    assert rej == [] and locs["n"].start == text.index("# enable")


# --------------------------------------------------------------------------- HTML <pre>

def test_html_pre_stays_code_with_its_whitespace():
    html = (b"<html><head><title>Site</title></head><body><h2>Setup</h2><p>Run   these.</p>"
            b"<pre>\n## step one: fetch packages\n# step two: enable the site\n    ln -s /etc/a /etc/b\n</pre>"
            b"<p>Done.</p></body></html>")
    d = document_from_bytes("s.html", html)
    assert [s.title for s in d.sections] == ["Setup"]  # no section cut inside the <pre>
    assert "```\n## step one: fetch packages\n# step two: enable the site\n    ln -s /etc/a /etc/b\n```" in d.text
    acc, locs, rej = validate([Needle("n", "# step two: enable the site", ("q",), 1)], Corpus("t", (d,)))
    assert rej == []


def test_html_text_that_looks_like_markdown_is_not_a_heading():
    d = document_from_bytes("p.html", b"<title>T</title><h2>Real</h2><p># step two: enable</p><p>Intro</p>"
                                      b"<p>-----</p><h3>Deep</h3><h2>Two</h2><p>end</p>")
    assert d.text == "# T\n\n## Real\n\n# step two: enable\n\nIntro\n\n-----\n\n### Deep\n\n## Two\n\nend"
    assert [s.title for s in d.sections] == ["Real", "Two"]
    assert [d.text[s:e] for s, e in d.headings] == ["# T", "## Real", "### Deep", "## Two"]


def test_rst_literal_block_comment_is_not_a_heading():
    d = document_from_bytes("a.rst", b"Title\n=====\n\nRun::\n\n   # enable the site\n   x = 1\n\nNext\n----\n\ntext\n")
    assert d.title == "Title" and [s.title for s in d.sections] == ["Next"]
    assert [d.text[s:e] for s, e in d.headings] == ["# Title", "## Next"]
    acc, locs, rej = validate([Needle("n", "# enable the site", ("q",), 1)], Corpus("t", (d,)))
    assert rej == []


def test_pdf_text_is_not_read_as_markdown():
    d = pdf_document("n.pdf", make_pdf(["# of users\nTotal\n-----\n## not a section"], title="Report"), "n")
    assert d.sections == () and [d.text[s:e] for s, e in d.headings] == ["# Report"]


def test_html_pre_holding_backticks_gets_a_longer_fence():
    d = document_from_bytes("t.html", b"<body><pre>```\n## not a heading\n```</pre></body>")
    assert "````\n```\n## not a heading\n```\n````" in d.text
    assert d.sections == ()


# --------------------------------------------------------------------------- PDF

def _pdf_writer(raw):
    from pypdf import PdfReader, PdfWriter

    return PdfWriter(clone_from=PdfReader(io.BytesIO(raw)))


def _bytes(writer):
    buf = io.BytesIO()
    writer.write(buf)
    return buf.getvalue()


def test_pdf_ligatures_are_folded_so_a_typed_needle_is_found():
    # 0xAE / 0xAF are the fi / fl glyphs of the standard Type 1 encoding: pypdf extracts U+FB01 / U+FB02
    raw = make_pdf(["Edit the con\xaeguration \xaele, then re\xafect."], title="Guide")
    d = pdf_document("g.pdf", raw, "g")
    assert "Edit the configuration file, then reflect." in d.text
    assert "\ufb01" not in d.text
    acc, locs, rej = validate([Needle("n", "configuration file", ("q",), 1)], Corpus("t", (d,)))
    assert rej == [] and d.text[locs["n"].start:locs["n"].end] == "configuration file"


def test_password_protected_pdf_fails_with_that_reason():
    w = _pdf_writer(make_pdf(["secret text"]))
    w.encrypt(user_password="secret", owner_password="owner", algorithm="AES-256")
    with pytest.raises(ValueError, match="^password-protected PDF$"):
        pdf_document("p.pdf", _bytes(w), "p")


@pytest.mark.parametrize("algorithm", ["RC4-40", "RC4-128", "AES-128", "AES-256"])
def test_pdf_restricted_by_permissions_only_loads(algorithm):
    w = _pdf_writer(make_pdf(["open to read"]))
    w.encrypt(user_password="", owner_password="owner", algorithm=algorithm)
    d = pdf_document("r.pdf", _bytes(w), "r")
    assert d.text == "# r\n\nopen to read"


def test_pdf_outline_gives_sections():
    raw = make_pdf(["Intro text.", "Installing\nStep one.", "Upgrading\nStep two.\nRollback\nStep three."],
                   title="Manual")
    w = _pdf_writer(raw)
    inst = w.add_outline_item(title="Installing", page_number=1)
    w.add_outline_item(title="Upgrading", page_number=2)
    w.add_outline_item(title="Rollback", page_number=2, parent=inst)  # deeper: a ### heading, no section
    w.add_outline_item(title="Appendix", page_number=0)                 # title not on its page: page start
    d = pdf_document("m.pdf", _bytes(w), "m")
    plain = pdf_document("m.pdf", raw, "m")
    assert d.text == plain.text  # the canonical text is unchanged
    assert [(s.title, d.text[s.start:s.body_start]) for s in d.sections] == [
        ("Appendix", ""), ("Installing", "Installing"), ("Upgrading", "Upgrading")]
    assert d.sections[0].start == d.pages[0] and d.sections[1].start == d.pages[1]
    assert d.sections[1].end == d.sections[2].start and d.sections[2].end == len(d.text)
    rb = d.text.index("Rollback")
    assert (rb, rb + len("Rollback")) in d.headings
    chunks = chunk_document(d, PRESETS["E"])
    assert [c.header for c in chunks] == ["[Manual]", "[Manual > Appendix]", "[Manual > Installing]",
                                          "[Manual > Upgrading]"]


# --------------------------------------------------------------------------- broken links

@pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symbolic links here")
def test_symlink_loop_and_dangling_link_are_listed_as_failed(tmp_path):
    (tmp_path / "a.md").write_text("# A\n\nfine\n")
    (tmp_path / "dangling.md").symlink_to("missing.md")
    (tmp_path / "loop1.md").symlink_to("loop2.md")
    (tmp_path / "loop2.md").symlink_to("loop1.md")
    c = load_folder(tmp_path)
    assert [d.doc_id for d in c.documents] == ["a.md"]
    assert {f.source: f.reason for f in c.failures} == {
        "dangling.md": "dangling symbolic link (its target 'missing.md' does not exist)",
        "loop1.md": "symbolic link loop", "loop2.md": "symbolic link loop"}


# --------------------------------------------------------------------------- matching view

def test_view_nfc_cf_and_whitespace():
    # e + combining acute (2 code points) is the same to a reader as U+00E9
    assert view("Cafe\u0301") == view("Caf\u00e9") == "Caf\u00e9"
    # soft hyphen and zero-width space vanish; whitespace around a removed one is one run
    assert view("con\u00adfigu\u200bration  \u200b \n file") == "configuration file"
    # NFKC would equate these; NFC does not
    assert view("x\u00b2") != view("x2")


def test_view_map_points_back_to_the_original():
    text = "A  soft\u00adhy\u200bphen, cafe\u0301."
    v, starts, ends = view_with_map(text)
    assert v == "A softhyphen, caf\u00e9."
    assert text[starts[1]:ends[1]] == "  "                   # the collapsed run
    i = v.index("\u00e9")
    assert text[starts[i]:ends[i]] == "e\u0301"             # the composed character: base + mark
    r = find_view(text, "softhyphen")
    assert text[r[0]:r[1]] == "soft\u00adhy\u200bphen"
    r = find_view(text, "caf\u00e9.")
    assert text[r[0]:r[1]] == "cafe\u0301."


def test_needle_typed_plainly_matches_a_document_with_invisible_characters():
    text = "# Doc\n\nRotate the re\u00adlay keys every ninety\u200b days.\n"
    d = markdown_document("d.md", text)
    acc, locs, rej = validate([Needle("n", "Rotate the relay keys every ninety days.", ("q",), 1)], Corpus("t", (d,)))
    assert rej == []
    assert text[locs["n"].start:locs["n"].end] == "Rotate the re\u00adlay keys every ninety\u200b days."
