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
