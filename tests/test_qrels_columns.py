"""The columnar TREC qrels reader (audit/qrels.py ``read_trec_qrels_columns``) reads what the line reader reads.

Every generated file is read both ways: when the columnar path reads it, its judgments (query order, each
query's chunks in file order, grades) equal the line reader's; when it refuses, the line reader reads it (and
``read_trec_qrels`` gives the line reader's answer or its ``FILE:LINE: reason``).
"""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from audit import qrels as qrels_mod
from audit.evaluation.judgments import ColumnarJudgments
from audit.jsontext import InputFileError
from test_columnar import _judged_run


def _line_reader(path):
    keep = qrels_mod.read_trec_qrels_columns
    qrels_mod.read_trec_qrels_columns = lambda *a, **k: None
    try:
        return qrels_mod.read_trec_qrels(path)
    finally:
        qrels_mod.read_trec_qrels_columns = keep


def _as_lists(judgments):
    return [(q, list(js.items())) for q, js in judgments.items()]


def _check(path):
    fast = qrels_mod.read_trec_qrels_columns(path)
    try:
        slow = _line_reader(path)
    except InputFileError as e:
        assert fast is None
        with pytest.raises(InputFileError) as got:
            qrels_mod.read_trec_qrels(path)
        assert str(got.value) == str(e)
        return None
    if fast is not None:
        assert isinstance(fast.judgments, ColumnarJudgments)
        assert _as_lists(fast.judgments) == _as_lists(slow.judgments)
        assert fast.query_ids == slow.query_ids
        assert fast.judgments.judged_ids() == list(dict.fromkeys(c for js in slow.judgments.values() for c in js))
        assert (fast.source, fast.repeated, fast.complete) == (slow.source, slow.repeated, slow.complete)
        assert all(fast.relevant(q) == slow.relevant(q) for q in slow.query_ids)
    assert _as_lists(qrels_mod.read_trec_qrels(path).judgments) == _as_lists(slow.judgments)
    return fast


_id = st.one_of(
    st.sampled_from(["q1", "q2", "d1", "d2", "c-7", "Ω", "日本", "a#b", "0", "-1", "é"]),
    st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=6),  # spaces, unicode, anything
)
_grade = st.one_of(st.integers(-3, 4).map(str), st.sampled_from(["+1", "01", "-0", "1_0", "x", "9" * 25]))
_sep = st.sampled_from([" ", "  ", "\t", " \t ", "\x0b"])
_line = st.one_of(
    st.tuples(_id, st.sampled_from(["0", "Q0", "1"]), _id, _grade, _sep, _sep).map(
        lambda t: f"{t[0]}{t[4]}{t[1]}{t[5]}{t[2]} {t[3]}"),
    st.sampled_from(["", "   ", "# a comment", "q1 0 d1", "q1 0 d1 1 extra"]),
)


@given(lines=st.lists(_line, min_size=0, max_size=12), dup=st.integers(0, 11), ending=st.sampled_from(["\n", "\r\n"]),
       bom=st.booleans())
def test_columnar_qrels_equal_the_line_reader(tmp_path_factory, lines, dup, ending, bom):
    # duplicate lines (same grade: noted by the line reader; another grade: refused) come from repeating one
    if lines:
        lines = lines + [lines[dup % len(lines)]]
    p = tmp_path_factory.mktemp("qrels") / "qrels.txt"
    p.write_bytes((b"\xef\xbb\xbf" if bom else b"") + ending.join(lines).encode("utf-8", "surrogatepass") + b"\n")
    _check(p)


def test_a_plain_file_is_read_as_columns_ungrouped_and_graded(tmp_path):
    # q2 first, q1's judgments apart: file order per query (q2: b, a; q1: c, a), grades 0 and negative kept
    p = tmp_path / "qrels.txt"
    p.write_text("q2 0 b 2\nq1 0 c -1\n\nq2 0 a 0\nq1 0 a 3\n")
    fast = _check(p)
    assert fast is not None
    assert _as_lists(fast.judgments) == [("q2", [("b", 2), ("a", 0)]), ("q1", [("c", -1), ("a", 3)])]
    assert fast.relevant("q2") == {"b"} and fast.relevant("q1") == {"a"}


@pytest.mark.parametrize("text", ["q1 0 a 1\nq1 0 a 1\n", "q1 0 a 1\nq1 0 a 2\n", "# c\nq1 0 a 1\n",
                                  "q1 0 a +1\n", "q1 0 a\n", "q1\u00a00 a 1\n", "\n"])
def test_what_the_columns_refuse_the_line_reader_reads(tmp_path, text):
    p = tmp_path / "qrels.txt"
    p.write_text(text)
    assert qrels_mod.read_trec_qrels_columns(p) is None
    _check(p)


@given(case=_judged_run())
def test_columnar_judgments_evaluate_to_the_bit(tmp_path_factory, case):
    # the measures read columnar judgments through arrays (measures._judged_columns); the dict judgments through
    # a pass per query: every figure the same float, with the queries of the judgments and with a longer list
    from test_columnar import _write, columnar, line_reader  # noqa: I001

    from audit.evaluation.judgments import Qrels
    from audit.evaluation.measures import evaluate_run

    qrels, lines = case
    qrels = {q: js for q, js in qrels.items() if js} or {"q0": {"d0": 1}}
    folder = tmp_path_factory.mktemp("cq")
    p = _write(folder, "\n".join(lines) + "\n")
    qp = folder / "qrels.txt"
    qp.write_text("".join(f"{q} 0 {c} {g}\n" for q, js in qrels.items() for c, g in js.items()))
    cols = qrels_mod.read_trec_qrels_columns(qp)
    assert isinstance(cols.judgments, ColumnarJudgments)
    fast, slow = columnar.read_trec_columns(p, "run", "similarity"), line_reader(p, "run")
    for ids in (None, ["q9", *qrels, "q5"]):
        a, b = evaluate_run(fast, cols, query_ids=ids), evaluate_run(slow, Qrels(qrels), query_ids=ids)
        assert [q.__dict__ for q in a.per_query] == [q.__dict__ for q in b.per_query]
        assert a.to_dict() == b.to_dict() and a.n_unjudged == b.n_unjudged
