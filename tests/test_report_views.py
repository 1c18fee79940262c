"""Pure functions behind the dashboard pages (the view-models in audit/views/), on values worked out by hand.

Runs are small run sets built from hand-placed ranks, and health reports small stand-ins with only the
attributes the functions read, so every expected value can be read off the inputs.
"""

from __future__ import annotations

import math
from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from audit.evaluation.judgments import Qrels
from audit.evaluation.measures import evaluate
from audit.evaluation.paired import PairedTest
from audit.evaluation.threshold import Bluff, BluffChunk, QueryDistances
from audit.evaluation.upgrade import UpgradeDiff
from audit.runset import SCORE_KINDS, Query, Ranked, Run, RunSet, Source
from audit.views.chunk_map import default_document
from audit.views.index_health import finding_documents_frame, findings_frame, severity_css
from audit.views.strategies import discordant_frame, oriented_pair, rank_matrix_view, recall_chart_frame
from audit.views.threshold import answerless, bluffs_frame, slider_range
from audit.views.tokens import token_hist_frame
from audit.views.upgrade_diff import changed_only, diff_tests_frame, p_label

AB = PairedTest("A/dense", "B/dense", 8, wins=3, losses=1, n=10, p=0.625, p_holm=0.9,
                win_ids=("q1", "q2", "q3"), loss_ids=("q4",))


def test_oriented_pair_flips_a_test_stored_the_other_way():
    assert oriented_pair([AB], "A/dense", "B/dense") is AB  # stored in this order: unchanged
    ba = oriented_pair([AB], "B/dense", "A/dense")
    # B hits where A misses on q4 only: one win; A's three wins are B's losses
    assert (ba.a, ba.b, ba.wins, ba.losses) == ("B/dense", "A/dense", 1, 3)
    assert (ba.win_ids, ba.loss_ids) == (("q4",), ("q1", "q2", "q3"))
    # the two-sided p, its Holm adjustment, n and the sample size needed do not depend on the order
    assert (ba.p, ba.p_holm, ba.n) == (0.625, 0.9, 10)
    # the questions needed read the discordance rate and the win share 3:1 either way round
    assert ba.needed().N == AB.needed().N and AB.needed().N is not None
    with pytest.raises(ValueError, match="choose two runs"):
        oriented_pair([AB], "A/dense", "C/dense")


def test_discordant_frame_lists_wins_then_losses_with_their_question():
    queries = [Query("q1", "first?", "documentation", "n1"), Query("q4", "fourth?", "ticket", "n4")]
    df = discordant_frame(oriented_pair([AB], "B/dense", "A/dense"), queries)
    assert list(df["query_id"]) == ["q4", "q1", "q2", "q3"]  # B's one win, then its three losses
    assert list(df["question"]) == ["fourth?", "first?", "", ""]  # q2, q3 not among the queries given
    assert list(df["outcome"]) == ["B/dense hits, A/dense misses"] + ["A/dense hits, B/dense misses"] * 3
    no_ids = replace(AB, win_ids=(), loss_ids=())  # an empty table keeps its columns for the CSV
    assert list(discordant_frame(no_ids, queries).columns) == ["query_id", "question", "outcome"]


def _run_with_ranks():
    """Two needles × two phrasings, two runs (and one unavailable): ranks chosen so each filter keeps a known set.

    A query's relevant chunk ``good`` is placed at the given 1-based rank behind unjudged chunks (None: absent).
    """
    queries = (Query("n1/doc", "doc one", "documentation", "n1"), Query("n1/ticket", "ticket one", "ticket", "n1"),
               Query("n2/doc", "doc two", "documentation", "n2"), Query("n2/ticket", "ticket two", "ticket", "n2"))
    ranks = {"A/dense": [1, 25, None, 3], "B/bm25": [2, None, 30, 21]}

    def ranked(r):
        ids = tuple(f"x{j}" for j in range((r or 2) - 1)) + (("good",) if r else ())
        return Ranked(ids, np.zeros(len(ids)))

    runs = [Run(n, "cosine-distance", {q.query_id: ranked(r) for q, r in zip(queries, rs)}, strategy=n[0],
                retriever=n[2:]) for n, rs in ranks.items()]
    runs.append(Run("C/rerank", "logit", {}, strategy="C", retriever="rerank", available=False, reason="no model"))
    runset = RunSet(Source("builtin", "hand"), queries, {"": Qrels({q.query_id: {"good": 1} for q in queries})},
                    tuple(runs))
    return runset, evaluate(runset)


def test_unavailable_runs_are_left_out_of_the_charts():
    # available_columns is gone: each view drops what could not be run (here the rerank run without a model)
    runset, results = _run_with_ranks()
    assert [r.available for r in results] == [True, True, False]
    chart = recall_chart_frame(results)
    assert sorted(set(chart["run"])) == ["A/dense", "B/bm25"]
    # A/dense hits n1/doc within 1; B/bm25 nothing: Success@1 1/4 and 0/4
    assert chart.loc[(chart["run"] == "A/dense") & (chart["k"] == 1), "recall"].tolist() == [0.25]
    assert chart.loc[(chart["run"] == "B/bm25") & (chart["k"] == 1), "recall"].tolist() == [0.0]


def test_rank_matrix_view_filters_phrasing_and_misses():
    run, results = _run_with_ranks()
    full = rank_matrix_view(run, results)
    assert list(full.columns) == ["question", "A/dense", "B/bm25"]  # the unavailable rerank column is left out
    assert list(full["question"]) == ["doc one", "ticket one", "doc two", "ticket two"]
    assert math.isnan(full.loc["n2/doc", "A/dense"])
    tickets = rank_matrix_view(run, results, "ticket")
    assert list(tickets.index) == ["n1/ticket", "n2/ticket"]
    # missed within 20: n1/ticket (25, none) and n2/doc (none, 30); n2/ticket has A at rank 3
    assert list(rank_matrix_view(run, results, missed_within=20).index) == ["n1/ticket", "n2/doc"]
    # within 25, n1/ticket is answered at rank 25 (a rank equal to k counts)
    assert list(rank_matrix_view(run, results, missed_within=25).index) == ["n2/doc"]
    assert list(rank_matrix_view(run, results, "documentation", missed_within=20).index) == ["n2/doc"]


def _qd(qid, in_domain, distances, nearest, nearest_correct):
    d = np.asarray(distances, dtype=np.float64)
    return QueryDistances(qid, qid, "documentation" if in_domain else "out-of-domain", in_domain,
                          np.arange(len(d)), d, np.zeros(len(d), bool), nearest, nearest_correct)


def slider_max(qs):
    lo, hi, step = slider_range(qs)
    assert (lo, step) == (0.0, 0.005)  # cosine distance: from 0, on the 0.005 step
    return hi


def test_slider_max_covers_every_shown_distance():
    # the 5th distance (1.9) is past the gate's 4 and ignored: max 0.73 → 0.78 → next multiple of 0.05 is 0.80
    qs = [_qd("q", True, [0.31, 0.42, 0.6, 0.73, 1.9], 0.31, 0.42), _qd("o", False, [0.7], math.inf, None)]
    assert slider_max(qs) == pytest.approx(0.8)
    # an answer's distance beyond the first 4 still counts: 0.91 + 0.05 = 0.96 → 1.00
    assert slider_max([_qd("q", True, [0.3], 0.3, 0.91)]) == pytest.approx(1.0)
    # 1.98 + 0.05 would pass 2, the largest cosine distance: capped
    assert slider_max([_qd("o", False, [1.98], 1.98, None)]) == 2.0


def test_slider_range_of_a_similarity_run_in_its_own_units():
    # gate values -0.9 … -0.1 are similarities 0.1 … 0.9: range 0.8, padded by 5 % (0.04), 200 steps
    qs = [_qd("q", True, [-0.9, -0.5], -0.9, -0.5), _qd("o", False, [-0.1], -0.1, None)]
    lo, hi, step = slider_range(qs, SCORE_KINDS["similarity"])
    assert (lo, hi, step) == pytest.approx((0.06, 0.94, 0.0044))


def test_answerless_counts_in_domain_queries_without_an_answer_distance():
    qs = [_qd("a", True, [0.2], 0.2, None), _qd("b", True, [0.2], 0.2, 0.2), _qd("o", False, [0.2], 0.2, None)]
    assert answerless(qs) == 1  # "o" has none either, but out of domain there is no answer to measure


def test_bluffs_frame_numbers_each_querys_kept_chunks():
    bl = [Bluff("ood-1", "bread?", (BluffChunk(7, 0.41, "a.md", "A > Setup", "x"),
                                    BluffChunk(2, 0.45, "b.md", "B", "y"))),
          Bluff("ood-2", "alps?", (BluffChunk(5, 0.5, "c.md", "C", "z"),))]
    df = bluffs_frame(bl)
    assert list(df["query_id"]) == ["ood-1", "ood-1", "ood-2"]
    assert list(df.columns[:4]) == ["query_id", "query", "nearest rank", "cosine distance"]
    assert list(df["nearest rank"]) == [1, 2, 1]
    assert list(df["chunk_id"]) == [7, 2, 5] and list(df["cosine distance"]) == [0.41, 0.45, 0.5]
    assert list(bluffs_frame([]).columns) == list(df.columns)  # an empty table keeps its columns for the CSV
    # a similarity run: gate values (negated similarities) shown back in its own units
    sim = bluffs_frame([Bluff("ood-1", "bread?", (BluffChunk("c", -0.75, "a.md", "A", "x"),))],
                       SCORE_KINDS["similarity"])
    assert list(sim["similarity"]) == [0.75]


def test_default_document_prefers_a_destroyed_needle():
    nf = pd.DataFrame({"doc_id": ["b.md", "c.md", "a.md"], "destroyed in": ["", "A", ""]})
    assert default_document(nf, ["z.md", "a.md"]) == "c.md"
    assert default_document(nf.assign(**{"destroyed in": ""}), ["z.md"]) == "a.md"  # first by id with a needle
    assert default_document(nf.iloc[0:0], ["z.md", "a.md"]) == "z.md"  # no needle: the first document


def test_token_hist_frame_clips_at_the_cap_and_counts_what_is_beyond():
    tl = pd.DataFrame({"strategy": ["A", "A", "A", "B"], "chunk_id": [0, 1, 2, 0],
                       "tokens (with special)": [100, 600, 512, 900]})
    sel, beyond = token_hist_frame(tl, ["A"], cap=512)
    assert list(sel["tokens (drawn)"]) == [100, 512, 512]
    assert beyond == 1  # 600 > 512; 512 itself is not beyond; B is not selected


def test_health_tables():
    rep = SimpleNamespace(findings=[
        SimpleNamespace(check="failed", severity="unhealthy", title="failed documents", detail="1 failed",
                        documents=({"doc_id": "x.md", "why": "binary"},)),
        SimpleNamespace(check="dup", severity="warning", title="duplicates", detail="2", documents=(
            {"doc_id": "a.md", "why": "same as b"}, {"doc_id": "b.md", "why": "same as a"})),
        SimpleNamespace(check="nan", severity="ok", title="NaN vectors", detail="none", documents=())])
    ff = findings_frame(rep)
    assert list(ff["severity"]) == ["UNHEALTHY", "warning", "ok"] and list(ff["documents"]) == [1, 2, 0]
    dd = finding_documents_frame(rep)
    assert list(dd["check"]) == ["failed", "dup", "dup"] and list(dd["document"]) == ["x.md", "a.md", "b.md"]
    assert severity_css(ff["severity"]) == ["color: #b91c1c; font-weight: 600", "color: #a16207", ""]


def test_upgrade_diff_tables():
    t = [PairedTest("after", "before", 8, 5, 1, 20, 0.21875, 0.21875),
         PairedTest("after", "before", 1, 5, 5, 20, 1.0, 1.0)]
    empty = pd.DataFrame()
    diff = UpgradeDiff("before", "after", "", "cosine-distance", empty, t, empty, empty, None, "", None)
    df = diff_tests_frame(diff)
    assert list(df["k"]) == [8, 1]
    assert list(df["wins (only after)"]) == [5, 5] and list(df["losses (only before)"]) == [1, 5]
    # the power of the exact sign test at the observed rates (tests/test_power.py checks it against scipy);
    # wins equal losses (+5/−5) never separate
    assert list(df["questions needed"]) == [t[0].needed().label, "never"] and t[0].needed().N is not None
    assert p_label(0.21875) == "p = 0.2188" and p_label(0.00001) == "p < 0.0001"
    pq = pd.DataFrame({"query": ["a", "b", "c"], "change": ["", "lost@8", "gained@8"]})
    assert list(changed_only(pq, True)["query"]) == ["b", "c"] and len(changed_only(pq, False)) == 3


def test_needle_checks_on_citations_and_the_tail_warning():
    from audit.views.citations import answer_only_in_tail, with_needle_checks

    needle = "tokens expire after ninety minutes"
    res = SimpleNamespace(citations=[SimpleNamespace(quote="Access tokens  expire\nafter ninety minutes.", chunk_id=3),
                                     SimpleNamespace(quote="Refresh happens later.", chunk_id=4)])
    cf = pd.DataFrame({"[n]": [1, 2]})
    out = with_needle_checks(cf, res, needle, frozenset({3, 4}))
    # chunk 3's quote holds the needle once whitespace is collapsed; chunk 4 holds it only in its embedded text
    assert list(out["quote holds the needle"]) == ["yes", "no"]
    assert list(out["embedded text holds it"]) == ["yes", "yes"]
    assert answer_only_in_tail(out)  # chunk 4: the reader's quote lacks the answer
    assert not answer_only_in_tail(with_needle_checks(cf, res, needle, frozenset({3})))
    assert not answer_only_in_tail(cf)  # no needle columns: a typed question, nothing to warn about
    assert "quote holds the needle" not in cf  # the input table is left as it was


def test_item7_a_warning_is_named_by_what_was_found_not_by_the_healthy_condition():
    """Issue 39 item 7: "warning: no duplicate chunks — 2 documents" and a scanned page under "PDF pages with a
    text layer" said the opposite of the finding."""
    from audit.views.index_health import finding_heading

    dup = SimpleNamespace(check="duplicates", severity="warning", title="no duplicate chunks", detail="2",
                          documents=({"doc_id": "a.md", "why": ""}, {"doc_id": "b.md", "why": ""}))
    scan = SimpleNamespace(check="no_text_layer", severity="warning", title="PDF pages with a text layer",
                           detail="1 page", documents=({"doc_id": "scan.pdf", "why": ""},))
    ok = SimpleNamespace(check="duplicates", severity="ok", title="no duplicate chunks", detail="none", documents=())
    assert finding_heading(dup) == "warning: duplicate chunks — 2 documents"
    assert finding_heading(scan) == "warning: PDF pages without a text layer — 1 document"
    ff = findings_frame(SimpleNamespace(findings=[dup, scan, ok]))
    assert list(ff["check"]) == ["duplicate chunks", "PDF pages without a text layer", "no duplicate chunks"]
