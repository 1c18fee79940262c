"""Traffic read as applications write it: OpenInference spans from the OpenTelemetry SDK, the plain query log.

Spans are made in the test by the SDK with OpenInference's attribute names and encoded by the SDK's own OTLP
encoder (tests/otlpmaker.py), then written with both id encodings; every figure checked is worked out from
the spans the test made.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from audit.evaluation.threshold import counts_at, kept
from audit.traffic.labelled import query_distances_from_gate
from audit.traffic.otlp import span_id
from audit.traffic.read import TrafficReader
from audit.traffic.records import parse_time
from audit.traffic.table import Window, read_traffic
from otlpmaker import Doc, Retrieval, request_dict, spans, write_export

T0 = parse_time("2024-05-01T10:00:00Z")
MIN = 60 * 10**9

RETRIEVALS = [
    Retrieval("How often is the journal snapshotted?",
              [Doc("b2", 0.31, "A snapshot is taken every six hours.", {"doc_id": "ops/backups.md", "start": 3, "end": 39}),
               Doc("b3", 0.29), Doc("k1", 0.7)], T0),
    Retrieval("What is the capital of Portugal?", [Doc("l2", 0.58), Doc("k1", 0.81)], T0 + MIN),
    Retrieval(None, [], T0 + 2 * MIN),  # a retrieval that found nothing, and a log without the question
]


@pytest.fixture(scope="module")
def finished():
    return spans(RETRIEVALS, other_kinds=["LLM", "EMBEDDING"])


def _ids(finished):
    """(span id, trace id) in hex of the SDK's RETRIEVER spans, in the order made."""
    return [(f"{s.context.span_id:016x}", f"{s.context.trace_id:032x}") for s in finished
            if s.attributes.get("openinference.span.kind") == "RETRIEVER"]


@pytest.mark.parametrize("ids", ["hex", "base64"])
def test_sdk_spans_are_read_with_either_id_encoding(tmp_path, finished, ids):
    path = write_export(tmp_path / "traces.json", [finished[:4], finished[4:]], ids=ids)
    reader = TrafficReader([path])
    got = [q for _, q in reader]
    assert reader.problems == []
    # the SDK wrote 3 RETRIEVER spans, 3 CHAIN parents, one LLM and one EMBEDDING span
    assert reader.skipped == {"CHAIN": 3, "LLM": 1, "EMBEDDING": 1}
    assert reader.formats == {str(path): "otlp"}
    assert [(q.query_id, q.trace_id) for q in got] == _ids(finished)  # base64 ids come back as the same hex
    a, b, c = got
    assert a.query == "How often is the journal snapshotted?" and a.time_ns == T0 and a.system == "rag"
    assert [(r.chunk_id, r.score) for r in a.results] == [("b2", 0.31), ("b3", 0.29), ("k1", 0.7)]
    assert (a.results[0].doc_id, a.results[0].start, a.results[0].end) == ("ops/backups.md", 3, 39)
    assert a.results[0].content == "A snapshot is taken every six hours." and a.results[1].content is None
    assert b.time_ns == T0 + MIN and [r.score for r in b.results] == [0.58, 0.81]
    assert c.query is None and c.results == ()


def test_proto_field_names_read_as_camel_case(tmp_path, finished):
    camel = [q for _, q in TrafficReader([write_export(tmp_path / "a.json", [finished])])]
    snake = [q for _, q in TrafficReader([write_export(tmp_path / "b.json", [finished], proto_names=True)])]
    strip = lambda qs: [(q.query_id, q.trace_id, q.query, q.time_ns, q.results) for q in qs]  # noqa: E731
    assert strip(camel) == strip(snake) and len(camel) == 3


def test_span_ids_hex_or_base64_never_ambiguous():
    raw = bytes(range(1, 9))
    assert span_id(raw.hex(), 8, "spanId") == "0102030405060708"
    assert span_id("AQIDBAUGBwg=", 8, "spanId") == "0102030405060708"  # base64 of the same 8 bytes
    assert span_id("5B8EFFF798038103D269B633813FC60C", 16, "traceId") == "5b8efff798038103d269b633813fc60c"
    for bad in ("0102", "not-an-id!", "AQIDBAUGBwgJ"):  # too short; neither; base64 of 9 bytes
        with pytest.raises(ValueError, match="spanId"):
            span_id(bad, 8, "spanId")


def test_gate_values_order_and_padding(tmp_path, finished):
    # similarity: a higher score is better; gate values are negated, best first, KEEP = 4 padded with inf
    t = read_traffic([write_export(tmp_path / "t.json", [finished])], "similarity")
    assert t.gate.shape == (3, 4)
    assert t.gate[0].tolist() == [-0.7, -0.31, -0.29, math.inf]
    assert t.gate[1].tolist() == [-0.81, -0.58, math.inf, math.inf]
    assert t.gate[2].tolist() == [math.inf] * 4
    assert t.n_results.tolist() == [3, 2, 0] and t.has_text.tolist() == [True, True, False]
    # at a similarity cut of 0.6 the gate keeps scores strictly above it: 0.7 | 0.81 | nothing
    assert t.kept_counts(t.to_gate(0.6)).tolist() == [1, 1, 0]
    # as a cosine distance the same scores are read as they are: below 0.6 → 0.29, 0.31 | 0.58 | nothing
    d = read_traffic([write_export(tmp_path / "t.json", [finished])], "cosine-distance")
    assert d.kept_counts(0.6).tolist() == [2, 1, 0]
    assert d.gate_distance().tolist() == [0.29, 0.58, math.inf]


def test_malformed_lines_and_spans_are_listed_and_the_rest_is_read(tmp_path, finished):
    good = request_dict(finished)
    broken = request_dict(finished)
    sp = broken["resourceSpans"][0]["scopeSpans"][0]["spans"]
    retrievers = [s for s in sp if any(a["key"] == "openinference.span.kind" and a["value"]["stringValue"] == "RETRIEVER"
                                       for a in s["attributes"])]
    retrievers[0]["attributes"] = [a for a in retrievers[0]["attributes"] if not a["key"].endswith("0.document.score")]
    retrievers[1]["spanId"] = "xyz"
    retrievers[2]["spanId"] = "00000000000000ff"  # a span of its own (the same id as line 1's would be a copy)
    path = tmp_path / "mixed.json"
    path.write_bytes(json.dumps(good).encode() + b"\n" + b"{not json\n" + b"\n" + b"\xff\xfe garbage\n"
                     + json.dumps(broken).encode() + b"\r\n" + b'{"resourceSpans": 3}\n')
    t = read_traffic([path], "similarity")
    reasons = [(p.line, p.reason) for p in t.problems]
    assert reasons[0] == (2, "not valid JSON (Expecting property name enclosed in double quotes at column 2)")
    assert reasons[1][0] == 4 and reasons[1][1].startswith("not UTF-8 text (byte 0xff")
    assert (5, "document 0 has no finite score (missing)") in reasons
    assert any(line == 5 and "spanId 'xyz'" in r for line, r in reasons)
    assert reasons[-1] == (6, "not an OTLP ExportTraceServiceRequest (no 'resourceSpans' list)")
    assert t.n_problems == 5
    assert all(p.file == str(path) for p in t.problems)
    # line 1: its 3 retrievals; line 5: the one good retrieval left (the third)
    assert len(t) == 4 and t.line.tolist() == [1, 1, 1, 5]
    assert str(t.problems[2]).startswith(f"{path}:5: span ")


LOG = [
    {"query_id": "t1", "query": "How often is the journal snapshotted?", "time": "2024-05-01T10:00:00Z",
     "results": [{"chunk_id": "b2", "score": 0.31, "content": "x", "doc_id": "ops/backups.md", "start": 0, "end": 1},
                 {"chunk_id": "b3", "score": 0.29}]},
    {"query_id": 2, "query": None, "time": 1714557660000000000, "results": []},
    {"query_id": "t3", "query": "q", "time": "2024-05-01 12:02:00+02:00", "results": [{"chunk_id": 7, "score": 0.9}],
     "system": "rag"},
]


def _write_log(path, rows, extra: bytes = b""):
    path.write_bytes(b"\xef\xbb\xbf" + b"".join(json.dumps(r).encode() + b"\n" for r in rows) + extra)
    return path


def test_query_log_is_read_with_its_time_forms(tmp_path):
    t = read_traffic([_write_log(tmp_path / "log.jsonl", LOG)], "cosine-distance")
    assert t.formats == {str(tmp_path / "log.jsonl"): "query log"} and t.problems == []
    # ISO with Z, epoch nanoseconds, and 12:02+02:00 = 10:02Z
    assert t.time_ns.tolist() == [T0, T0 + MIN, T0 + 2 * MIN]
    assert t.gate_distance().tolist() == [0.29, math.inf, 0.9]
    assert [q.query_id for q in t.records([0, 1, 2])] == ["t1", "2", "t3"]
    assert t.systems == {None: 2, "rag": 1}
    # a window [10:01, 10:02) holds the second record only
    assert t.rows(Window(T0 + MIN, T0 + 2 * MIN)).tolist() == [1]


@pytest.mark.parametrize("row, reason", [
    ({"query": "q", "time": "2024-05-01", "results": []}, "'query_id' must be a string or an integer (missing)"),
    ({"query_id": "a", "query": 3, "time": "2024-05-01", "results": []}, "query 'a': 'query' must be a string or null"),
    ({"query_id": "a", "results": []}, "query 'a': 'time' is missing (ISO 8601 or epoch nanoseconds)"),
    ({"query_id": "a", "time": 1714557600, "results": []}, "query 'a': 'time' 1714557600 is before 2000 as epoch "
                                                          "nanoseconds: seconds or milliseconds? (epoch times must be "
                                                          "nanoseconds, as OTLP writes them)"),
    ({"query_id": "a", "time": "yesterday", "results": []}, "query 'a': 'time' 'yesterday' is not ISO 8601 "
                                                            "(e.g. 2024-05-01T10:00:00Z)"),
    ({"query_id": "a", "time": "2024-05-01"}, "query 'a': 'results' must be a list (missing)"),
    ({"query_id": "a", "time": "2024-05-01", "results": [{"chunk_id": "c", "score": "high"}]},
     "query 'a': results[0]: 'score' must be a finite number (got \"high\")"),
    ({"query_id": "a", "time": "2024-05-01", "results": [{"chunk_id": "c", "score": 1, "start": 3}]},
     "query 'a': results[0]: 'start' and 'end' go together: give both or neither"),
])
def test_a_bad_log_line_is_one_problem_naming_file_line_and_key(tmp_path, row, reason):
    path = _write_log(tmp_path / "log.jsonl", [LOG[0], row, LOG[2]])
    t = read_traffic([path], "similarity")
    assert [(p.file, p.line, p.reason) for p in t.problems] == [(str(path), 2, reason)]
    assert len(t) == 2  # the lines around it are read


def test_a_question_never_appears_in_a_problem(tmp_path):
    secret = "my account number is 12345"
    rows = [{"query_id": "a", "query": secret, "time": "2024-05-01", "results": [{"chunk_id": "c", "score": "x"}]},
            {"query_id": "b", "query": secret, "time": 3, "results": []}]
    t = read_traffic([_write_log(tmp_path / "log.jsonl", rows)], "similarity")
    assert t.n_problems == 2 and not any(secret in str(p) for p in t.problems)


def test_cosine_distances_out_of_range_are_a_problem(tmp_path):
    rows = [{"query_id": "a", "time": "2024-05-01", "results": [{"chunk_id": "c", "score": 0.87}]},
            {"query_id": "b", "time": "2024-05-01", "results": [{"chunk_id": "c", "score": 2.5}]}]
    t = read_traffic([_write_log(tmp_path / "log.jsonl", rows)], "cosine-distance")
    assert len(t) == 1 and t.problems[0].line == 2 and "outside [0, 2] (is the score kind right?)" in t.problems[0].reason


def test_a_folder_is_read_in_path_order_and_an_empty_file_is_a_problem(tmp_path, finished):
    (tmp_path / "d" / "sub").mkdir(parents=True)
    write_export(tmp_path / "d" / "b.json", [finished])
    _write_log(tmp_path / "d" / "sub" / "a.jsonl", LOG[:1])
    (tmp_path / "d" / "c.jsonl").write_text("\n", encoding="utf-8")
    (tmp_path / "d" / ".hidden.json").write_text("{}", encoding="utf-8")
    (tmp_path / "d" / "notes.txt").write_text("not traffic", encoding="utf-8")
    t = read_traffic([tmp_path / "d"], "similarity")
    assert [f.name for f in t.files] == ["b.json", "c.jsonl", "a.jsonl"]  # sorted by path: d/b, d/c, d/sub/a
    assert len(t) == 4 and [p.reason for p in t.problems] == ["no record in the file"]
    with pytest.raises(ValueError, match="traffic file not found"):
        read_traffic([tmp_path / "missing.json"], "similarity")
    (tmp_path / "e").mkdir()
    with pytest.raises(ValueError, match="no traffic file in this folder"):
        read_traffic([tmp_path / "e"], "similarity")


def test_parse_time_forms():
    assert parse_time("2024-05-01T10:00:00Z") == T0
    assert parse_time("2024-05-01T10:00:00") == T0  # UTC unless an offset is given
    assert parse_time("2024-05-01T12:00:00+02:00") == T0
    assert parse_time("2024-05-01T10:00:00.123456789Z") == T0 + 123_456_789  # to the nanosecond
    assert parse_time(str(T0)) == T0 and parse_time(T0) == T0
    for bad in (1714557600.0, True, "", "01/05/2024"):
        with pytest.raises(ValueError):
            parse_time(bad)


def test_the_traffic_gate_is_the_one_gate(tmp_path):
    """Chunks kept and NO ANSWER, as the traffic computes them, equal the gate's own functions."""
    rng = np.random.default_rng(29)
    rows = []
    for i in range(300):
        scores = np.round(rng.uniform(0, 1, rng.integers(0, 7)), 2).tolist()  # rounded: ties on purpose
        rows.append({"query_id": str(i), "time": "2024-05-01",
                     "results": [{"chunk_id": f"c{j}", "score": s} for j, s in enumerate(scores)]})
    t = read_traffic([_write_log(tmp_path / "log.jsonl", rows)], "cosine-distance")
    queries = [query_distances_from_gate(r["query_id"], False, sorted(x["score"] for x in r["results"]))
               for r in rows]
    from audit.report.traffic import build_traffic_report

    rep = build_traffic_report(t)
    curve = rep.curve_frame()
    for cut in (0.0, 0.25, 0.5, 0.52, 0.75, 1.0, 2.0):
        k = t.kept_counts(cut)
        assert k.tolist() == [len(kept(np.array(sorted(x["score"] for x in r["results"])), cut)) for r in rows]
        c = counts_at(queries, cut)  # every traffic question as an out-of-domain one: refused = NO ANSWER
        assert int((k == 0).sum()) == c.refused
        on_curve = curve[(curve["series"] == "traffic: no answer") & np.isclose(curve["cut"], cut)]
        if len(on_curve):
            assert on_curve["share (%)"].iloc[0] == round(100 * c.refused / len(rows), 2)
