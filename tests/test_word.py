"""Word files (audit/ingest/word.py): real .docx files written by python-docx."""

from __future__ import annotations

import io

import pytest

from audit.chunking import PRESETS, chunk_corpus
from audit.evaluation.citations import build_context, verify_citation
from audit.groundtruth import Needle, validate
from audit.ingest import Corpus, document_from_bytes


def _docx(build) -> bytes:
    import docx

    d = docx.Document()
    build(d)
    buf = io.BytesIO()
    d.save(buf)
    return buf.getvalue()


def _runbook(d) -> None:
    d.add_paragraph("Relay runbook", style="Title")
    d.add_paragraph("How the relay is run.")
    d.add_heading("Keys", level=1)
    d.add_paragraph("Rotate the relay keys every ninety days.")
    d.add_paragraph("Generate the key pair", style="List Number")
    d.add_paragraph("Deploy it", style="List Number")
    d.add_paragraph("Keep the old key for a week", style="List Bullet")
    d.add_paragraph("")  # empty paragraphs are dropped
    d.add_heading("Contacts", level=1)
    t = d.add_table(rows=3, cols=3)
    for r, row in enumerate([["Role", "Team", "Phone"], ["Owner", "Messaging", "x100"], ["Custodian", "Security", ""]]):
        for c, v in enumerate(row):
            t.cell(r, c).text = v
    t.cell(1, 1).merge(t.cell(1, 2))  # python-docx joins the merged cells' text
    d.add_heading("Notes", level=2)
    d.add_paragraph("# not a heading: a paragraph that starts with a hash")


RUNBOOK_TEXT = ("# Relay runbook\n\n"
                "How the relay is run.\n\n"
                "## Keys\n\n"
                "Rotate the relay keys every ninety days.\n\n"
                "1. Generate the key pair\n2. Deploy it\n- Keep the old key for a week\n\n"
                "## Contacts\n\n"
                "Role | Team | Phone\n\n"
                "Role: Owner | Team: Messaging\nx100\n\n"
                "Role: Custodian | Team: Security\n\n"
                "### Notes\n\n"
                "# not a heading: a paragraph that starts with a hash")


def test_docx_canonical_text_headings_lists_tables():
    doc = document_from_bytes("runbook.docx", _docx(_runbook))
    assert doc.text == RUNBOOK_TEXT
    assert doc.title == "Relay runbook" and doc.extractor == "docx" and doc.extractor_version == "2"
    assert [s.title for s in doc.sections] == ["Keys", "Contacts"]
    # the headings are the lines the conversion wrote, never a paragraph that looks like one
    assert [doc.text[s:e] for s, e in doc.headings] == ["# Relay runbook", "## Keys", "## Contacts", "### Notes"]
    # located by #char=, with the heading path the styles give (Notes is a Heading 2 under Contacts)
    assert doc.locators.outline == ((40, 1, "Keys"), (160, 1, "Contacts"), (264, 2, "Notes"))
    assert doc.locators.notes == ()


def test_needle_in_a_word_file_is_cited_by_its_offsets():
    doc = document_from_bytes("runbook.docx", _docx(_runbook))
    corpus = Corpus("t", (doc,))
    needle = Needle("n1", "Rotate the relay keys every ninety days.", ("How often are keys rotated?",))
    _, where, rejected = validate([needle], corpus)
    assert rejected == []
    start = RUNBOOK_TEXT.index("Rotate")
    assert (where["n1"].start, where["n1"].end) == (start, start + len(needle.needle))
    chunks = chunk_corpus(corpus, PRESETS["E"])
    (chunk,) = [c for c in chunks.chunks if c.start <= start < c.end]
    assert chunk.section == "Keys" and chunk.header == "[Relay runbook > Keys]"
    (cit,) = build_context("q", [(chunk, 0.2)], corpus).citations
    assert cit.fragment == f"#char={chunk.start},{chunk.end}" and cit.where.fragment == "" and cit.page == ""
    assert verify_citation(doc.doc_id, cit.start, cit.end, cit.quote, corpus).ok


def test_title_falls_back_to_core_properties_then_stem():
    def titled(d):
        d.core_properties.title = "Ops guide"
        d.add_paragraph("Body.")

    assert document_from_bytes("a.docx", _docx(titled)).text == "# Ops guide\n\nBody."
    assert document_from_bytes("plain-notes.docx", _docx(lambda d: d.add_paragraph("Body."))).title == "plain-notes"


def test_bad_word_files_give_one_reason():
    with pytest.raises(ValueError, match=r"^corrupt Word file \("):
        document_from_bytes("x.docx", b"PK\x03\x04 broken")
    with pytest.raises(ValueError, match=r"^Word 97-2003 \(\.doc\) content, not Word file"):
        document_from_bytes("old.docx", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 64)
    with pytest.raises(ValueError, match="^no text in the Word file$"):
        document_from_bytes("blank.docx", _docx(lambda d: d.add_paragraph("   ")))
