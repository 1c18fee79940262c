"""Traffic as it lies on disk in the wild: a folder as logrotate leaves it (the live file, a rotated one, gzip
files written by the ``gzip`` command and module, files that are not traffic), a gzip stream cut short, and a
batch of spans an exporter sent twice. Every file is written here; every count is the test's own."""

from __future__ import annotations

import gzip
import json
import shutil
import subprocess

import pytest
from hypothesis import given, strategies as st

from audit.report.traffic import build_traffic_report
from audit.traffic.read import SeenSpans, TrafficReader, fetch
from audit.traffic.records import TrafficRow, parse_time
from audit.traffic.table import read_traffic
from otlpmaker import Doc, Retrieval, spans, write_export

T0 = parse_time("2024-05-01T10:00:00Z")


def _log(qid: str, minute: int, score: float) -> bytes:
    return (json.dumps({"query_id": qid, "query": f"question {qid}", "time": T0 + minute * 60 * 10**9,
                        "results": [{"chunk_id": "c1", "score": score}]}) + "\n").encode()


@pytest.fixture()
def rotated(tmp_path):
    """queries.jsonl (live, 2 records), .1 (rotated, delaycompress: plain, 1), .2.gz (the gzip command, 2),
    .3.gz (the gzip module, 2 records in two gzip members, as `gzip -c >>` appends), and two files that are not
    read: a README and a bzip2 file."""
    d = tmp_path / "logs"
    d.mkdir()
    (d / "queries.jsonl").write_bytes(_log("a1", 50, 0.9) + _log("a2", 51, 0.8))
    (d / "queries.jsonl.1").write_bytes(_log("b1", 40, 0.7))
    two = d / "queries.jsonl.2"
    two.write_bytes(_log("c1", 30, 0.6) + _log("c2", 31, 0.5))
    gz = shutil.which("gzip")
    if gz is None:
        pytest.skip("the gzip command is not installed")
    subprocess.run([gz, "-n", str(two)], check=True, timeout=30)  # leaves queries.jsonl.2.gz, as logrotate does
    with open(d / "queries.jsonl.3.gz", "wb") as f:
        f.write(gzip.compress(_log("d1", 20, 0.4)) + gzip.compress(_log("d2", 21, 0.3)))
    (d / "README.txt").write_text("rotated daily\n")
    (d / "queries.jsonl.4.bz2").write_bytes(b"BZh91AY&SY")
    (d / ".state").write_text("hidden: neither read nor listed\n")
    return d


def test_a_logrotate_folder_is_read_gzip_included_and_every_file_left_out_is_named(rotated):
    t = read_traffic([rotated], "similarity")
    names = [f.name for f in t.files]
    assert names == ["queries.jsonl", "queries.jsonl.1", "queries.jsonl.2.gz", "queries.jsonl.3.gz"]
    assert len(t) == 2 + 1 + 2 + 2 and t.n_problems == 0
    assert sorted(p.rsplit("/", 1)[-1] for p in t.compressed) == ["queries.jsonl.2.gz", "queries.jsonl.3.gz"]
    skipped = {f.to_dict()["name"]: f.reason for f in t.skipped_files}
    assert set(skipped) == {"README.txt", "queries.jsonl.4.bz2"}
    assert skipped["README.txt"].startswith("not a traffic file name")
    assert skipped["queries.jsonl.4.bz2"].startswith("compressed as .bz2: only gzip (.gz) is read")
    # the best score of each question, from the files as written (similarity: the gate reads -score)
    assert sorted(-t.gate[:, 0]) == sorted([0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3])
    rep = build_traffic_report(t, 0.55)
    text = rep.render_text()
    assert "queries.jsonl.2.gz (query log, gzip)" in text and "queries.jsonl.1 (query log)," in text
    assert "not read: README.txt: not a traffic file name" in text
    assert "not read: queries.jsonl.4.bz2: compressed as .bz2" in text
    data = rep.to_json()
    assert [f["compression"] for f in data["files"]] == [None, None, "gzip", "gzip"]
    assert {f["name"] for f in data["skipped_files"]} == {"README.txt", "queries.jsonl.4.bz2"}


def test_a_record_of_a_gzip_file_is_read_again_at_its_place(rotated):
    t = read_traffic([rotated], "similarity")
    rows = [i for i in range(len(t)) if t.files[t.file[i]].name == "queries.jsonl.3.gz"]
    got = fetch(t.files, [t.locator(i) for i in rows])  # the second lies in the file's second gzip member
    assert [q.query_id for q in got] == ["d1", "d2"]


def test_a_gzip_stream_cut_short_keeps_the_lines_before_and_says_where(tmp_path):
    body = b"".join(_log(f"q{i}", i, 0.5) for i in range(200))
    whole = gzip.compress(body)
    (tmp_path / "cut.jsonl.gz").write_bytes(whole[: len(whole) // 2])  # a rotation caught mid-write
    t = read_traffic([tmp_path / "cut.jsonl.gz"], "similarity")
    (p,) = t.problems
    # every line wholly decompressed before the cut is read (the partial one is not); the problem names the last
    assert 0 < len(t) < 200 and p.line == len(t)
    assert "the gzip stream ends early after line" in p.reason and "the lines before are read" in p.reason
    assert t.line.tolist() == list(range(1, len(t) + 1))


RETRIEVALS = [Retrieval("How often is the journal snapshotted?", [Doc("b2", 0.31), Doc("b3", 0.29)], T0),
              Retrieval("Which port does the relay use?", [Doc("k1", 0.7)], T0 + 60 * 10**9)]


def test_spans_exported_twice_are_one_question_each_and_their_context_never_a_question(tmp_path):
    # the SDK's spans: each RETRIEVER inside a CHAIN, plus a RERANKER and an LLM span of the same service
    finished = spans(RETRIEVALS, other_kinds=["RERANKER", "LLM"])
    kinds = [s.attributes.get("openinference.span.kind") for s in finished]
    assert sorted(kinds) == ["CHAIN", "CHAIN", "LLM", "RERANKER", "RETRIEVER", "RETRIEVER"]
    # the exporter sent the whole batch, timed out, sent it again; the next file repeats the second half again
    write_export(tmp_path / "traces.json", [finished, finished])
    write_export(tmp_path / "traces.json.1", [finished[len(finished) // 2:]])
    reader = TrafficReader([tmp_path])
    got = [q for _, q in reader]
    assert [q.query for q in got] == [r.question for r in RETRIEVALS]  # two questions, once each
    again = sum(1 for s in finished[len(finished) // 2:] if s.attributes.get("openinference.span.kind") == "RETRIEVER")
    assert reader.duplicates == 2 + again
    # the context spans are counted by kind as exported, never read as questions
    assert set(reader.skipped) == {"CHAIN", "RERANKER", "LLM"}
    t = read_traffic([tmp_path], "similarity")
    assert len(t) == 2 and t.duplicates == 2 + again
    text = build_traffic_report(t, 0.5).render_text()
    assert f"{2 + again} retrieval spans were exported more than once (the same traceId and spanId" in text
    assert build_traffic_report(t, 0.5).to_json()["duplicate_spans"]["count"] == 2 + again


# a few trace and span ids, so that pairs repeat: the same span id in two traces, the same trace with two spans
_TRACES = ["5b8efff798038103d269b633813fc60c", "5b8efff798038103d269b633813fc60d", "05b8efff798038103d269b633813fc60",
           "ffffffffffffffffffffffffffffffff", "00000000000000000000000000000001"]
_SPANS = ["eee19b7ec3c1b174", "eee19b7ec3c1b175", "ffffffffffffffff", "0000000000000001", "0eee19b7ec3c1b17"]


@given(lines=st.lists(st.lists(st.tuples(st.sampled_from(_TRACES), st.sampled_from(_SPANS)), max_size=12),
                      max_size=30))
def test_the_copies_found_are_those_a_set_of_pairs_finds(lines):
    """SeenSpans (sorted runs, merged as they grow) against a Python set of (traceId, spanId), line after line."""
    seen, pairs = SeenSpans(), set()
    for line in lines:
        rows = [TrafficRow(sid, None, 0, (), tid) for tid, sid in line]
        want = []
        for pair in line:
            want.append(pair not in pairs)
            pairs.add(pair)
        assert (seen.add(rows).tolist() if rows else []) == want
    assert len(seen) == len(pairs)
