"""A record's judgments as columns (issue 58): the digests streamed from arrays equal the JSON-built ones.

The ground-truth hash and the judgments digest are compared across records (the History's ground-truth change
markers, ``latest`` lookups): computed from the arrays (:mod:`audit.history.digests`) they must be the very hex
digests the original computation gives — a list per judgment, sorted, then :func:`audit.runset.digest`. The
judgments come back from the store as the same lists, and a format-2 body reads as it always did.
"""

from __future__ import annotations

import json
import zlib

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from audit.evaluation.judgments import ColumnarJudgments, Qrels
from audit.history.columns import RecordJudgments
from audit.history.record import Record, ground_truth_hash, record_of, runset_of
from audit.history.store import open_history
from audit.judging.labels import Judgments
from audit.runset import ColumnarRankings, Query, Run, RunSet, Source, digest

from pgfixture import pg_server  # noqa: F401 - the session fixture
from test_history import history  # noqa: F401 - the fixture: SQLite, and PostgreSQL in the store tier


def old_ground_truth(runset) -> str:
    """The ground-truth hash as it was computed before (the reference)."""
    qs = [(q.query_id, q.text, q.phrasing) for q in runset.queries if q.phrasing != "traffic"]
    js = {sp: [(qid, sorted((str(c), int(g)) for c, g in j.items())) for qid, j in qr.judgments.items()]
          for sp, qr in sorted(runset.judgments.items())}
    return digest("judgments", qs, js)


def old_judgments_digest(judgments) -> str:
    """``Record.stored_judgments().digest`` as it was computed before (the reference)."""
    rows = [(sp, qid, c, int(g)) for sp, qs in judgments.items() for qid, js in qs for c, g in js]
    return Judgments.of(rows, [(sp, qid) for sp, qs in judgments.items() for qid, _ in qs]).digest


def columnar(js: dict) -> ColumnarJudgments:
    """``{query: {chunk: grade}}`` as the arrays a large qrels file gives (distinct ids in first-seen order)."""
    ids, code, off, codes, grades = [], {}, [0], [], []
    for j in js.values():
        for c, g in j.items():
            if c not in code:
                code[c] = len(ids)
                ids.append(c)
            codes.append(code[c])
            grades.append(g)
        off.append(len(codes))
    return ColumnarJudgments(list(js), off, np.asarray(codes, dtype=np.int64), ids, grades)


def runset(spaces: dict, texts: dict | None = None) -> RunSet:
    """A run set judged by ``spaces`` (space → Qrels), one empty run on the first space."""
    qids = list(dict.fromkeys(q for qr in spaces.values() for q in qr.judgments))
    texts = texts or {}
    qs = tuple(Query(q, texts.get(q, f"question {q}"), "in-domain") for q in qids)
    first = next(iter(spaces))
    cr = ColumnarRankings(qids, np.zeros(len(qids) + 1, dtype=np.int64), np.zeros(0, dtype=np.int64), [],
                          np.zeros(0, dtype=np.int64), np.zeros(1))
    return RunSet(Source("files", "made", "id-made"), qs, spaces, (Run("sys", "similarity", cr, first),))


EXAMPLE = {"q1": {"d3": 1, "d1": 2, "d10": 0, "é": 1}, "q0": {"b": 1}, "q2": {}, "q10": {"d1": 3, "d2": 1}}

ID = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=0, max_size=4)
QRELS = st.dictionaries(ID, st.dictionaries(ID, st.integers(-1, 3), max_size=5), min_size=0, max_size=8)


def check(spaces: dict, texts: dict | None = None) -> None:
    """Both digests from arrays equal the originals: on the run set, the record, and the record read back."""
    dicts = runset({sp: Qrels(js) for sp, js in spaces.items()}, texts)
    cols = runset({sp: Qrels(columnar(js)) for sp, js in spaces.items()}, texts)
    want = old_ground_truth(dicts)
    assert ground_truth_hash(dicts) == want == ground_truth_hash(cols) == old_ground_truth(cols)
    rec_d, rec_c = record_of(dicts), record_of(cols)
    assert all(isinstance(j, RecordJudgments) for j in rec_c.judgments.values())
    assert rec_c.judgments == rec_d.judgments  # the same lists
    ref = old_judgments_digest(rec_d.judgments)
    assert rec_d.judgments_version == ref == rec_c.judgments_version
    assert rec_c.ground_truth == rec_d.ground_truth == want
    # the JSON form is the lists'
    assert json.dumps(rec_c.to_json()["judgments"]) == json.dumps(rec_d.to_json()["judgments"])
    # the rebuilt run set is judged by the same judgments (the same hash)
    assert ground_truth_hash(runset_of(rec_c)) == want


def test_example_digests_equal_the_json_ones():
    check({"": EXAMPLE})
    check({"b": EXAMPLE, "a": {"q0": {"x": 1}, "q9": {"d1": 1}}}, {"q1": "naïve “quoted” \\ question"})


def test_a_chunk_judged_twice_or_ids_of_one_text_go_the_original_way():
    # int 1 and "1" are one text: the arrays cannot order them, the original computation does
    rj = RecordJudgments(["q"], [0, 2], [0, 1], [1, "1"], [2, 1])
    lists = {"": [["q", [[1, 2], ["1", 1]]]]}
    rec = Record("2024-01-01T00:00:00+00:00", "report", {}, {}, "", "", judgments={"": rj})
    assert rec.judgments_version == old_judgments_digest(lists)


@settings(max_examples=80, deadline=None)
@given(st.dictionaries(st.sampled_from(["", "s1", "é"]), QRELS, min_size=1, max_size=3))
def test_generated_qrels_digests_equal_the_json_ones(spaces):
    check(spaces)


@settings(max_examples=40, deadline=None)
@given(st.dictionaries(st.sampled_from(["", "s1"]), QRELS, min_size=1, max_size=2), st.integers(1, 9))
def test_digests_written_in_many_blocks_equal_the_json_ones(spaces, block):
    # the texts are hashed block after block (65,536 judgments, a quarter of that in queries): small blocks here,
    # so that every join between two blocks is checked
    import audit.history.digests as digests

    was = digests.BLOCK
    digests.BLOCK = block
    try:
        check(spaces)
    finally:
        digests.BLOCK = was


def test_judgments_round_trip_through_the_store(history):  # noqa: F811 - the fixture
    rs = runset({"b": Qrels(columnar(EXAMPLE)), "a": Qrels({"q0": {"x": 1}})})
    rec = record_of(rs)
    got = history.get(history.append(rec))
    assert list(got.judgments) == list(rec.judgments) == ["b", "a"]
    assert isinstance(got.judgments["b"], RecordJudgments) and got.judgments == rec.judgments
    assert got.judgments_version == rec.judgments_version == old_judgments_digest(rec.judgments)
    assert got.ground_truth == rec.ground_truth == old_ground_truth(rs)
    assert replace_id(got) == replace_id(rec)
    assert ground_truth_hash(runset_of(got)) == rec.ground_truth
    assert isinstance(runset_of(got).judgments["b"].judgments, ColumnarJudgments)


def replace_id(rec: Record) -> Record:
    from dataclasses import replace

    return replace(rec, id=None)


def test_a_format_2_body_with_judgments_reads_exactly_as_before(history):  # noqa: F811 - the fixture
    rec = record_of(runset({"": Qrels(columnar(EXAMPLE))}))
    js = json.loads(json.dumps(rec.to_json(), allow_nan=True))  # lists: the format-2 form
    js["format_version"] = 2
    blob = zlib.compress(json.dumps(js, allow_nan=True).encode(), 6)
    rid = history._run(lambda cur: history._insert_record(cur, (2, js["created_at"], "report", "files", "made",
                                                                js["ground_truth"], None, blob)))
    got = history.get(rid)
    assert type(got.judgments[""]) is list and got.judgments[""] == js["judgments"][""]
    assert got.judgments_version == js["judgments_version"] == rec.judgments_version


def test_a_record_without_its_version_gets_the_same_digest_from_lists():
    rec = record_of(runset({"": Qrels(columnar(EXAMPLE))}))
    js = json.loads(json.dumps(rec.to_json()))
    js["judgments_version"] = ""  # written before it was kept
    assert Record.from_json(js).judgments_version == rec.judgments_version


def test_sqlite_file_round_trip(tmp_path):
    rec = record_of(runset({"": Qrels(columnar(EXAMPLE))}))
    with open_history(str(tmp_path / "h.sqlite")) as h:
        got = h.get(h.append(rec))
    assert replace_id(got) == replace_id(rec) and got.judgments[""] == rec.judgments[""]
