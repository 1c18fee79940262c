"""A record's rankings as columns (audit.history.columns, issue 58): the same dict per query as the rule query by query.

The rule is :func:`audit.history.record._ranking_json` (one ranking at a time, the reference); a run held as arrays is
stored every query at once. The two must give the same JSON for every query: ties, NaN, infinities, rankings shorter
than the stored depth and longer ones whose gate values are not ascending (positions past rank 20 the gate could
keep). A format-3 body read back gives those dicts; a format-2 body (JSON) reads as it always did.
"""

from __future__ import annotations

import json
import math
import zlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from audit.evaluation.judgments import Qrels
from audit.history.columns import RecordRankings
from audit.history.record import DEPTH, FORMAT_VERSION, _ranking_json, _rankings_json, record_of, runset_of
from audit.history.store import MAGIC, open_history
from audit.runset import ColumnarRankings, Query, Run, RunSet, Source, score_kind
from audit.evaluation import evaluate

from pgfixture import pg_server  # noqa: F401 - the session fixture
from test_history import history  # noqa: F401 - the fixture: SQLite, and PostgreSQL in the store tier
from test_history_judgments import columnar


def as_columns(rankings) -> ColumnarRankings:
    """``{query: [(chunk, score), …]}`` as the arrays a large run file gives."""
    qids = list(rankings)
    ids = sorted({c for r in rankings.values() for c, _ in r})
    code = {c: i for i, c in enumerate(ids)}
    vals = np.unique(np.array([s for r in rankings.values() for _, s in r] + [0.0]))  # NaN once, at the end
    off = np.cumsum([0] + [len(r) for r in rankings.values()])
    chunk = [code[c] for r in rankings.values() for c, _ in r]
    where = {(math.isnan(v), v if not math.isnan(v) else 0): i for i, v in enumerate(vals.tolist())}
    sc = [where[(math.isnan(s), s if not math.isnan(s) else 0)] for r in rankings.values() for _, s in r]
    return ColumnarRankings(qids, off, np.array(chunk, dtype=np.int64), ids, np.array(sc, dtype=np.int64), vals)


def by_rule(cr: ColumnarRankings, kind: str, qrels: Qrels) -> dict:
    """The reference: :func:`_ranking_json` one query at a time."""
    return {q: _ranking_json(rk, score_kind(kind), qrels.relevant(q)) for q, rk in cr.items()}


def same(a, b) -> bool:
    return json.dumps(dict(a), allow_nan=True) == json.dumps(dict(b), allow_nan=True)


def test_by_hand():
    # similarity scores: gate values are the negated scores. q0 descends 25 scores but rank 23 (0.99) is above
    # rank 22's, and under the 4th smallest gate value seen: the gate keeps it at some cut, so it is stored past 20;
    # rank 25 holds the relevant chunk: stored too, and it is the answer (rank 25, gate value -0.01)
    scores = [1.0 - 0.01 * i for i in range(25)]
    scores[22] = 0.995
    q0 = [(f"c{i}", s) for i, s in enumerate(scores)]
    cr = as_columns({"q0": q0, "q1": [("c1", 0.5)], "q2": []})
    qrels = Qrels({"q0": {"c24": 1}, "q1": {"c9": 1}})
    got = _rankings_json(Run("r", "similarity", cr), qrels)
    assert isinstance(got, RecordRankings) and same(got, by_rule(cr, "similarity", qrels))
    assert [m[0] for m in got["q0"]["more"]] == [23, 25] and got["q0"]["answer"] == [25, pytest.approx(-0.76)]
    assert got["q2"] == {"ids": [], "scores": [], "distances": None, "more": [], "length": 0, "beyond": [],
                         "nearest": None, "nearest_relevant": None, "depth": None, "gate": math.inf, "answer": None}


VALUES = st.one_of(st.sampled_from([0.1, 0.2, 0.2, 0.5, 1.0, math.inf, -math.inf, math.nan]),
                   st.floats(min_value=-2, max_value=2, allow_nan=False))
RANKING = st.lists(st.tuples(st.integers(0, 30).map(lambda i: f"c{i}"), VALUES), max_size=45)


@settings(max_examples=60, deadline=None)
@given(st.lists(RANKING, min_size=1, max_size=12), st.sampled_from(["similarity", "cosine-distance"]),
       st.lists(st.tuples(st.integers(0, 11), st.integers(0, 30), st.integers(0, 2)), max_size=30),
       st.integers(1, 5))
def test_every_query_at_once_equals_the_rule_query_by_query(rankings, kind, judged, block):
    rk = {f"q{i}": r for i, r in enumerate(rankings)}
    js: dict = {}
    for q, c, g in judged:
        js.setdefault(f"q{q}", {})[f"c{c}"] = g
    qrels = Qrels(js)
    cr = as_columns(rk)
    from audit.evaluation.threshold import KEEP
    from audit.history.columns import rankings_of_columns
    from audit.history.record import _ever_kept, _relevant_pairs

    got = rankings_of_columns(cr, score_kind(kind), _relevant_pairs(qrels), _ever_kept, DEPTH, KEEP, block=block)
    ref = by_rule(cr, kind, qrels)
    assert same(got, ref)
    assert same(RecordRankings.from_dicts(ref), ref)  # the columns of the dicts: the same dicts back


def _runset(cr: ColumnarRankings, qrels: Qrels, kind="similarity") -> RunSet:
    qs = tuple(Query(q, f"question {q}", "in-domain") for q in qrels.judgments)
    return RunSet(Source("files", "made", "id-made"), qs, {"": qrels}, (Run("sys", kind, cr),))


def test_a_new_record_round_trips_through_the_store(history):  # noqa: F811 - the fixture
    rng = np.random.default_rng(7)
    rk = {f"q{i}": [(f"c{int(c)}", float(s)) for c, s in zip(rng.choice(60, n, replace=False),
                                                               np.sort(np.round(rng.random(n), 1))[::-1])]
          for i, n in enumerate(rng.integers(0, 40, 50))}  # one decimal: many ties; a file's order, best first
    qrels = Qrels({q: {f"c{int(c)}": 1 for c in rng.integers(0, 60, 3)} for q in rk})
    cr = as_columns(rk)
    rs = _runset(cr, qrels)
    rec = record_of(rs)
    # the measures read from the per-query table a column at a time: aggregate()'s very floats, in its order
    assert json.dumps(rec.runs[0].measures) == json.dumps(evaluate(rs)[0].aggregate())
    got = history.get(history.append(rec))
    assert got.format_version == FORMAT_VERSION == 4
    assert isinstance(got.runs[0].rankings, RecordRankings) and same(got.runs[0].rankings, by_rule(cr, "similarity",
                                                                                                   qrels))
    assert evaluate(runset_of(got))[0].aggregate() == evaluate(rs)[0].aggregate()


def test_the_example_runs_round_trip_through_the_store(tmp_path):
    from conftest import ROOT

    from audit.sources.imported.system import load_system

    ex = ROOT / "data" / "example"
    rs = load_system(ex / "queries.tsv", {"before": str(ex / "before.trec"), "after": str(ex / "after.trec")},
                     qrels=ex / "qrels.trec")
    rec = record_of(rs)
    with open_history(str(tmp_path / "h.sqlite")) as h:
        got = h.get(h.append(rec))
        raw = h._read("SELECT body FROM audit_history_records", ())[0][0]
    assert bytes(raw).startswith(MAGIC)
    for run, back in zip(rs.runs, got.runs):
        qrels = rs.qrels(run)
        ref = {q: _ranking_json(r, run.kind, qrels.relevant(q)) for q, r in run.rankings.items()}
        assert same(back.rankings, ref)
        cols = as_columns({q: list(zip(r.ids, r.scores.tolist())) for q, r in run.rankings.items()})
        assert same(_rankings_json(Run(run.name, run.score_kind, cols), qrels), ref)  # columnar input, same record


def test_a_format_2_body_reads_exactly_as_before(history):  # noqa: F811 - the fixture
    # a body written before issue 58: the record as zlib-compressed JSON, its rankings a dict per query
    rk = {"q0": [("a", 0.9), ("b", 0.9), ("c", math.nan)], "q1": [("x", math.inf)]}
    qrels = Qrels({"q0": {"b": 1}, "q1": {"y": 1}})
    rec = record_of(_runset(as_columns(rk), qrels))
    js = json.loads(json.dumps(rec.to_json(), allow_nan=True))
    js["format_version"] = 2
    blob = zlib.compress(json.dumps(js, allow_nan=True).encode(), 6)
    rid = history._run(lambda cur: history._insert_record(cur, (2, js["created_at"], "report", "files", "made", "",
                                                                None, blob)))
    got = history.get(rid)
    assert type(got.runs[0].rankings) is dict and json.dumps(got.runs[0].rankings, allow_nan=True) == json.dumps(
        js["runs"][0]["rankings"], allow_nan=True)
    assert got.runs[0].rankings["q0"]["answer"] == [2, -0.9]  # b, tied with a, ranked second


def _judged(judged) -> dict:
    js: dict = {}
    for q, c, g in judged:
        js.setdefault(f"q{q}", {})[f"c{c}"] = g
    return js


@settings(max_examples=60, deadline=None)
@given(st.lists(RANKING, min_size=1, max_size=12), st.sampled_from(["similarity", "cosine-distance"]),
       st.lists(st.tuples(st.integers(0, 13), st.integers(0, 30), st.integers(0, 2)), max_size=80),
       st.integers(1, 5))
def test_relevant_keys_of_judgment_arrays_give_the_rule_dicts(rankings, kind, judged, block):
    # judgments held as arrays (a qrels file): the relevant (query, chunk) keys are matched in arrays, not a dict
    # of the run's ids; queries q12, q13 are judged but not ranked; a query may hold more relevant chunks than the
    # comparisons line by line cover (the rest by binary search)
    from audit.evaluation.judgments import MIN_REL
    from audit.evaluation.threshold import KEEP
    from audit.history.columns import rankings_of_columns, relevant_keys
    from audit.history.record import _ever_kept

    cr = as_columns({f"q{i}": r for i, r in enumerate(rankings)})
    qrels = Qrels(columnar(_judged(judged)))
    keys = relevant_keys(cr, qrels.judgments, MIN_REL)
    assert keys is not None
    got = rankings_of_columns(cr, score_kind(kind), keys, _ever_kept, DEPTH, KEEP, block=block)
    assert same(got, by_rule(cr, kind, qrels))


def test_many_relevant_chunks_in_one_query_and_ids_that_are_not_text():
    from audit.evaluation.judgments import ColumnarJudgments, MIN_REL
    from audit.history.columns import relevant_keys

    # 40 chunks ranked, 25 of them relevant (past rank 20 too): more than the comparisons line by line cover
    q0 = [(f"c{i}", 1.0 - 0.01 * i) for i in range(40)]
    cr = as_columns({"q0": q0, "q1": [("c3", 0.5), ("c39", 0.4)]})
    qrels = Qrels(columnar({"q0": {f"c{i}": 1 + i % 2 for i in range(0, 50, 2)}, "q1": {"c39": 0, "c3": 2}}))
    got = _rankings_json(Run("r", "similarity", cr), qrels)
    assert same(got, by_rule(cr, "similarity", qrels))
    assert [m[0] for m in got["q0"]["more"]] == [21, 23, 25, 27, 29, 31, 33, 35, 37, 39]
    assert got["q1"]["answer"] == [1, -0.5]
    # a chunk id that is not a str (the arrays would match 1 and "1" as one text): the pairs decide, Python's way
    ints = ColumnarJudgments(["q0"], [0, 1], np.array([0]), np.array([1], dtype=object), [1])
    assert relevant_keys(cr, ints, MIN_REL) is None
    assert same(_rankings_json(Run("r", "similarity", cr), Qrels(ints)),
                by_rule(cr, "similarity", Qrels(ints)))
