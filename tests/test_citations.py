"""Context building and citation checks."""

from __future__ import annotations

from audit.chunking import PRESETS, Strategy, chunk_corpus
from audit.evaluation.citations import (
    NoAnswer,
    answer_or_refuse,
    audit_citations,
    build_context,
    nearest_refused,
    question_outcomes,
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


def test_no_answer_lists_the_nearest_refused_chunks_nearest_first():
    cs = chunk_corpus(small(), PRESETS["C"])  # two chunks: the intro (0) and the install section (1)
    # The retriever's order is [1, 0] but chunk 0 is nearer (0.71 < 0.80): nearest first, whatever the order.
    out = answer_or_refuse("what is the offside rule", cs, [1, 0], [0.80, 0.71], 0.675)
    assert isinstance(out, NoAnswer)
    assert [(n.chunk_id, n.distance) for n in out.nearest] == [(0, 0.71), (1, 0.80)]
    assert out.nearest_distance == 0.71
    assert out.nearest[1].content == "Run the installer twice." and out.nearest[1].doc_id == "a.md"
    # At most `show` chunks; ties keep the retriever's order.
    assert [n.chunk_id for n in nearest_refused(cs, [1, 0], [0.9, 0.9], show=1)] == [1]


def test_question_outcomes_badges_at_the_cut():
    import numpy as np

    from audit.evaluation.threshold import QueryDistances

    def q(qid, in_domain, dist, correct):
        return QueryDistances(qid, qid, "documentation", in_domain, np.arange(len(dist)), np.array(dist),
                              np.array(correct), min(dist), None)

    qs = [q("hit", True, [0.30, 0.50], [True, False]),      # 0.30 < 0.4 kept, correct: answered
          q("wrong", True, [0.35, 0.60], [False, True]),    # 0.35 kept, not correct: answered without → answered
          q("far", True, [0.45, 0.70], [True, False]),      # nothing under 0.4: abandoned → NO ANSWER
          q("ood-near", False, [0.39, 0.90], [False, False]),  # out of domain, 0.39 kept: bluff
          q("ood-far", False, [0.41, 0.42], [False, False])]   # out of domain, nothing kept: refused → NO ANSWER
    got = question_outcomes(qs, 0.4)
    assert [(o.query_id, o.outcome, o.badge) for o in got] == [
        ("hit", "answered", "answered"), ("wrong", "answered without", "answered"),
        ("far", "abandoned", "NO ANSWER"), ("ood-near", "bluff", "bluff"), ("ood-far", "refused", "NO ANSWER")]
    assert [o.index for o in got] == [0, 1, 2, 3, 4] and got[4].nearest == 0.41 and not got[4].in_domain


def test_a_title_cut_alone_is_a_heading_only_citation_never_one_of_substance():
    # boundaries cut of "# Guide\n\nIntro words here.\n\n## Install…": the preamble [0, 27) is "# Guide\n\nIntro words
    # here." (text, not heading-only); with the intro removed the preamble is the title line alone
    from audit.evaluation.citations import heading_only, heading_only_chunks

    d = markdown_document("a.md", "# Guide\n\n## Install\n\nRun the installer twice.\n\n### Steps\n")
    c = Corpus("t", (d,))
    cs = chunk_corpus(c, PRESETS["C"])
    assert [ch.content for ch in cs.chunks] == ["# Guide", "Run the installer twice.\n\n### Steps"]
    assert [ch.chunk_id for ch in heading_only_chunks(cs, c)] == [0]  # the second holds a sentence too
    ctx = build_context("how to install?", [(cs[0], 0.2), (cs[1], 0.3)], c)
    assert [x.heading_only for x in ctx.citations] == [True, False]
    assert [x.index for x in ctx.substantive] == [2]
    # without the document (a team's chunk with no offsets) the rule is the quote's lines: ATX headings only
    assert heading_only("## Install\n\n### Steps") and heading_only("  # Title  ")
    assert not heading_only("#hashtag is not a heading") and not heading_only("## Install\nRun it.")
    assert not heading_only("   ")  # blank: counted by the health check as empty, not as a heading
    # with the document, the heading ranges decide: a setext title is a heading too, though no line starts with #
    s = markdown_document("s.md", "Guide\n=====\n\nBody text.\n")
    assert heading_only("Guide\n=====", s, 0) and not heading_only("Guide\n=====\n\nBody text.", s, 0)


def test_a_markdown_citation_names_its_heading_path_when_the_corpus_is_given():
    """A newcomer's report: on the built-in corpus the Citations table's "section" and "where" were empty (a
    Markdown document has no locator map, so no heading path), while Word documents had theirs. Now a Markdown
    citation reads its ``# `` title and ``## `` section: ``§ Guide › Install``; before the first section the
    title alone, which the source line does not repeat ("[1] Guide", not "[1] Guide - Guide")."""
    from audit.views.citations import citations_frame

    c = small()
    cs = chunk_corpus(c, PRESETS["C"])  # boundaries: the preamble "# Guide … here." (0), then Install (1)
    ctx = build_context("how to install?", [(cs[1], 0.31), (cs[0], 0.4)], corpus=c)
    install, intro = ctx.citations
    assert install.where.where == "§ Guide › Install" and install.locator_label == "Install"
    assert intro.where.where == "§ Guide" and intro.locator_label == "Guide"
    assert "[1] Guide - Install\nRun the installer twice." in ctx.prompt
    assert "[2] Guide\n# Guide" in ctx.prompt
    frame = citations_frame(ctx, c)
    assert list(frame["section"]) == ["Install", "Guide"]
    assert list(frame["where"]) == ["§ Guide › Install", "§ Guide"]
