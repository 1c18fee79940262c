"""Traffic over many files (a day's shards): each shard read on its own, merged in shard order, the same table as
one process reading the files in that order (audit/traffic/shards.py).

The shards are written here: OpenInference spans from the OpenTelemetry SDK (tests/otlpmaker.py), a query log, a
gzip file cut short, an empty file. What crosses shards is put there on purpose: a batch exported twice into two
shards (an exporter's retry across a rotation), a batch written twice in one shard, a refused span (a cosine
distance of 2.5) and its copy, a wrong returned content and its copy, 25 systems over three files. The reference
is the one process (``read_traffic`` over the same files); the counts are also worked out by hand from what was
written. The Ray tests (marker ``ray``) start a local Ray with 2 CPUs through ``read_shards`` and check it is
stopped; locally they are skipped when Ray is not installed, under ``CI=true`` that is a failure.
"""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import audit.traffic.read as read_mod
import audit.traffic.shards as shards_mod
from audit.cli import main
from audit.report.traffic import build_traffic_report
from audit.traffic.read import list_traffic
from audit.traffic.records import parse_time
from audit.traffic.shards import ShardParse, merge_shards, parse_shard, read_shards
from audit.traffic.table import read_traffic
from otlpmaker import Doc, Retrieval, request_dict, spans

CI = os.environ.get("CI", "").lower() == "true"
T0 = parse_time("2024-05-01T10:00:00Z")
MIN = 60 * 10**9
TEXT = "# Backups\n\nA snapshot is taken every six hours.\n"
START = TEXT.index("A snapshot")
END = START + len("A snapshot is taken every six hours.")
GOOD = Doc("b1", 0.2, TEXT[START:END], {"doc_id": "ops/backups.md", "start": START, "end": END})
STALE = Doc("b2", 0.3, TEXT[START:END].replace("six", "ten"), {"doc_id": "ops/backups.md", "start": START, "end": END})
NAMED = Doc("b3", 0.4, None, {"doc_id": "ops/backups.md"})  # names a document, returns no content: unchecked


def _line(finished) -> str:
    return json.dumps(request_dict(finished)) + "\n"


def _batch(service: str, scores: list[list[float]], t: int, docs=None, other_kinds=()) -> list:
    rs = [Retrieval(f"{service} question {i}", (docs or {}).get(i, [Doc(f"c{j}", s) for j, s in enumerate(row)]),
                    t + i * MIN) for i, row in enumerate(scores)]
    return spans(rs, service=service, other_kinds=other_kinds)


@pytest.fixture(scope="module")
def day(tmp_path_factory):
    """A day of traffic in 5 shards and a file that is not traffic; returns the folder and the corpus."""
    from audit.ingest import load_corpus

    root = tmp_path_factory.mktemp("day")
    docs = root / "docs" / "ops"
    docs.mkdir(parents=True)
    (docs / "backups.md").write_text(TEXT, encoding="utf-8")
    corpus = load_corpus(str(root / "docs"))
    d = root / "shards"
    d.mkdir()
    a = _batch("rag", [[0.2, 0.3], [0.3, 0.2], []], T0, {0: [GOOD, NAMED], 1: [STALE, GOOD]}, other_kinds=["LLM"])
    b = _batch("rag", [[2.5, 0.1], [0.45]], T0 + 10 * MIN)  # the first: a cosine distance of 2.5, refused
    c = _batch("search", [[0.6], [0.05, 0.7]], T0 + 20 * MIN, {0: [STALE]})
    g = _batch("gz", [[0.33]], T0 + 30 * MIN)
    lost = _batch("gz", [[0.9]], T0 + 31 * MIN)
    (d / "traces-00.json").write_text(_line(a) + _line(b), encoding="utf-8")
    # the retry of a and b landed in the next file; c was written twice in it; line 2 is cut off
    (d / "traces-01.json").write_text(_line(a) + '{"resourceSpans": [\n' + _line(b) + _line(c) + _line(c),
                                      encoding="utf-8")
    whole = gzip.compress(_line(g).encode(), mtime=0)
    cut = gzip.compress(_line(lost).encode(), mtime=0)
    (d / "traces-02.json.gz").write_bytes(whole + cut[: len(cut) // 2])  # the second member ends early
    log = [{"query_id": f"s{i}", "time": "2024-05-01T12:00:00Z", "system": f"host-{i:02d}",
            "results": [{"chunk_id": "k", "score": 0.1 + i / 100}]} for i in range(25)]
    log.insert(3, {"query_id": "s3", "time": "2024-05-01T12:01:00Z", "system": "host-03",  # the same id: a log
                   "results": [{"chunk_id": "k", "score": 3.0}]})  # has no copies; refused (distance 3.0)
    log.insert(7, {"query_id": "no-time", "results": []})  # a problem of the log
    (d / "traces-03.jsonl").write_text("".join(json.dumps(r) + "\n" for r in log), encoding="utf-8")
    (d / "traces-04.json").write_text("", encoding="utf-8")
    (d / "notes.txt").write_text("not traffic\n", encoding="utf-8")
    return d, corpus


def _assert_same(got, want) -> None:
    """Two TrafficTables equal field by field (arrays by value and dtype)."""
    for name in want.__dataclass_fields__:
        x, y = getattr(got, name), getattr(want, name)
        if isinstance(y, np.ndarray):
            assert x.dtype == y.dtype and x.shape == y.shape and np.array_equal(x, y), name
        else:
            assert x == y, name


def _merged(paths, score_kind, corpus=None):
    files, skipped = list_traffic(paths)
    return merge_shards(files, skipped, (parse_shard(f, i, score_kind, corpus) for i, f in enumerate(files)),
                        score_kind, corpus)


def test_the_shards_merged_are_what_one_process_reads(day):
    d, corpus = day
    want = read_traffic([d], "cosine-distance", corpus)
    got = _merged([d], "cosine-distance", corpus)
    _assert_same(got, want)
    names = [Path(f).name for f in want.files]
    assert names == ["traces-00.json", "traces-01.json", "traces-02.json.gz", "traces-03.jsonl", "traces-04.json"]
    # by hand: a (3) + b (1: its first is refused) + c (2) + the gzip's first member (1) + the log (25 + the
    # second s3 refused, and no-time a problem: 25)
    assert len(got) == 3 + 1 + 2 + 1 + 25
    # copies: a's 3 and b's 2 in traces-01 (b's refused span among them: a copy, not a problem), c's 2 rewritten
    assert got.duplicates == 3 + 2 + 2
    assert [e.split(" span ")[0] for e in got.duplicate_examples] == ["traces-01.json:1"] * 3
    where = [f"{Path(p.file).name}:{p.line}" for p in got.problems]
    assert where == ["traces-00.json:2", "traces-01.json:2", "traces-02.json.gz:1", "traces-03.jsonl:4",
                     "traces-03.jsonl:8", "traces-04.json:0"]
    assert "cosine distance 2.5 outside [0, 2]" in str(got.problems[0])
    assert "ends early after line 1" in got.problems[2].reason
    assert got.n_problems == 6
    # the stale content counted once for a (its copy in traces-01 is not a question) and once for c
    c = got.content
    assert (c.checked, c.distinct, c.failed, c.unchecked) == (4, 2, 2, 1)
    # the spans around the copies are counted too, as one process counts them: a, b; a, b, c, c; g
    assert got.skipped == {"CHAIN": 3 + 2 + 3 + 2 + 2 + 2 + 1, "LLM": 2}
    # 20 names kept (rag, search, gz and the first 17 hosts), the last 8 hosts as "…"
    assert len(got.systems) == 21 and got.systems["…"] == 8 and got.systems["rag"] == 4
    assert [Path(s.path).name for s in got.skipped_files] == ["notes.txt"]


def test_a_record_read_again_is_the_one_process_record(day):
    d, _ = day
    want = read_traffic([d], "similarity")
    got = _merged([d], "similarity")
    _assert_same(got, want)
    rows = range(len(got))
    assert got.records(rows) == want.records(rows)  # the same locators: the same TrafficQuery list, text included
    assert all(r is not None for r in got.records(rows))


def test_the_report_is_the_one_process_report(day):
    d, corpus = day
    want = build_traffic_report(read_traffic([d], "cosine-distance", corpus), 0.35, "given", show_questions=True)
    got = build_traffic_report(_merged([d], "cosine-distance", corpus), 0.35, "given", show_questions=True)
    assert json.dumps(got.to_json()) == json.dumps(want.to_json())
    assert got.render_text() == want.render_text()


def test_the_problems_kept_are_the_first_ones_whichever_shard_they_are_in(day, monkeypatch):
    d, corpus = day
    monkeypatch.setattr(read_mod, "MAX_PROBLEMS", 3)  # the reader of each shard and of the one process
    monkeypatch.setattr(shards_mod, "MAX_PROBLEMS", 3)  # the merge
    want = read_traffic([d], "cosine-distance", corpus)
    got = _merged([d], "cosine-distance", corpus)
    _assert_same(got, want)
    assert len(got.problems) == 3 and got.n_problems == 6


def test_a_pattern_names_the_shards_in_name_order(day):
    d, _ = day
    files, _ = list_traffic([str(d / "traces-0*.json")])
    assert [f.name for f in files] == ["traces-00.json", "traces-01.json", "traces-04.json"]
    got = read_shards([str(d / "traces-*")], "similarity")
    assert got.engine == "local" and got.shards == 5 and got.ray_start_s == 0.0
    _assert_same(got.table, read_traffic(sorted(d.glob("traces-*")), "similarity"))
    with pytest.raises(ValueError, match=r"traces-9\*: no traffic file matches this pattern"):
        read_shards([str(d / "traces-9*")], "similarity")


def test_a_pattern_typed_in_the_dashboard_goes_through_the_allowed_roots(day):
    from audit.config import PathRefused, resolve_user_path

    d, _ = day
    typed = resolve_user_path("shards/traces-0[0-1].json", "traffic file", cwd=d.parent)  # as ui/paths.py resolves
    assert [Path(f).name for f in read_traffic([typed], "similarity").files] == ["traces-00.json", "traces-01.json"]
    with pytest.raises(PathRefused, match="outside the folders this dashboard may read"):
        resolve_user_path("shards/*/../../../*.json", "traffic file", cwd=d.parent, env={})


def test_a_parse_travels_as_bytes_and_the_merge_refuses_a_shard_out_of_order(day):
    d, _ = day
    files, skipped = list_traffic([d])
    parses = [parse_shard(f, i, "similarity") for i, f in enumerate(files)]
    back = ShardParse.from_bytes(parses[1].to_bytes())
    assert len(back) == len(parses[1]) == 3 + 2 + 2 + 2 and back.problems == parses[1].problems
    with pytest.raises(ValueError, match="came where shard 0 was expected"):
        merge_shards(files, skipped, parses[1:], "similarity")
    with pytest.raises(ValueError, match="4 of 5 shards were read"):
        merge_shards(files, skipped, parses[:4], "similarity")


def test_a_shard_a_worker_cannot_see_is_its_problem(tmp_path):
    p = parse_shard(tmp_path / "elsewhere.json", 0, "similarity")
    assert len(p) == 0 and p.n_problems == 1
    assert "every Ray worker must see the traffic files" in p.problems[0].reason


# --------------------------------------------------------------------------- any split of the same lines


@pytest.fixture(scope="module")
def lines():
    """Eight request lines (two services, a refused span, a question without text), made once by the SDK."""
    out = []
    for k in range(8):
        b = _batch("rag" if k % 2 else "search", [[0.1 * k, 0.5], [2.2 if k == 3 else 0.3]], T0 + k * MIN)
        out.append(_line(b))
    return out


@pytest.mark.slow
@settings(max_examples=40)
@given(split=st.lists(st.lists(st.integers(0, 7), max_size=6), min_size=1, max_size=4))
def test_any_split_into_shards_with_copies_anywhere_merges_to_the_one_process_table(tmp_path_factory, lines, split):
    d = tmp_path_factory.mktemp("split")
    for i, chosen in enumerate(split):  # a line chosen twice, in one shard or two, is an exporter's retry
        (d / f"s{i:02d}.json").write_text("".join(lines[k] for k in chosen), encoding="utf-8")
    _assert_same(_merged([d], "cosine-distance"), read_traffic([d], "cosine-distance"))


# --------------------------------------------------------------------------- the command line


def _cli(capsys, *args) -> tuple[int, str, str]:
    code = main(["report", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_the_cli_reads_a_pattern_and_refuses_ray_options_alone(day, capsys, tmp_path):
    d, _ = day
    code, text, _ = _cli(capsys, "--traffic", str(d / "traces-*"), "--traffic-score", "cosine-distance",
                         "--threshold", "0.35")
    assert code == 0 and "traces-03.jsonl" in text
    code, _, err = _cli(capsys, "--traffic", str(d), "--ray-address", "auto")
    assert code == 2 and "--ray-address goes with --traffic-engine ray" in err


def test_without_ray_the_ray_engine_says_how_to_install_it(day, capsys, monkeypatch):
    import builtins

    real = builtins.__import__

    def no_ray(name, *args, **kwargs):
        if name == "ray" or name.startswith("ray."):
            raise ImportError(f"No module named {name!r}")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_ray)
    d, _ = day
    code, _, err = _cli(capsys, "--traffic", str(d), "--traffic-engine", "ray")
    assert code == 2 and "pip install -r requirements-scale.txt" in err


# --------------------------------------------------------------------------- on Ray


def _need_ray():
    try:
        import ray
        import ray.data  # noqa: F401
    except ImportError as e:
        if CI:
            pytest.fail(f"ray is required under CI=true (requirements-scale.txt): {e}", pytrace=False)
        pytest.skip(f"ray not installed (requirements-scale.txt): {e}")
    if ray.is_initialized():
        pytest.skip("a Ray is already running in this process: this test starts and stops its own")
    return ray


@pytest.mark.ray
def test_on_ray_the_shards_give_the_one_process_table_and_report(day, capsys, tmp_path):
    ray = _need_ray()
    d, corpus = day
    got = read_shards([d], "cosine-distance", corpus, engine="ray", num_cpus=2)
    assert not ray.is_initialized()  # started for the read, stopped after it
    assert got.engine == "ray" and got.shards == 5 and got.ray_start_s > 0 and got.wall_s > got.ray_start_s
    want = read_traffic([d], "cosine-distance", corpus)
    _assert_same(got.table, want)  # the broken line, the cut gzip and the empty shard lose nothing of the others
    assert got.table.records(range(len(want))) == want.records(range(len(want)))
    # the command line: the same report, what Ray cost on stderr
    args = ["--traffic", str(d), "--traffic-score", "cosine-distance", "--threshold", "0.35", "--corpus",
            str(d.parent / "docs")]
    code, local, _ = _cli(capsys, *args, "--json", str(tmp_path / "local.json"))
    assert code == 0
    code, on_ray, err = _cli(capsys, *args, "--traffic-engine", "ray", "--json", str(tmp_path / "ray.json"))
    assert code == 0 and on_ray == local
    assert (tmp_path / "ray.json").read_text() == (tmp_path / "local.json").read_text()
    assert "5 shards read on Ray in" in err and "starting Ray" in err
    assert not ray.is_initialized()
