"""``report --run``: the CLI audits a team's own runs, judgments and chunks (data/example)."""

from __future__ import annotations

import json

import pytest
from conftest import ROOT

from audit.cli import main

EX = ROOT / "data" / "example"


def example_args(*extra: str) -> list[str]:
    return ["report", "--queries", str(EX / "queries.tsv"), "--qrels", str(EX / "qrels.trec"),
            "--run", f"before={EX / 'before.trec'}", "--run", f"after={EX / 'after.trec'}",
            "--score", "before=cosine-distance", "--chunks", str(EX / "chunks.jsonl"), "--corpus", str(EX / "docs"),
            "--ood-queries", str(EX / "ood-queries.tsv"), "--ood-run", f"before={EX / 'ood-before.trec'}",
            "--ood-run", f"after={EX / 'ood-after.trec'}", *extra]


def test_report_on_the_example_writes_strict_json(tmp_path, capsys):
    out = tmp_path / "r.json"
    assert main(example_args("--json", str(out))) == 0
    text = capsys.readouterr().out
    assert "Success@k (the specification's recall@k) with Wilson 95% intervals" in text and "Chunk offsets: 2 of 12 chunks differ" in text
    js = json.loads(out.read_text(), parse_constant=lambda c: pytest.fail(f"non-strict JSON constant {c}"))
    rows = {r["name"]: r for r in js["results"]}
    # data/example/README.md: Success@1 before 3/9, after 7/9; RR 0.4667 and 0.8333
    assert rows["before"]["n_queries"] == rows["after"]["n_queries"] == 9
    assert rows["before"]["Success@1"] == pytest.approx(3 / 9) and rows["after"]["Success@1"] == pytest.approx(7 / 9)
    assert rows["before"]["RR"] == pytest.approx(0.4667, abs=1e-4) and rows["after"]["RR"] == pytest.approx(0.8333, abs=1e-4)
    assert rows["after"]["Success@1_low"] == pytest.approx(0.453, abs=1e-3)  # Wilson 7/9
    assert "R@10" in rows["after"] and "nDCG" in rows["after"] and "R@10_low" not in rows["after"]
    assert [e["chunk_id"] for e in js["citations"]["errors"]] == ["b2", "k4"]
    k1 = next(c for c in js["comparisons"] if c["k"] == 1)
    assert (k1["a"], k1["b"], k1["wins"], k1["losses"], k1["p"]) == ("before", "after", 0, 4, 0.125)
    after = js["threshold"]["after"]
    # similarity run: the answers' scores are 0.82 0.88 0.84 0.91 0.86 0.74 0.67 0.81 (q9 has none); the
    # out-of-domain best is 0.55. Keeping scores > t for t in [0.55, 0.67) answers all eight and bluffs
    # never; t in [0.67, 0.69) answers q7 without its answer (it keeps 0.69, a wrong chunk), a dominated
    # outcome. The balanced cut is the middle of [0.55, 0.67): 0.61.
    assert after["keep"] == "above" and after["cut"] == 0.61
    assert after["separation"] == {"worst_in_domain": 0.67, "best_out_of_domain": 0.55, "overlap": False}
    assert (after["at_cut"]["answered"], after["at_cut"]["answered without"], after["at_cut"]["bluff"]) == (8, 0, 0)
    assert [r for r in after["sweep"] if r["threshold"] == 0.61] == [after["at_cut"]]  # its row in the sweep
    assert js["threshold"]["before"]["keep"] == "below"
    assert {f["role"] for f in js["provenance"]["files"]} >= {"queries", "qrels", "chunks", "run before"}


def test_a_given_cut_is_in_the_runs_own_units(tmp_path):
    out = tmp_path / "r.json"
    assert main(example_args("--threshold", "0.5", "--json", str(out))) == 0
    after = json.loads(out.read_text())["threshold"]["after"]
    # keep > 0.5: o3 (0.55) keeps a chunk: one bluff; every judged query keeps its answer
    assert after["given"] and after["cut"] == 0.5 and after["at_cut"]["bluff"] == 1


def test_fail_under_uses_ir_measures_names(capsys):
    assert main(example_args("--fail-under", "Success@1=0.5")) == 1
    assert "gate failed: before Success@1 = 0.333 < 0.5" in capsys.readouterr().err
    # one set of names for every source: the specification's recall@8 is Success@8, mrr is RR@20
    # (before: 6 of 9 within 8, RR@20 (1 + 1/2 + 1/5 + 1/2 + 1 + 1) / 9 = 0.467)
    assert main(example_args("--fail-under", "recall@8=0.5")) == 0
    capsys.readouterr()
    assert main(example_args("--fail-under", "recall@8=0.7")) == 1
    assert "gate failed: before recall@8 = 0.667 < 0.7" in capsys.readouterr().err
    assert main(example_args("--fail-under", "mrr=0.5")) == 1
    assert "gate failed: before mrr = 0.467 < 0.5" in capsys.readouterr().err
    assert main(example_args("--fail-under", "Success@8=0.7")) == 1  # the same gate under its ir_measures name
    assert "gate failed: before Success@8 = 0.667 < 0.7" in capsys.readouterr().err


@pytest.mark.parametrize("extra, message", [
    (["--strategies", "A"], "--strategies is for the built-in strategies"),
    (["--db", "x.sqlite"], "--db is for the built-in strategies"),
    (["--score", "nobody=similarity"], "--score names 'nobody', which is not a --run"),
    (["--score", "after=cosine"], "'cosine' is not one of similarity, cosine-distance, l2, ip"),
    (["--ground-truth", str(EX / "qrels.trec")], "give exactly one of --qrels FILE and --ground-truth FILE"),
])
def test_bad_options_exit_2_with_one_line(extra, message, capsys):
    assert main(example_args(*extra)) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1


def test_a_broken_run_line_names_file_and_line(tmp_path, capsys):
    bad = tmp_path / "bad.trec"
    bad.write_text("q1 Q0 b2 1 0.9 x\nq1 Q0 b3 two 0.8 x\n", encoding="utf-8")
    args = ["report", "--queries", str(EX / "queries.tsv"), "--qrels", str(EX / "qrels.trec"), "--run", f"x={bad}"]
    assert main(args) == 2
    assert f"{bad}:2:" in capsys.readouterr().err


def test_own_options_without_run_are_refused(capsys):
    assert main(["report", "--queries", str(EX / "queries.tsv")]) == 2
    assert "give --run NAME=FILE too" in capsys.readouterr().err


def test_no_prefix_abbreviations(capsys):
    with pytest.raises(SystemExit) as e:
        main(["report", "--ground", "x.jsonl"])  # --ground-truth must be spelled out
    assert e.value.code == 2
