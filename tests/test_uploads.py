"""Uploaded files (issue 24, item 7): every message names the uploaded file, never a folder of the server."""

from __future__ import annotations

import tempfile

import pytest
from conftest import ROOT

from audit.groundtruth import GroundTruthError, load_needles
from audit.sources.imported import InputFileError
from audit.uploads import load_uploaded_system, upload_name, upload_paths

EX = ROOT / "data" / "example"


def up(name: str) -> tuple[str, bytes]:
    return name, (EX / name).read_bytes()


def example_uploads(**override):
    kw = dict(queries=up("queries.tsv"), runs={"before": up("before.trec"), "after": up("after.trec")},
              scores={"before": "cosine-distance"}, qrels=up("qrels.trec"), ood_queries=up("ood-queries.tsv"),
              ood_runs={"before": up("ood-before.trec"), "after": up("ood-after.trec")})
    kw.update(override)
    return kw


def test_uploaded_example_loads_as_from_disk():
    s = load_uploaded_system(**example_uploads())
    qrels = s.judgments[""]
    assert [r.name for r in s.runs] == ["before", "after"] and len(qrels.query_ids) == 9
    assert [r.source for r in s.runs] == ["before.trec", "after.trec"] and qrels.source == "qrels.trec"
    assert s.has_out_of_domain("after")  # the out-of-domain run is merged into its run, its file named below
    assert {f["role"]: f["name"] for f in s.source.files}["out-of-domain run after"] == "ood-after.trec"
    assert {f["name"] for f in s.source.files} >= {"queries.tsv", "before.trec", "qrels.trec", "ood-after.trec"}
    assert tempfile.gettempdir() not in repr(s)  # no temporary path left anywhere in the system


def test_a_broken_run_upload_names_the_file_and_line_only():
    bad = b"q1 Q0 b3 1 0.31 before\nq1 Q0 b2 two 0.35 before\n"
    with pytest.raises(InputFileError) as e:
        load_uploaded_system(**example_uploads(runs={"before": ("before.trec", bad), "after": up("after.trec")}))
    msg = str(e.value)
    assert msg.startswith("before.trec:2: "), msg
    assert e.value.path == "before.trec" and e.value.line == 2  # the same error, its attributes renamed too
    assert tempfile.gettempdir() not in msg and "audit-upload-" not in msg


def test_a_folder_sent_with_the_name_is_dropped():
    assert upload_name("C:\\Users\\ana\\queries.tsv") == "queries.tsv"
    assert upload_name("../../etc/passwd") == "passwd" and upload_name("..") == upload_name("") == "upload"
    with pytest.raises(InputFileError) as e:
        load_uploaded_system(**example_uploads(queries=("team/q.tsv", b"q1\n")))
    assert str(e.value).startswith("q.tsv:1: ")


def test_any_reader_inside_the_block_names_the_upload():
    # the ground-truth reader raises GroundTruthError with the path in the message (FILE:LINE: reason)
    with pytest.raises(GroundTruthError) as e:
        with upload_paths({"gt": ("needles.jsonl", b'{"id": "n1", "needle": "x", "questions": []}\n')}) as p:
            assert p["gt"].name == "needles.jsonl" and p["gt"].read_bytes().startswith(b"{")
            load_needles(p["gt"])
    assert str(e.value).startswith("needles.jsonl:1: 'questions' must be"), str(e.value)
    # two uploads of one name do not collide, and the folder is gone afterwards
    with upload_paths({"a": ("r.trec", b"a"), "b": ("r.trec", b"b")}) as p:
        assert p["a"] != p["b"] and p["a"].read_bytes() == b"a" and p["b"].read_bytes() == b"b"
    assert not p["a"].exists() and not p["a"].parent.parent.exists()
