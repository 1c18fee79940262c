"""Format 4 (issue 58): a record's columns narrowed and zstd-compressed; every figure as format 3 wrote it.

``tests/history_format3`` holds bodies written by the format-3 writer (before this change) and their records' JSON
form, for two run sets: :func:`generated` (a team's run and qrels as arrays: ties, a NaN, infinities, orders that
are not descending, relevant chunks past rank 20, grades -1 to 3, judged queries the run does not rank) and the
example runs (``data/example``). The generated run set recorded now must give the very same JSON form — rankings
per query, measures, judgments, the ground-truth hash and the judgments digest — and both format-3 bodies must read
back as written (``_Draws`` makes the same run set wherever the test runs).
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from conftest import ROOT

from audit.evaluation.judgments import ColumnarJudgments, Qrels
from audit.history.columns import RecordJudgments, RecordRankings
from audit.history.record import FORMAT_VERSION, ground_truth_hash, record_of, runset_of
from audit.history.store import MAGIC, _columns_of
from audit.runset import ColumnarRankings, Query, Run, RunSet, Source

from pgfixture import pg_server  # noqa: F401 - the session fixture
from test_history import history  # noqa: F401 - the fixture: SQLite, and PostgreSQL in the store tier

FIXTURES = ROOT / "tests" / "history_format3"
CREATED = "2026-12-07T00:00:00.000000+00:00"


class _Draws:
    """A 64-bit linear congruential sequence: the same draws on every platform and Python version."""

    def __init__(self, seed: int) -> None:
        self.x = seed

    def below(self, n: int) -> int:
        self.x = (self.x * 6364136223846793005 + 1442695040888963407) % (1 << 64)
        return (self.x >> 33) % n


def generated() -> RunSet:
    """40 queries of up to 40 positions (scores of two decimals, so ties), judged as arrays."""
    d = _Draws(58)
    ids = [f"doc-{i}" for i in range(90)] + ["é-ü", 'quote"d']
    qids = [f"q{i}" for i in range(40)]
    rows, off = [], [0]
    for i in range(len(qids)):
        n = d.below(41)
        chunks = []
        while len(chunks) < n:
            c = d.below(len(ids))
            if c not in chunks:
                chunks.append(c)
        scores = sorted((d.below(100) / 100 for _ in range(n)), reverse=True)
        if i % 7 == 3 and n > 25:
            scores[22] = 0.999  # not descending: a position past 20 the gate keeps at some cut
        if i == 5 and n:
            scores[-1] = math.nan
        if i == 6 and n:
            scores[0] = math.inf
        rows += list(zip(chunks, scores))
        off.append(len(rows))
    vals = np.unique(np.array([s for _, s in rows] + [0.0]))
    where = {("nan" if math.isnan(v) else v): k for k, v in enumerate(vals.tolist())}
    codes = [where["nan" if math.isnan(s) else s] for _, s in rows]
    cr = ColumnarRankings(qids, off, np.array([c for c, _ in rows], dtype=np.int64), ids,
                          np.array(codes, dtype=np.int64), vals)
    jq, joff, jcodes, jgrades = [], [0], [], []
    for i, q in enumerate(qids + ["q-unranked", "q-unranked-2"]):
        if i % 4 == 1:
            continue
        seen: list = []
        for _ in range(d.below(14)):
            c = d.below(len(ids))
            if c not in seen:
                seen.append(c)
                jcodes.append(c)
                jgrades.append(d.below(5) - 1)
        jq.append(q)
        joff.append(len(jcodes))
    qrels = Qrels(ColumnarJudgments(jq, joff, np.array(jcodes, dtype=np.int64), ids, jgrades))
    queries = tuple(Query(q, f"question {q} “naïve”", "in-domain") for q in jq)
    return RunSet(Source("files", "generated", "id-generated"), queries, {"": qrels},
                  (Run("gen", "similarity", cr), Run("dist", "cosine-distance", cr)))


def example() -> RunSet:
    from audit.sources.imported.system import load_system

    ex = ROOT / "data" / "example"
    return load_system(ex / "queries.tsv", {"before": str(ex / "before.trec"), "after": str(ex / "after.trec")},
                       qrels=ex / "qrels.trec")


RUNSETS = {"generated": generated, "example": example}  # what tests/history_format3 was written from


def text(js: dict, code: bool = True) -> str:
    """A record's JSON form as one text (NaN written as NaN: equal texts, equal values), its format aside, and
    without ``code``, the code's version (a record made now names this code's)."""
    js = {**js, "format_version": None}
    if not code:
        js["code_version"] = None
        js["source"] = {**js["source"], "provenance": {**js["source"]["provenance"], "audit_version": None}}
    return json.dumps(js, allow_nan=True, sort_keys=True)


def written_by_format_3(name: str) -> dict:
    return json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))


def test_a_record_now_is_the_record_format_3_wrote(history):  # noqa: F811 - the fixture
    want = written_by_format_3("generated")
    assert want["format_version"] == 3
    rec = record_of(generated(), created_at=CREATED)
    assert rec.format_version == FORMAT_VERSION == 4
    assert all(isinstance(r.rankings, RecordRankings) for r in rec.runs)
    assert all(isinstance(j, RecordJudgments) for j in rec.judgments.values())
    assert rec.ground_truth == want["ground_truth"] and rec.judgments_version == want["judgments_version"]
    assert text(rec.to_json(), code=False) == text(want, code=False)
    got = history.get(history.append(rec))  # a format-4 body, read back
    assert got.format_version == 4 and text(got.to_json(), code=False) == text(want, code=False)
    assert ground_truth_hash(runset_of(got)) == want["ground_truth"]


@pytest.mark.parametrize("name", sorted(RUNSETS))
def test_a_format_3_body_reads_as_written(name, history):  # noqa: F811 - the fixture
    body = (FIXTURES / f"{name}.body").read_bytes()
    want = written_by_format_3(name)
    js, runs, spaces = _columns_of(body, 0)
    assert body.startswith(MAGIC) and js["format_version"] == 3 and len(runs) == 2 and list(spaces) == [""]
    rid = history._run(lambda cur: history._insert_record(cur, (3, want["created_at"], "report", "files", name,
                                                                want["ground_truth"], None, body)))
    got = history.get(rid)
    assert text(got.to_json()) == text(want)
    from dataclasses import replace

    assert replace(got, judgments_version="").judgments_version == want["judgments_version"]  # computed again
    assert ground_truth_hash(runset_of(got)) == want["ground_truth"]
    again = history.get(history.append(got))  # written again as format 4
    assert again.format_version == 4 and text(again.to_json()) == text(want)


def test_format_4_columns_are_narrow_and_smaller():
    from audit.history.store import _encode

    body = _encode(record_of(generated(), created_at=CREATED))
    head = js_meta(body)
    # no column under format 3's names: a format-3 reader reads none and refuses the record by its format
    assert head["format_version"] == 4 and "columns" not in head and "judgment_columns" not in head
    kinds = {name: (dtype, codec) for meta in head["run_columns"].values()
             for name, dtype, _, _, codec in meta["arrays"]}
    assert {kinds[k][0] for k in ("rank", "code", "counts", "top", "score_code")} == {"|u1"}
    assert "score" not in kinds and kinds["score_values"][0] == "<f8"  # 100 distinct scores: codes into them
    assert {c for _, c in kinds.values()} == {"zstd"}
    judged = {name: dtype for name, dtype, *_ in head["space_columns"][""]["arrays"]}
    assert judged == {"counts": "|u1", "codes": "|u1", "grades": "|i1"}
    assert len(body) < len((FIXTURES / "generated.body").read_bytes())


def js_meta(body: bytes) -> dict:
    """The JSON part of a format-3 or 4 body, its column headers included."""
    import struct
    import zlib

    (n,) = struct.unpack_from("<Q", body, len(MAGIC))
    return json.loads(zlib.decompress(body[len(MAGIC) + 8:len(MAGIC) + 8 + n]))


def test_wide_codes_and_distinct_scores_round_trip(history):  # noqa: F811 - the fixture
    # 70,000 queries of one chunk each: chunk codes past 16 bits, and as many distinct scores as rows (floats, not
    # codes into them)
    from audit.history.store import _encode

    n = 70_000
    ids = [f"c{i}" for i in range(n)]
    cr = ColumnarRankings([f"q{i}" for i in range(n)], np.arange(n + 1), np.arange(n)[::-1].copy(), ids,
                          np.arange(n), np.linspace(0.0, 1.0, n))
    qrels = Qrels(ColumnarJudgments(["q0", f"q{n - 1}"], [0, 1, 2], np.array([n - 1, 5]),
                                    np.array(ids, dtype=object), [2, 1]))
    rs = RunSet(Source("files", "wide", "id-wide"), (Query("q0", "first", "in-domain"),
                                                      Query(f"q{n - 1}", "last", "in-domain")),
                {"": qrels}, (Run("wide", "similarity", cr),))
    rec = record_of(rs, created_at=CREATED)
    kinds = {name: dtype for name, dtype, *_ in js_meta(_encode(rec))["run_columns"]["0"]["arrays"]}
    assert kinds["code"] == "<u4" and kinds["score"] == "<f8" and "score_code" not in kinds
    got = history.get(history.append(rec))
    assert got.runs[0].rankings["q0"] == {"ids": [f"c{n - 1}"], "scores": [0.0], "distances": None, "more": [],
                                          "length": 1, "beyond": [], "nearest": None, "nearest_relevant": None,
                                          "depth": None, "gate": -0.0, "answer": [1, -0.0]}
    assert got.runs[0].rankings[f"q{n - 1}"]["answer"] is None  # c5 is judged there, c0 is ranked
    assert text(got.to_json()) == text(rec.to_json())


@pytest.mark.parametrize("n", [0, 1, 2, 5])
def test_the_json_part_written_in_blocks_is_json_dumps_text(monkeypatch, n):
    # the queries are written a block at a time: the text is json.dumps's, whatever the block boundaries
    import json
    import zlib

    from audit.history import store

    monkeypatch.setattr(store, "_QUERIES_AT_ONCE", 2)
    js = {"format_version": 4, "runs": [{"name": "a", "x": float("nan")}], "note": "é\u2028"}
    queries = tuple((f"q{i}", f"question «{i}»", "in-domain", None) for i in range(n))
    text = zlib.decompress(store._json_compressed(js, queries)).decode("utf-8")
    assert text == json.dumps({**js, "queries": [list(q) for q in queries]}, ensure_ascii=False, allow_nan=True)
    assert zlib.decompress(store._json_compressed({}, ())) == b'{"queries": []}'


def test_a_body_written_into_sqlite_in_parts_reads_back(history, monkeypatch):  # noqa: F811 - the fixture
    # the body goes into a zero blob of its size a part at a time (incremental blob I/O): 7-byte parts cut it
    # everywhere, and the record reads back as the one written whole
    from audit.history import store

    rec = record_of(generated(), created_at=CREATED)
    whole = history.get(history.append(rec))
    monkeypatch.setattr(store, "_BLOB_PART", 7)
    parts = history.get(history.append(rec))
    assert text(parts.to_json()) == text(whole.to_json()) == text(rec.to_json())
    bodies = [bytes(b) for (b,) in history._read(f"SELECT body FROM {store._PREFIX}records ORDER BY id")]
    assert len(bodies) == 2 and len(bodies[0]) > 7 * 10 and bodies[0] == bodies[1]
