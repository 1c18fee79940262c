"""The array walks over a columnar run (:class:`audit.runset.ColumnarRankings`) against the per-query walks they
stand in for: the same data read as a mapping query id → :class:`audit.runset.Ranked` (a plain dict) must say the
same, whichever way the judgments are held (dicts or :class:`audit.evaluation.judgments.ColumnarJudgments`)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra.numpy import arrays

from audit.evaluation import measures
from audit.evaluation.judgments import ColumnarJudgments, Qrels
from audit.runset import ColumnarRankings

DOCS = [f"d{i}" for i in range(10)] + ["D1", "d10", "e"]  # ids whose str order is not their number's


@st.composite
def columnar_case(draw):
    """(rankings as columns, judgments as dicts): few distinct scores, so ties straddle relevant chunks often."""
    qids, offsets, codes, scores, qrels = [], [0], [], [], {}
    for q in range(draw(st.integers(1, 7))):
        qid = f"q{q}"
        if draw(st.integers(0, 5)):
            ranked = draw(st.lists(st.sampled_from(range(len(DOCS))), min_size=1, max_size=len(DOCS), unique=True))
            s = sorted((draw(st.integers(0, 3)) / 4 for _ in ranked), reverse=True)
            qids.append(qid)
            codes += ranked
            scores += s
            offsets.append(len(codes))
        if draw(st.integers(0, 5)):
            judged = draw(st.lists(st.sampled_from(DOCS), max_size=6, unique=True))
            qrels[qid] = {d: draw(st.integers(-1, 3)) for d in judged}
    if not qrels:
        qrels["q0"] = {}
    values = np.unique(np.array(scores, dtype=np.float64))
    rankings = ColumnarRankings(qids, offsets, np.array(codes, dtype=np.int64), DOCS,
                                np.searchsorted(values, scores), values)
    return rankings, qrels


def columnar_judgments(qrels: dict) -> ColumnarJudgments:
    ids = list(dict.fromkeys(c for js in qrels.values() for c in js))
    offsets = np.cumsum([0] + [len(js) for js in qrels.values()])
    return ColumnarJudgments(list(qrels), offsets,
                             np.array([ids.index(c) for js in qrels.values() for c in js], dtype=np.int64), ids,
                             [g for js in qrels.values() for g in js.values()])


@given(case=columnar_case(), ks=st.sampled_from([(1,), (1, 4, 8, 10, 20), (2, 3), ()]),
       block=st.sampled_from([1, 3, 1 << 22]))
def test_rr_tie_differences_on_columns_equal_the_per_query_walk(case, ks, block):
    rankings, qrels = case
    expected = measures.rr_tie_differences(dict(rankings.items()), Qrels(qrels), ks)
    keep = measures._TIE_LINES_AT_ONCE
    measures._TIE_LINES_AT_ONCE = block  # candidates a few lines at a time, as a large run is walked
    try:
        for judgments in (qrels, columnar_judgments(qrels)):
            assert measures.rr_tie_differences(rankings, Qrels(judgments), ks) == expected
    finally:
        measures._TIE_LINES_AT_ONCE = keep


def test_rr_tie_differences_by_hand():
    # q1: d9 and d3 tie at 0.5, only d3 is relevant: ours rank 2, ir_measures' order (ids ascending) rank 1, so RR@k
    # differs for every k; q2: both tied chunks are relevant, rank 1 either way; q3: d1 (0.9), then d5 and d4 tied,
    # d4 relevant: ours 3, theirs 2, so RR@k differs only for a k of 2 or more
    values = np.array([0.5, 0.9])
    codes = [9, 3, 0, 2, 1, 5, 4]
    rankings = ColumnarRankings(["q1", "q2", "q3"], [0, 2, 4, 7], codes, DOCS, [0, 0, 0, 0, 1, 0, 0], values)
    qrels = {"q1": {"d3": 1, "d9": 0}, "q2": {"d0": 2, "d2": 1}, "q3": {"d4": 1}}
    for r in (rankings, dict(rankings.items())):
        for judgments in (qrels, columnar_judgments(qrels)):
            assert measures.rr_tie_differences(r, Qrels(judgments), (1, 4)) == ("q1", "q3")
            assert measures.rr_tie_differences(r, Qrels(judgments), (1,)) == ("q1",)


@st.composite
def two_tables(draw):
    """Two runs' results over the same queries as :class:`QueryTable` (the columnar evaluation's form)."""
    n = draw(st.integers(0, 30))
    names = measures.measure_names()
    qids = [f"q{i}" for i in range(n)]
    phr = [draw(st.sampled_from(["in-domain", "documentation", "ticket"])) for _ in qids]

    def table():
        # values like the measures' (0, 1, 1/r, fractions) and floats whose naive sum would round
        vals = draw(arrays(np.float64, (n, len(names)),
                           elements=st.sampled_from([0.0, 1.0, 0.5, 1 / 3, 0.1, 1e-17, 0.7071067811865476])))
        first = draw(arrays(np.int64, n, elements=st.integers(0, 25)))
        return measures.QueryTable(qids, names, vals, draw(arrays(bool, n)), draw(arrays(np.int64, n,
                                   elements=st.integers(0, 3))), first, phr)

    return table(), table()


def _result(name, per_query):
    return measures.RunResult(name, "similarity", measures.KS, per_query)


@given(tables=two_tables())
def test_a_columnar_results_figures_equal_the_per_query_ones(tables):
    from audit.evaluation.paired import paired_test

    cols = [_result(n, t) for n, t in zip("ab", tables)]
    rows = [_result(n, tuple(t)) for n, t in zip("ab", tables)]  # the same queries as QueryMeasures
    assert isinstance(rows[0].per_query, tuple) and isinstance(cols[0].per_query, measures.QueryTable)
    for c, r in zip(cols, rows):
        for name in (*measures.measure_names(), "recall@8", "mrr"):
            assert c.values(name) == r.values(name)
            m, e = c.mean(name), r.mean(name)
            assert m == e or (np.isnan(m) and np.isnan(e))
        for k in (1, 8, 20):
            assert c.success(k) == r.success(k) and c.hits(k) == r.hits(k)
        assert c.to_dict() == r.to_dict() or not len(c.per_query)
    for k in (1, 4, 20):
        fast, slow = paired_test(cols[0], cols[1], k), paired_test(rows[0], rows[1], k)
        assert fast == slow
        assert fast.wins == sum(1 for x, y in zip(cols[0].hits(k), cols[1].hits(k)) if x and not y)


def test_a_columnar_mean_is_the_exact_sum():
    # 0.1 ten times: a naive float sum gives 0.9999999999999999, math.fsum 1.0 (the mean of the per-query engine)
    names = measures.measure_names()
    vals = np.full((10, len(names)), 0.1)
    t = measures.QueryTable([f"q{i}" for i in range(10)], names, vals, [True] * 10, [1] * 10, [1] * 10, [""] * 10)
    assert _result("a", t).mean("RR@20") == 0.1 and sum([0.1] * 10) / 10 != 0.1
    with pytest.raises(KeyError, match="unknown measure"):
        _result("a", t).mean("MAP")


def test_an_unpaired_columnar_test_is_refused_as_the_per_query_one_is():
    from audit.evaluation.paired import paired_test

    names = measures.measure_names()

    def table(ids):
        n = len(ids)
        return measures.QueryTable(ids, names, np.zeros((n, len(names))), [True] * n, [1] * n, [1] * n, [""] * n)

    a, b = table(["q1", "q2"]), table(["q2", "q1"])
    for x, y in ((_result("a", a), _result("b", b)), (_result("a", tuple(a)), _result("b", tuple(b)))):
        with pytest.raises(ValueError, match="runs a and b do not hold the same queries"):
            paired_test(x, y, 8)


@given(case=columnar_case())
def test_run_length_of_a_columnar_run_equals_the_per_query_one(case):
    from audit.evaluation.depth import run_length
    from audit.runset import Run

    rankings, qrels = case
    qids = [*qrels, "absent"]
    fast, slow = Run("r", "similarity", rankings), Run("r", "similarity", dict(rankings.items()))
    assert run_length(fast, qids) == run_length(slow, qids) == max(
        (len(rankings[q]) for q in qids if q in rankings), default=0)


@given(case=columnar_case())
def test_the_checks_of_a_columnar_run_equal_the_per_query_ones(case):
    from audit.runset import Run, answered_ids, returned_id_set
    from audit.sources.imported.checks import run_warnings, unjudged_warning

    rankings, qrels = case
    queries = {q: f"text {q}" for q in [*qrels, "q5"]}
    fast, slow = Run("r", "similarity", rankings), Run("r", "similarity", dict(rankings.items()))
    assert run_warnings(fast, Qrels(qrels), queries) == run_warnings(slow, Qrels(qrels), queries)
    assert unjudged_warning(fast, Qrels(qrels)) == unjudged_warning(slow, Qrels(qrels))
    assert {q for q in [*qrels, "absent"] if q in answered_ids(rankings)} == {q for q in qrels if q in slow.rankings}
    first = returned_id_set(rankings)
    first.add("changed by a caller")  # the kept mask is not the set handed out
    assert returned_id_set(rankings) == returned_id_set(slow.rankings) == {c for r in slow.rankings.values()
                                                                           for c in r.ids}


def test_the_languages_section_splits_mixed_questions_and_keeps_one_language_whole():
    from dataclasses import replace

    from audit.evaluation.measures import evaluate
    from audit.report.sections import compute_sections
    from audit.runset import Query, Ranked, Run, RunSet, Source

    judgments = {"q1": {"c1": 1}, "q2": {"c2": 1}, "q3": {"c3": 1}, "q4": {"c9": 1}}
    ranked = {q: Ranked(("c1", "c2", "c3"), np.array([0.9, 0.5, 0.1])) for q in judgments}
    rs = RunSet(Source("files", "t", "id-t"), tuple(Query(q, f"question {q}", "in-domain") for q in judgments),
                {"": Qrels(judgments)}, (Run("r", "similarity", ranked),))
    mixed = replace(rs, settings={"question_languages": {"q1": "fr", "q2": "de", "q3": "fr"}})
    rows = {r["language"]: r for r in compute_sections(mixed, ["languages"], evaluate(mixed))["languages"][0].rows}
    assert {k: r["n_queries"] for k, r in rows.items()} == {"de": 1, "fr": 2, "und": 1}
    # fr: q1 found at rank 1, q3 at rank 3; de: q2 at rank 2; und (no language stated): q4, whose chunk is not ranked
    assert (rows["fr"]["Success@1"], rows["fr"]["RR@20"], rows["de"]["RR@20"], rows["und"]["Success@8"]) == (
        0.5, (1 + 1 / 3) / 2, 0.5, 0.0)
    one = replace(rs, settings={"question_languages": dict.fromkeys(judgments, "fr")})
    (row,) = compute_sections(one, ["languages"], evaluate(one))["languages"][0].rows
    assert row["language"] == "fr" and row["n_queries"] == 4 and row["Success@8"] == 0.75
