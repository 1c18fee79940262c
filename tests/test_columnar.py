"""The columnar TREC reader (audit/sources/imported/columnar.py) against the line reader it stands in for.

The line reader (``read_trec_run`` with the columnar path switched off) is the independent route: Python's
``str.split``, ``int`` and ``float`` per line, a dict per query, ``trec_order`` per query. The two must give
the same run (order, canonical scores, rank conflicts, warnings) on every file, and the same error when the
columnar path refuses. tests/conftest.py also compares the two on every run file any test reads.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from audit.jsontext import InputFileError
from audit.runset import ColumnarRankings
from audit.sources.imported import columnar, readers

ROOT = Path(__file__).resolve().parent.parent


def line_reader(path, name=None, kind="similarity"):
    """``read_trec_run`` with the columnar path refusing every file: the line reader alone."""
    keep = columnar.read_trec_columns
    columnar.read_trec_columns = lambda *a, **k: None
    try:
        return readers.read_trec_run(path, name, kind)
    finally:
        columnar.read_trec_columns = keep


def assert_same_run(fast, slow) -> None:
    """Two runs read from one file hold the same rankings, in the same order, and say the same."""
    assert (fast.name, fast.score_kind, fast.source) == (slow.name, slow.score_kind, slow.source)
    assert list(fast.rankings) == list(slow.rankings)
    for q in slow.rankings:
        a, b = fast.rankings[q], slow.rankings[q]
        assert a.ids == b.ids, q
        assert np.array_equal(a.scores, b.scores), q
        assert a.scores.dtype == b.scores.dtype == np.float64
    assert fast.rank_conflicts == slow.rank_conflicts
    assert fast.warnings == slow.warnings


def _write(tmp_path, text: str | bytes, name: str = "run.trec") -> Path:
    p = tmp_path / name
    p.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    return p


@pytest.mark.parametrize("name", ["before.trec", "after.trec", "ood-before.trec", "ood-after.trec"])
@pytest.mark.parametrize("kind", ["similarity", "cosine-distance"])
def test_example_runs_read_as_columns_equal_the_line_reader(name, kind):
    path = ROOT / "data" / "example" / name
    fast = columnar.read_trec_columns(path, Path(name).stem, kind)
    assert fast is not None, "the shipped example is plain: the columnar path must read it"
    assert isinstance(fast.rankings, ColumnarRankings)
    assert_same_run(fast, line_reader(path, None, kind))


def test_ties_unsorted_lines_and_odd_spacing_by_hand(tmp_path):
    # q2 first in the file, q1's lines out of order; c1 and c3 tie at 0.5 for q1: trec_eval's order puts the
    # larger id first (ties by chunk id descending), so q1 reads c2 (0.9), c3, c1 (0.5 both); 0.30000001 and
    # 0.3 are the same float32, so in q2 they tie too and z sorts before a
    text = ("\ufeffq2 Q0 a 1 0.30000001 t\n"
            "q1\tQ0\tc1 3 +5e-1 t\r\n"
            "\n"
            "  q1 Q0   c2 1 0.9 t  \n"
            "q2 Q0 z 2 0.3 t\n"
            "q1 Q0 c3 2 0.5 t\n")
    p = _write(tmp_path, text)
    fast = columnar.read_trec_columns(p, "run", "similarity")
    assert fast is not None
    assert list(fast.rankings) == ["q2", "q1"]
    assert fast.rankings["q1"].ids == ("c2", "c3", "c1")
    assert fast.rankings["q2"].ids == ("z", "a")
    assert fast.rankings["q1"].scores.tolist() == [0.9, 0.5, 0.5]
    # q2: the rank column says a, z; the evaluated order is z, a (a tie broken by id): a conflict, no contradiction
    assert fast.rank_conflicts == ("q2",)
    assert fast.warnings == ()
    assert_same_run(fast, line_reader(p, "run"))


@pytest.mark.parametrize("text, why", [
    ("q1 Q0 c1 1 0.5 t extra\n", "a field after the tag: the line reader's extra-fields warning"),
    ("# a comment\nq1 Q0 c1 1 0.5 t\n", "a comment line"),
    ("q1 Q0 c1 +1 0.5 t\n", "a rank int() reads and Arrow does not"),
    ("q1 Q0 c1 0x10 0.5 t\n", "a rank Arrow reads and int() refuses"),
    ("q1 Q0 c1 1 1_0 t\n", "a score float() reads and Arrow does not"),
    ("q1 Q0 c1\u00a01 0.5 t\n", "a no-break space: str.split splits there"),
    ("q1 Q0 c1 1 0.5 t\nq1 Q0 c1 2 0.4 t\n", "a chunk ranked twice"),
    ("q1 Q0 c1 1 nan t\n", "a score that is not finite"),
    ("q1 Q0 c1 0 0.5 t\n", "a rank below 1"),
    ("q1 Q0 c1 1\n", "too few fields"),
    ("\n\n", "no line"),
    # fields are first split on single spaces: a run of spaces or a space at an end must not pass as a field
    ("q1  c1 1 0.5 t\n", "five fields and a run of spaces (six by single spaces, one empty)"),
    ("q1 Q0 c1 1 0.5 \n", "five fields and a trailing space"),
    ("q1 Q0 c1 1 0.5 t\n  #q1 Q0 c2 2 0.4 t\n", "a comment of six fields after spaces"),
    ("#q1 Q0 c1 1 0.5 t\n", "a comment of six fields"),
])
def test_refused_files_are_read_by_the_line_reader(tmp_path, text, why):
    p = _write(tmp_path, text)
    assert columnar.read_trec_columns(p, "run", "similarity") is None, why
    try:
        slow = line_reader(p)
    except InputFileError as e:
        with pytest.raises(InputFileError) as got:
            readers.read_trec_run(p)
        assert str(got.value) == str(e)  # FILE:LINE: reason, found on the second pass
    else:
        assert_same_run(readers.read_trec_run(p), slow)


def test_not_utf8_is_refused_and_named_by_the_line_reader(tmp_path):
    p = _write(tmp_path, b"q1 Q0 c\xe9 1 0.5 t\n")
    assert columnar.read_trec_columns(p, "run", "similarity") is None
    with pytest.raises(InputFileError, match=r"run.trec:1: not UTF-8 text"):
        readers.read_trec_run(p)


def test_blocks_cut_between_lines_read_the_same(tmp_path, monkeypatch):
    # 7-byte blocks cut every line apart: the reader joins them at newlines and codes ids across blocks
    lines = [f"q{i % 3} Q0 d{(7 * i) % 11} {i + 1} {0.1 * (i % 4):.1f} t\n" for i in range(30)]
    p = _write(tmp_path, "".join(lines))
    whole = columnar.read_trec_columns(p, "run", "similarity")
    monkeypatch.setattr(columnar, "BLOCK_BYTES", 7)
    cut = columnar.read_trec_columns(p, "run", "similarity")
    assert cut is not None
    assert_same_run(cut, whole)
    assert_same_run(cut, line_reader(p, "run"))
    monkeypatch.setattr(columnar, "_LINES_AT_ONCE", 4)  # and ordered a query at a time (10 lines a query)
    grouped = columnar.read_trec_columns(p, "run", "similarity")
    assert_same_run(grouped, whole)


def test_query_codes_as_runs_then_per_line_and_ranks_widened(tmp_path, monkeypatch):
    # the first blocks come grouped (query codes held as runs), then a block of interleaved queries turns them into
    # one code a line, and a rank over int16's range widens the rank column: the run is the line reader's
    grouped = [f"q{i // 12} Q0 d{(5 * i) % 17} {i % 12 + 1} {0.05 * (i % 7):.2f} t\n" for i in range(96)]
    mixed = [f"q{8 + i % 5} Q0 d{(3 * i) % 19} {i // 5 + 1} {0.1 * (i % 3):.1f} t\n" for i in range(40)]
    wide = ["q20 Q0 d1 40000 0.5 t\n", "q20 Q0 d2 70000 0.25 t\n", "q3 Q0 d99 99999 0.9 t\n"]
    p = _write(tmp_path, "".join(grouped + mixed + wide))
    monkeypatch.setattr(columnar, "BLOCK_BYTES", 400)  # about 16 lines a block
    runs = []
    real = columnar._QueryCodes

    class Seen(real):
        def add(self, codes):
            super().add(codes)
            runs.append(self.lines is None)

    monkeypatch.setattr(columnar, "_QueryCodes", Seen)
    fast = columnar.read_trec_columns(p, "run", "similarity")
    assert runs[0] and not runs[-1], "held as runs first, one code a line after the mixed block"
    assert_same_run(fast, line_reader(p, "run"))
    assert fast.rankings["q3"].ids[0] == "d99"  # its best score, whatever its rank column says
    assert list(fast.rankings["q20"].ids) == ["d1", "d2"]
    only_grouped = _write(tmp_path, "".join(grouped), "grouped.trec")
    monkeypatch.setattr(columnar, "BLOCK_BYTES", 2000)  # about 80 lines a block: 12 lines a run on average
    runs.clear()
    assert_same_run(columnar.read_trec_columns(only_grouped, "run", "similarity"), line_reader(only_grouped, "run"))
    assert all(runs), "a grouped file keeps its query codes as runs"


def test_codes_widen_past_int16_mid_file(tmp_path, monkeypatch):
    # 40,000 distinct chunks and scores: the int16 columns turn int32 in the block where a code passes 32,767
    # (and the file's distinct scores are more than any block's), the ranks where one passes 32,767
    lines = [f"q{i // 20000} Q0 c{i} {i % 20000 + 1 + (40000 if i > 39990 else 0)} {i / 7:.6f} t\n"
             for i in range(40000)]
    p = _write(tmp_path, "".join(lines))
    monkeypatch.setattr(columnar, "BLOCK_BYTES", 300_000)  # about 9 blocks
    fast = columnar.read_trec_columns(p, "run", "l2")
    assert fast.rankings.chunk_codes.dtype == fast.rankings.score_codes.dtype == np.int32
    assert_same_run(fast, line_reader(p, "run", "l2"))
    assert fast.rankings["q1"].ids[:2] == ("c20000", "c20001")  # an L2 distance: the smallest first
    small = _write(tmp_path, "".join(lines[:300]), "small.trec")
    few = columnar.read_trec_columns(small, "run", "l2")
    assert few.rankings.chunk_codes.dtype == few.rankings.score_codes.dtype == np.int16
    assert_same_run(few, line_reader(small, "run", "l2"))


# --------------------------------------------------------------------------- generated runs

_number = st.one_of(
    st.integers(0, 40).map(lambda i: f"{i / 8:.3f}"),            # ties: 41 values
    st.floats(-1e6, 1e6, allow_nan=False, width=32).map(repr),
    st.floats(1e-30, 1e30, allow_nan=False).map(lambda x: f"{x:e}"),
    st.floats(1e-30, 1e30, allow_nan=False).map(lambda x: f"+{x:.6E}"),
    st.integers(-5, 5).map(str),
)
_sep = st.sampled_from([" ", "\t", "  ", " \t ", "\t\t"])


@st.composite
def _run_text(draw):
    n_q = draw(st.integers(1, 4))
    lines, seen = [], set()
    for _ in range(draw(st.integers(1, 40))):
        q, d = f"q{draw(st.integers(0, n_q))}", draw(st.sampled_from(["a", "b", "c", "d10", "d9", "D", "é", "x#1"]))
        if (q, d) in seen:
            continue
        seen.add((q, d))
        fields = [q, "Q0", d, str(draw(st.integers(1, 50))), draw(_number), "tag"]
        line = draw(st.sampled_from(["", " ", "\t"])) + draw(_sep).join(fields) + draw(st.sampled_from(["", " ", "\r"]))
        lines.append(line)
    lines = draw(st.permutations(lines))  # never grouped by query
    blank = draw(st.booleans())
    text = "\n".join(line + ("\n" if blank and i % 3 == 0 else "") for i, line in enumerate(lines))
    return draw(st.sampled_from(["", "\ufeff"])) + text + draw(st.sampled_from(["", "\n"]))


@given(text=_run_text(), kind=st.sampled_from(["similarity", "cosine-distance"]),
       group=st.sampled_from([1 << 22, 1, 5]))
def test_generated_runs_read_as_columns_equal_the_line_reader(tmp_path_factory, text, kind, group):
    # group: the lines ordered and checked at a time (whole queries; 1 and 5: a query or a few per group)
    p = _write(tmp_path_factory.mktemp("gen"), text)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(columnar, "_LINES_AT_ONCE", group)
        fast = columnar.read_trec_columns(p, "run", kind)
    assert fast is not None, "plain lines (any spacing, exponents, +, a BOM, \\r, blank lines): read as columns"
    assert_same_run(fast, line_reader(p, "run", kind))
    # the same lines grouped by query (the usual file, read in place a group of queries at a time)
    lines = [x for x in text.removeprefix("\ufeff").split("\n") if x.split()]
    first = {}
    for x in lines:
        first.setdefault(x.split()[0], len(first))
    g = _write(tmp_path_factory.mktemp("grouped"), "\n".join(sorted(lines, key=lambda x: first[x.split()[0]])) + "\n")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(columnar, "_LINES_AT_ONCE", group)
        grouped = columnar.read_trec_columns(g, "run", kind)
    assert_same_run(grouped, line_reader(g, "run", kind))


@given(text=_run_text(), extra=st.sampled_from(["q0 Q0 a 1 0.5 t more\n", "#c\n", "q0 Q0 a 1\n",
                                                "q0 Q0 a 1 inf t\n"]))
def test_generated_runs_with_an_odd_line_give_what_the_line_reader_gives(tmp_path_factory, text, extra):
    p = _write(tmp_path_factory.mktemp("odd"), extra + text)
    try:
        slow = line_reader(p)
    except InputFileError as e:
        with pytest.raises(InputFileError) as got:
            readers.read_trec_run(p)
        assert str(got.value) == str(e)
    else:
        assert_same_run(readers.read_trec_run(p), slow)


# --------------------------------------------------------------------------- evaluation of the columnar form

@st.composite
def _judged_run(draw):
    """(qrels, run lines): graded judgments (negative and 0 grades too) and a run with ties, unsorted."""
    docs = [f"d{i}" for i in range(12)]
    qrels, lines = {}, []
    for q in range(draw(st.integers(1, 6))):
        qid = f"q{q}"
        if draw(st.integers(0, 5)):  # now and then a query no one judged
            judged = draw(st.lists(st.sampled_from(docs), max_size=5, unique=True))
            qrels[qid] = {d: draw(st.integers(-1, 3)) for d in judged}
        if draw(st.integers(0, 5)):  # now and then a judged query the run does not answer
            ranked = draw(st.lists(st.sampled_from(docs), min_size=1, max_size=12, unique=True))
            for r, d in enumerate(ranked, start=1):
                lines.append(f"{qid} Q0 {d} {r} {draw(st.integers(0, 6)) / 4} t")
    if not qrels:
        qrels["q0"] = {"d0": 1}
    if not lines:
        lines.append("q0 Q0 d1 1 0.5 t")
    return qrels, draw(st.permutations(lines))


@given(case=_judged_run())
def test_columnar_evaluation_equals_the_per_query_engine_to_the_bit(tmp_path_factory, case):
    from audit.evaluation.judgments import Qrels
    from audit.evaluation.measures import evaluate_run

    qrels, lines = case
    p = _write(tmp_path_factory.mktemp("ev"), "\n".join(lines) + "\n")
    fast = columnar.read_trec_columns(p, "run", "similarity")
    assert isinstance(fast.rankings, ColumnarRankings)
    slow = line_reader(p, "run")
    assert isinstance(slow.rankings, dict)  # Ranked per query: the per-query engine
    a, b = evaluate_run(fast, Qrels(qrels)), evaluate_run(slow, Qrels(qrels))
    assert [q.__dict__ for q in a.per_query] == [q.__dict__ for q in b.per_query]  # float ==, not approx
    assert a.to_dict() == b.to_dict() and a.n_unjudged == b.n_unjudged


@settings(max_examples=30)  # pytrec_eval a case: the slowest test here
@given(case=_judged_run())
def test_columnar_evaluation_equals_ir_measures(tmp_path_factory, case):
    """ir_measures 0.4.3 (pytrec_eval) on the same file: every measure but RR@k, which ir_measures takes from its
    MS MARCO provider with the other tie order (tests/test_measures.py says why)."""
    ir_measures = pytest.importorskip("ir_measures")
    from audit.evaluation.judgments import Qrels
    from audit.evaluation.measures import evaluate_run, measure_names

    qrels, lines = case
    p = _write(tmp_path_factory.mktemp("ir"), "\n".join(lines) + "\n")
    ours = evaluate_run(columnar.read_trec_columns(p, "run", "similarity"), Qrels(qrels))
    # Hole@k is ours (ir_measures has no Hole); the per-query engine holds it (the test above and test_measures)
    names = [n for n in measure_names() if not n.startswith(("RR@", "Hole@"))]
    ms = [ir_measures.parse_measure(n) for n in names]
    by = {str(m): n for n, m in zip(names, ms)}
    run: dict = {}
    for line in lines:  # the file's lines read by str.split, as ir_measures' own TREC reader splits them
        f = line.split()
        run.setdefault(f[0], {})[f[2]] = float(f[4])
    theirs = {(m.query_id, by[str(m.measure)]): m.value
              for m in ir_measures.iter_calc(ms, {q: dict(js) for q, js in qrels.items() if js}, run)}
    for q in ours.per_query:
        for n in names:
            # a judged query the run does not answer: absent from ir_measures' per-query output, 0 in ours
            assert q.values[n] == pytest.approx(theirs.get((q.query_id, n), 0.0), abs=1e-12), (q.query_id, n)


def test_columnar_evaluation_in_blocks_of_lines_and_its_query_table(tmp_path, monkeypatch):
    """Matching lines block by block (3 lines at a time here) changes nothing; the QueryTable reads as the
    tuple of QueryMeasures the per-query engine gives (items, hits, subsets, the frame)."""
    from audit.evaluation import measures
    from audit.evaluation.judgments import Qrels

    p = _write(tmp_path, "".join(f"q{i % 4} Q0 d{i} {i} {1 - i / 40} t\n" for i in range(1, 30)))
    qrels = Qrels({"q0": {"d4": 2, "d8": 0}, "q1": {"d1": 1, "d29": 3}, "q2": {}, "q3": {"d3": 1}, "q9": {"x": 1}})
    whole = measures.evaluate_run(columnar.read_trec_columns(p, "r", "similarity"), qrels)
    monkeypatch.setattr(measures, "_LINES_AT_ONCE", 3)
    cut = measures.evaluate_run(columnar.read_trec_columns(p, "r", "similarity"), qrels)
    slow = measures.evaluate_run(line_reader(p, "r"), qrels, phrasings={})
    assert isinstance(cut.per_query, measures.QueryTable) and isinstance(slow.per_query, tuple)
    for res in (whole, cut):
        assert [q.__dict__ for q in res.per_query] == [q.__dict__ for q in slow.per_query]
        assert res.per_query[1:3] == list(slow.per_query[1:3])
        assert res.hits(8) == slow.hits(8) and res.n_missing == slow.n_missing == 1  # q9: judged, not ranked
        assert res.success(8) == slow.success(8)
        assert res.to_frame().equals(slow.to_frame())
    # q1: d1 at rank 1 (grade 1), d29 at rank 8 (q1 holds d1, d5, …, d29): first relevant 1
    assert cut.per_query[1].first_relevant == 1 and cut.per_query[1].values["R@4"] == 0.5


@given(case=_judged_run(), ks=st.sampled_from([(1,), (1, 4, 8, 10, 20), (2, 3)]))
def test_columnar_rr_tie_check_and_returned_ids_equal_the_per_query_ones(tmp_path_factory, case, ks):
    # the columnar run's shortcuts (ties only near the top are looked at; distinct ids from the codes) say what
    # the per-query walk over the line reader's rankings says
    from audit.evaluation.judgments import Qrels
    from audit.evaluation.measures import rr_tie_differences
    from audit.runset import returned_id_set, returned_ids

    qrels, lines = case
    p = _write(tmp_path_factory.mktemp("ties"), "\n".join(lines) + "\n")
    fast, slow = columnar.read_trec_columns(p, "run", "similarity"), line_reader(p, "run")
    assert rr_tie_differences(fast.rankings, Qrels(qrels), ks) == rr_tie_differences(slow.rankings, Qrels(qrels), ks)
    assert returned_ids(fast.rankings) == returned_ids(slow.rankings) == list(
        dict.fromkeys(c for r in slow.rankings.values() for c in r.ids))
    assert returned_id_set(fast.rankings) == returned_id_set(slow.rankings) == set(returned_ids(slow.rankings))


def test_ties_near_the_top_by_hand(tmp_path):
    # q1: ranks 3 and 4 tie (depth 3 sees the pair, depth 2 does not); q2: no tie; q3: a tie at ranks 1-2
    text = ("q1 Q0 a 1 0.9 t\nq1 Q0 b 2 0.8 t\nq1 Q0 c 3 0.5 t\nq1 Q0 d 4 0.5 t\n"
            "q2 Q0 a 1 0.9 t\nq2 Q0 b 2 0.8 t\nq3 Q0 a 1 0.7 t\nq3 Q0 b 2 0.7 t\n")
    r = columnar.read_trec_columns(_write(tmp_path, text), "run", "similarity").rankings
    assert r.tied_near_top(3) == ["q1", "q3"] and r.tied_near_top(2) == ["q3"] and r.tied_near_top(0) == []
    assert r.distinct_ids() == ["a", "b", "d", "c"]  # q1's tie in trec_eval's order: chunk id descending


def test_minus_zero_and_zero_read_as_one_score(tmp_path):
    # Arrow's hash table tells -0.0 from 0.0 by their bits; the codes must not (the line reader compares values):
    # q1's c1 and c2 tie at zero, so chunk id descending puts c2 first
    p = _write(tmp_path, "q1 Q0 c1 1 -0.0 t\nq1 Q0 c2 2 0.0 t\nq2 Q0 c1 1 0 t\nq2 Q0 c3 2 -1e-50 t\n")
    fast = columnar.read_trec_columns(p, "run", "similarity")
    assert fast is not None and fast.rankings["q1"].ids == ("c2", "c1")
    assert_same_run(fast, line_reader(p, "run"))
