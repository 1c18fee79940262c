"""Context building and citation checks."""

from __future__ import annotations

from audit.chunking import PRESETS, Strategy, chunk_corpus
from audit.evaluation.citations import (
    NoAnswer,
    answer_or_refuse,
    audit_citations,
    build_context,
    verify_citation,
)
from audit.ingest import Corpus, markdown_document


def small():
    d = markdown_document("a.md", "# Guide\n\nIntro words here.\n\n## Install\n\nRun the installer twice.")
    return Corpus("t", (d,))


def test_build_context_quotes_content_never_text():
    c = small()
    cs = chunk_corpus(c, Strategy("F", "boundaries", header=True, overlap=8))
    ctx = build_context("how to install?", [(cs[1], 0.31)])
    cit = ctx.citations[0]
    assert cit.quote == "Run the installer twice." and "[Guide" not in cit.quote
    assert cit.fragment == f"#char={cs[1].start},{cs[1].end}"
    assert c.get("a.md").text[cs[1].start:cs[1].end] == cit.quote
    assert cit.locator_label == "Install" and cit.document_name == "Guide" and cit.page == ""
    assert ctx.prompt.startswith("Answer using ONLY the numbered sources below.")
    assert "[1] Guide - Install\nRun the installer twice." in ctx.prompt
    assert ctx.prompt.endswith("QUESTION\nhow to install?")


def test_no_answer_when_nothing_is_under_the_threshold():
    cs = chunk_corpus(small(), PRESETS["C"])
    out = answer_or_refuse("what is the offside rule", cs, [0, 1], [0.8, 0.9], 0.675)
    assert isinstance(out, NoAnswer)
    assert out.message == 'NO ANSWER: nothing under cosine distance 0.675 for "what is the offside rule"'
    ok = answer_or_refuse("q", cs, [1, 0], [0.5, 0.6], 0.675)
    assert [c.chunk_id for c in ok.citations] == [1, 0]


def test_verify_citation_catches_off_by_one():
    c = small()
    cs = chunk_corpus(c, PRESETS["C"])
    ch = cs[1]
    assert verify_citation("a.md", ch.start, ch.end, ch.content, c).ok
    bad = verify_citation("a.md", ch.start - 1, ch.end - 1, ch.content, c)
    assert not bad.ok and "differs" in bad.reason
    assert not verify_citation("zz.md", 0, 1, "x", c).ok
    assert "outside" in verify_citation("a.md", 0, 10_000, "x", c).reason


def test_every_builtin_quote_equals_its_slice(builtin_corpus):
    for name in ("A", "F"):
        assert audit_citations(chunk_corpus(builtin_corpus, PRESETS[name]), builtin_corpus) == []


def test_pdf_citation_gets_page_and_sectionless_source_line_has_no_label():
    import sys

    sys.path.insert(0, str(__import__("pathlib").Path(__file__).parent))
    from pdfmaker import make_pdf

    from audit.ingest import pdf_document

    d = pdf_document("m.pdf", make_pdf(["Page one words.", "Page two words here."], title="Manual"), "m")
    c = Corpus("t", (d,))
    cs = chunk_corpus(c, Strategy("C", "boundaries", target=20))
    last = cs.chunks[-1]
    ctx = build_context("q", [(last, 0.2)], corpus=c)
    assert ctx.citations[0].page == "#page=2" and ctx.citations[0].locator_label == ""
    assert "[1] Manual\nPage two words here." in ctx.prompt
    assert NoAnswer("q", 0.528712).message == 'NO ANSWER: nothing under cosine distance 0.529 for "q"'
