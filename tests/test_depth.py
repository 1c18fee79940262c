"""The depth curve (issue 55): a first stage's Success@d for d = 1 .. its length equals an independent computation
from the run file itself (read line by line here, ordered by score), and each band equals scipy's Wilson interval
(``binomtest(...).proportion_ci(method="wilson")``)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import binomtest

from audit.evaluation import evaluate
from audit.evaluation.depth import depth_curve, depth_curves, ms_per_pair, run_length
from audit.evaluation.stats import wilson
from audit.runset import Query, Ranked, Run, RunSet, Source
from audit.evaluation.judgments import Qrels
from audit.sources.imported.system import load_system


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """40 questions, 1–3 relevant chunks each, ranked by a run of 1–60 lines a question with distinct scores; 5
    questions the run never answers."""
    d = tmp_path_factory.mktemp("depth")
    rng = np.random.default_rng(7)
    queries, qrels, lines = [], [], []
    for i in range(40):
        q = f"q{i}"
        queries.append(f"{q}\tquestion {i}\n")
        rel = [f"{q}-c{j}" for j in rng.choice(80, size=int(rng.integers(1, 4)), replace=False)]
        qrels += [f"{q} 0 {c} 1\n" for c in rel]
        if i % 8 == 7:
            continue  # not answered: a miss at every depth
        n = int(rng.integers(1, 61))
        docs = rng.choice(80, size=n, replace=False)
        scores = rng.permutation(np.arange(n)) / 7.0 + 0.5  # distinct, in no particular line order
        lines += [f"{q} Q0 {q}-c{c} {r} {s:.6f} first\n" for r, (c, s) in enumerate(zip(docs, scores), start=1)]
    (d / "queries.tsv").write_text("".join(queries), encoding="utf-8")
    (d / "qrels.trec").write_text("".join(qrels), encoding="utf-8")
    (d / "first.trec").write_text("".join(lines), encoding="utf-8")
    return d


def _by_hand(d):
    """Success@d straight from the files: each question's lines sorted by score (higher first; the rank column is
    the lines' order, which the scores overrule as trec_eval does), the rank of the first relevant chunk; the run's
    length is its longest list."""
    relevant: dict = {}
    for line in (d / "qrels.trec").read_text().splitlines():
        q, _, c, g = line.split()
        if int(g) >= 1:
            relevant.setdefault(q, set()).add(c)
    lists: dict = {}
    for line in (d / "first.trec").read_text().splitlines():
        q, _, c, _, s, _ = line.split()
        lists.setdefault(q, []).append((float(s), c))
    first = {}
    for q, rows in lists.items():
        ranked = [c for _, c in sorted(rows, reverse=True)]
        first[q] = next((i for i, c in enumerate(ranked, start=1) if c in relevant[q]), None)
    length = max(len(v) for v in lists.values())
    n = len(relevant)
    return length, [sum(1 for q in relevant if first.get(q) is not None and first[q] <= d) for d in
                    range(1, length + 1)], n


def test_the_curve_equals_the_run_file_read_by_hand(files):
    rs = load_system(files / "queries.tsv", {"first": str(files / "first.trec")}, qrels=files / "qrels.trec")
    (res,) = evaluate(rs)
    length, successes, n = _by_hand(files)
    assert run_length(rs.run("first"), res.query_ids) == length
    (curve,) = depth_curves(rs, [res])  # no pair declared: every available run is a first stage
    assert curve.run == "first" and len(curve.points) == length and curve.reranker_depth is None
    for p, s in zip(curve.points, successes):
        assert (p.successes, p.n) == (s, n)
        ci = binomtest(s, n).proportion_ci(confidence_level=0.95, method="wilson")
        assert p.success == s / n
        assert (p.low, p.high) == pytest.approx((ci.low, ci.high), abs=1e-12)
        assert math.isnan(p.ms)
    # Success@d never falls as d grows, and stops at the share of questions the run returns an answer for
    assert all(a.successes <= b.successes for a, b in zip(curve.points, curve.points[1:]))


@pytest.mark.parametrize("s,n", [(0, 1), (0, 7), (3, 7), (7, 7), (38, 64), (53, 64), (1, 1000), (999, 1000)])
def test_wilson_equals_scipys_interval(s, n):
    ci = binomtest(s, n).proportion_ci(confidence_level=0.95, method="wilson")
    iv = wilson(s, n)
    assert (iv.low, iv.high) == pytest.approx((ci.low, ci.high), abs=1e-15)


def _timed_pair():
    """Two questions, the first stage timed at 2 and 3 ms, the reranked run at 2 + 10 and 3 + 30 ms over depth 5 of
    lists 20 long: 2 and 6 ms a pair, median 4."""
    q = (Query("a", "a", "in-domain"), Query("b", "b", "in-domain"))
    ids = tuple(f"c{i}" for i in range(20))
    rk = {x.query_id: Ranked(ids, np.arange(20, 0, -1, dtype=float)) for x in q}
    first = Run("first", "similarity", rk, latency_ms={"a": 2.0, "b": 3.0})
    reranked = Run("reranked", "similarity", rk, latency_ms={"a": 12.0, "b": 33.0})
    qrels = Qrels({"a": {"c3": 1}, "b": {"c30": 1}})
    return RunSet(Source("files", "t"), q, {"": qrels}, (first, reranked),
                  settings={"reranked": {"reranked": "first"}, "rerank_depth": 5})


def test_the_cost_per_depth_is_the_measured_cost_per_pair():
    rs = _timed_pair()
    assert ms_per_pair(rs.run("first"), rs.run("reranked"), 5) == pytest.approx(4.0)
    (curve,) = depth_curves(rs, evaluate(rs))
    assert (curve.reranker_depth, curve.reranked, curve.spec_depth) == (5, "reranked", 25)
    assert [p.ms for p in curve.points[:3]] == pytest.approx([4.0, 8.0, 12.0])
    # c3 is at rank 4 for question a; question b's c30 is never returned
    assert [p.successes for p in curve.points[:5]] == [0, 0, 0, 1, 1] and curve.points[0].n == 2


def test_a_negative_length_is_refused():
    rs = _timed_pair()
    with pytest.raises(ValueError, match="a run's length is >= 0, got -1"):
        depth_curve(evaluate(rs)[0], -1)
