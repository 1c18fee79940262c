"""The Query explorer's view-model (issue 37: the page only draws): the columns it offers, a typed question
ranked now, the BM25 and cross-encoder notes, the needle shown — checked against the build's own rankings and
by hand."""

from __future__ import annotations

import numpy as np
import pytest

from audit.chunking import Strategy
from audit.models import HashingEncoder
from audit.retrieval import BM25
from audit.sources import run_audit
from audit.views.query_explorer import (
    destroyed_here,
    embedded_cut,
    judged_line,
    needle_text,
    no_bm25_token_note,
    pairs_over_window_of,
    run_title,
    shown_runs,
    typed_ranking,
)
from test_pipeline import NEEDLE, corpus, gt
from test_capabilities import team

ENC = HashingEncoder(dims=64, window=12)


@pytest.fixture(scope="module")
def builtin():
    c = corpus()
    return run_audit(c, gt(c), [Strategy("blind50", "blind", target=50), Strategy("whole", "boundaries", target=2000)],
                     ENC, retrievers=("dense", "bm25", "hybrid"), reranker=None)


def test_the_columns_offered_are_the_strategies_else_the_runs(builtin):
    assert shown_runs(builtin) == ["blind50", "whole"]
    assert [r.name for r in shown_runs(builtin, ["whole"], "bm25")] == ["whole/bm25"]
    rs = team()
    assert shown_runs(rs) == ["before", "after"]
    assert [r.name for r in shown_runs(rs, ["after"], None)] == ["after"]
    assert run_title(builtin, "whole/dense") == ("whole", builtin.spaces["whole"].strategy.description)
    assert run_title(rs, "after") == ("after", "")


@pytest.mark.parametrize("retriever", ["dense", "bm25", "hybrid"])
def test_a_typed_question_ranks_as_the_build_ranked_the_same_text(builtin, retriever):
    # The build ranked every judged question through the same query-time path; typing the same text now gives
    # the same order of chunk ids (the build keeps the first STORED_DEPTH, the typed ranking its first 100).
    run = builtin.column("whole", retriever)
    sp = builtin.space(run)
    q = builtin.in_domain[0]
    ranked, latency = typed_ranking(builtin, run, q.text, ENC.encode([q.text])[0], BM25(list(sp.chunks.texts)))
    built = run.ranking(q.query_id)
    n = min(len(built), len(ranked))
    assert ranked.ids[:n] == built.ids[:n]
    assert latency[f"{retriever} (ms)"] >= 0  # what rank_query timed: the retriever and what it builds on


def test_a_typed_question_on_runs_that_cannot_rank_it_says_why():
    rs = team()
    with pytest.raises(ValueError, match="a typed question needs a model"):
        typed_ranking(rs, rs.runs[0], "x", np.zeros(4, dtype=np.float32), None)


def test_the_bm25_note_is_for_a_built_in_column_with_bm25_only(builtin):
    # "??" holds no unicode word token: BM25 scores every chunk 0, so hybrid is dense alone.
    assert "no BM25 token under the 'unicode' rule" in no_bm25_token_note(builtin, "hybrid", "??")
    assert no_bm25_token_note(builtin, "dense", "??") is None  # dense reads no token
    assert no_bm25_token_note(builtin, "hybrid", "zebra") is None
    assert no_bm25_token_note(team(), "hybrid", "??") is None  # a team's runs are not ranked here


def test_the_needle_and_what_the_chunks_do_to_it(builtin):
    q = next(x for x in builtin.in_domain if x.needle_id == "z")
    assert needle_text(builtin, q) == NEEDLE
    # blind50 cuts at character 50, inside the needle's [40, 66): destroyed there, whole there in "whole"
    assert destroyed_here(builtin, "blind50/dense", q) and not destroyed_here(builtin, "whole/dense", q)
    rs = team()
    assert needle_text(rs, rs.queries[0]) is None
    assert judged_line(rs, rs.queries[0]) == "judged relevant: c1 (grade 1)"


def test_the_embedded_cut_and_the_pairs_over_the_window(builtin):
    sp = builtin.spaces["whole"]
    cid = sp.chunks[0].chunk_id
    assert embedded_cut(sp, cid) == int(sp.tokens.cut[cid])
    assert embedded_cut(team().space("before"), "c1") is None
    run = builtin.column("whole", "dense")
    assert pairs_over_window_of(builtin, run, run.ranking(builtin.in_domain[0].query_id), None, "x", object()) == {}
