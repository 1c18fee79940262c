"""The Citations view-model with no cut to apply (issue 37: the page no longer makes its own stand-ins): every
question listed without a badge, and the first KEEP chunks of the run's order as the sources."""

from __future__ import annotations

import math

from audit.evaluation.threshold import KEEP
from audit.capabilities import can
from audit.views.citations import answer, badge_outcomes, cited_questions
from test_capabilities import builtin, team  # noqa: F401 (the module's fixture)


def test_with_no_cut_every_question_is_listed_without_a_badge(builtin):  # noqa: F811
    qs = cited_questions(builtin)
    # gt() of test_pipeline: two needles × two phrasings judged, then its two out-of-domain questions
    assert [q.phrasing for q in qs].count("out-of-domain") == 2 and len(qs) == 6
    out = badge_outcomes(builtin, "whole/dense", None)
    assert [o.query_id for o in out] == [q.query_id for q in qs]
    assert all(o.badge == "" and o.outcome == "" and math.isnan(o.nearest) for o in out)


def test_with_no_cut_the_sources_are_the_first_keep_chunks_of_the_run(builtin):  # noqa: F811
    run = builtin.column("whole", "dense")
    q = builtin.in_domain[0]
    ranked = run.ranking(q.query_id)
    res = answer(builtin, run, q.text, ranked, None)
    assert [c.chunk_id for c in res.citations] == list(ranked.ids[:KEEP])
    assert [c.index for c in res.citations] == list(range(1, len(res.citations) + 1))


def test_chunks_are_asked_of_the_runs_own_space(builtin):  # noqa: F811
    assert can(builtin, "chunks", "whole/dense")
    assert not can(team(), "chunks", "before")


def test_item54_7_a_heading_only_source_is_flagged_and_not_counted_as_substance():
    # boundaries cut C of "# Guide\n\n## Install\n\nRun the installer twice.": chunk 0 is the title line alone (the
    # preamble), chunk 1 the sentence; both cited, only the second is a source of substance
    from audit.chunking import PRESETS, chunk_corpus
    from audit.evaluation.citations import build_context
    from audit.ingest import Corpus, markdown_document
    from audit.views.citations import citations_frame, heading_only_note

    c = Corpus("t", (markdown_document("a.md", "# Guide\n\n## Install\n\nRun the installer twice.\n"),))
    cs = chunk_corpus(c, PRESETS["C"])
    ctx = build_context("how to install?", [(cs[0], 0.2), (cs[1], 0.3)], c)
    df = citations_frame(ctx, c)
    assert list(df["heading only"]) == ["yes", ""]
    assert heading_only_note(ctx) == ("[1] ('# Guide') is only a heading: cited, but it says nothing a claim can "
                                      "rest on, so it does not count as a source of substance (1 of the 2 sources "
                                      "are).")
    assert heading_only_note(build_context("q", [(cs[1], 0.3)], c)) == ""


def test_item54_7_heading_only_chunks_of_a_run_are_listed_with_their_locator():
    # "# Guide\n\n## Install\n\n…" cut by the boundaries rule: the preamble chunk is "# Guide" alone, #char=0,7
    from audit.chunking import Strategy
    from audit.groundtruth import GroundTruth, Needle, validate
    from audit.ingest import Corpus, markdown_document
    from audit.models import HashingEncoder
    from audit.sources import run_audit
    from audit.views.citations import heading_only_frame

    c = Corpus("t", (markdown_document("a.md", "# Guide\n\n## Install\n\nRun the installer twice, then reboot.\n"),))
    acc, loc, _ = validate([Needle("n", "Run the installer twice", ("how to install?", "install??"))], c)
    rs = run_audit(c, GroundTruth(tuple(acc), loc, (), ("paella",)), [Strategy("C", "boundaries")],
                   HashingEncoder(dims=16), retrievers=("dense",), reranker=None)
    df = heading_only_frame(rs, rs.run("C/dense"))
    assert df.to_dict("records") == [{"chunk": 0, "doc_id": "a.md", "locator": "#char=0,7", "content": "# Guide"}]
    # the audit document's citations section lists the same chunk (the CLI text, the JSON and the record draw it)
    from audit.report.sections import build_document

    doc = build_document(rs, saved_path=None)
    cit = doc.to_json()["citations"]
    assert cit["heading_only"] == [{"chunk_id": "C:0", "doc_id": "a.md", "content": "# Guide"}]
