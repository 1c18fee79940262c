"""``report --traffic TRACES --stages``: the generated trace set of test_stages through the CLI, with the
judgments of --queries/--qrels, of --ground-truth, and of --run (whose run is then the deeper run)."""

from __future__ import annotations

import json

import pytest
from test_stages import QRELS, QUESTIONS, v1_turns, v2_turns

from audit.cli import main
from tests.otlpmaker import trace_spans, write_export


@pytest.fixture()
def files(tmp_path):
    export = write_export(tmp_path / "traces.jsonl",
                          [trace_spans(v1_turns(), version="1.0"), trace_spans(v2_turns(), version="2.0")])
    queries = tmp_path / "queries.tsv"
    queries.write_text("".join(f"{q}\t{t}\n" for q, t in QUESTIONS.items()), encoding="utf-8")
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"{q} 0 {c} {g}\n" for q, j in QRELS.judgments.items() for c, g in j.items()),
                     encoding="utf-8")
    return tmp_path, export, queries, qrels


def test_stages_with_queries_and_qrels(files, capsys):
    tmp, export, queries, qrels = files
    out = tmp / "out.json"
    assert main(["report", "--traffic", str(export), "--queries", str(queries), "--qrels", str(qrels), "--stages",
                 "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "Where the answer was lost" in text and "10 with a judgment" in text
    js = json.loads(out.read_text())
    # the same hand-placed losses as test_stages.test_counts_per_stage_and_version
    assert {k: v["n"] for k, v in js["stages"]["counts"].items()} == {
        "not_retrieved": 3, "dropped_by_reranker": 2, "not_in_prompt": 1, "truncated": 1, "kept": 1,
        "reached_prompt": 2}
    assert js["stages"]["by_version"]["1.0"]["counts"]["truncated"]["questions"] == ["q5"]
    assert js["traffic"]["read"] == 11  # the traffic section is still there


def test_stages_with_ground_truth(files, capsys):
    tmp, export, *_ = files
    gt = tmp / "gt.jsonl"
    gt.write_text(json.dumps({"id": "n4", "needle": "the r4 procedure is described here in full",
                              "questions": [QUESTIONS["q4"]]}) + "\n", encoding="utf-8")
    out = tmp / "out.json"
    assert main(["report", "--traffic", str(export), "--ground-truth", str(gt), "--stages", "--json", str(out)]) == 0
    counts = json.loads(out.read_text())["stages"]["counts"]
    assert counts["reached_prompt"]["questions"] == ["n4"] and counts["dropped_by_reranker"]["questions"] == ["n4"]


def test_stages_need_judgments(files, capsys):
    _, export, queries, _ = files
    assert main(["report", "--traffic", str(export), "--stages"]) == 2
    assert "--stages needs judgments" in capsys.readouterr().err
    assert main(["report", "--traffic", str(export), "--queries", str(queries)]) == 2
    assert "judgments for traced questions go with --stages" in capsys.readouterr().err


def test_stages_with_a_deeper_run(files, capsys):
    tmp, export, queries, qrels = files
    # a run of the same questions, 4 deep: q2's r2 at rank 4, below the one document v2.0 traced for q2
    run = tmp / "deep.run"
    rows = {"q1": ["r1", "x1"], "q2": ["x1", "x2", "x3", "r2"], "q3": ["x2"], "q4": ["r4"], "q5": ["r5"],
            "q6": ["r6"], "q7": ["x1"]}
    run.write_text("".join(f"{q} Q0 {c} {i + 1} {1 - i / 10} deep\n" for q, cs in rows.items()
                           for i, c in enumerate(cs)), encoding="utf-8")
    out, html = tmp / "out.json", tmp / "record.html"
    assert main(["report", "--traffic", str(export), "--run", f"deep={run}", "--queries", str(queries), "--qrels",
                 str(qrels), "--stages", "--json", str(out), "--html", str(html)]) == 0
    js = json.loads(out.read_text())
    assert js["stages"]["deeper_run"] == "deep"
    assert js["stages"]["counts"]["cut_by_k"]["questions"] == ["q2"]
    assert js["stages"]["counts"]["not_retrieved"]["n"] == 2 and "results" in js
    # the decision record carries the same figures as the JSON
    page = html.read_text(encoding="utf-8")
    for stage, c in js["stages"]["counts"].items():
        assert f'data-figure="stages:{stage}" data-value="{c["n"]}"' in page
    assert 'data-figure="stages:2.0:cut_by_k" data-run="2.0" data-value="1"' in page


def _counts(js) -> dict:
    return {k: (v["n"], v["questions"]) for k, v in js["stages"]["counts"].items()}


def test_stages_on_a_version_of_the_judging_store(files, capsys):
    # the judging queue's store as the judgment source: its head version alone (matched by id and, with
    # --queries, by text), then laid over --qrels; a version that judges q5's chunk not relevant un-judges q5
    tmp, export, queries, qrels = files
    store = tmp / "judgments.sqlite"
    assert main(["judge", "import", str(qrels), "--format", "trec", "--who", "qa", "--judgments", str(store)]) == 0
    base, on_v1 = tmp / "base.json", tmp / "v1.json"
    assert main(["report", "--traffic", str(export), "--queries", str(queries), "--qrels", str(qrels), "--stages",
                 "--json", str(base)]) == 0
    assert main(["report", "--traffic", str(export), "--queries", str(queries), "--judgments-version", "head",
                 "--judgments", str(store), "--stages", "--json", str(on_v1)]) == 0
    capsys.readouterr()
    b, v1 = json.loads(base.read_text()), json.loads(on_v1.read_text())
    assert _counts(v1) == _counts(b)  # v1 holds exactly qrels.txt's labels
    assert v1["stages"]["judgments"].startswith("judgments version v1 ")
    (tmp / "q5.qrels").write_text("q5 0 r5 0\n", encoding="utf-8")
    assert main(["judge", "import", str(tmp / "q5.qrels"), "--format", "trec", "--who", "qa", "--judgments",
                 str(store)]) == 0
    on_v2 = tmp / "v2.json"
    assert main(["report", "--traffic", str(export), "--queries", str(queries), "--qrels", str(qrels),
                 "--judgments-version", "head", "--judgments", str(store), "--stages", "--json", str(on_v2)]) == 0
    assert "9 with a judgment" in capsys.readouterr().out  # 10 judged traced questions less q5's
    # by hand from the counts on qrels.txt alone: every stage that listed q5 loses it, the others are unchanged
    want = {k: (n - ("q5" in qs), [q for q in qs if q != "q5"]) for k, (n, qs) in _counts(b).items()}
    assert want.pop("truncated") == (0, [])  # "truncated" is written only when seen
    assert _counts(json.loads(on_v2.read_text())) == want
    assert "with judgments version v2 " in json.loads(on_v2.read_text())["stages"]["judgments"]


def test_a_judgments_version_is_named_or_refused(files, capsys):
    tmp, export, queries, qrels = files
    store = tmp / "judgments.sqlite"
    assert main(["report", "--traffic", str(export), "--judgments-version", "head", "--judgments", str(store),
                 "--stages"]) == 2
    assert "no judgments version yet" in capsys.readouterr().err
    assert main(["judge", "import", str(qrels), "--format", "trec", "--who", "qa", "--judgments", str(store)]) == 0
    assert main(["report", "--traffic", str(export), "--judgments-version", "v9", "--judgments", str(store),
                 "--stages"]) == 2
    assert "no judgments version 'v9'" in capsys.readouterr().err
    assert main(["report", "--traffic", str(export), "--queries", str(queries), "--qrels", str(qrels),
                 "--judgments-version", "head"]) == 2
    assert "--judgments-version judges traced questions: it goes with --traffic … --stages" in capsys.readouterr().err


def test_a_version_is_laid_over_the_runs_qrels(files, capsys):
    # as test_stages_with_a_deeper_run, with a version that judges q2's r2 not relevant: q2, the one question
    # cut by the retriever's k, is no longer judged, so no stage lists it
    tmp, export, queries, qrels = files
    run = tmp / "deep.run"
    rows = {"q1": ["r1", "x1"], "q2": ["x1", "x2", "x3", "r2"], "q3": ["x2"], "q4": ["r4"], "q5": ["r5"],
            "q6": ["r6"], "q7": ["x1"]}
    run.write_text("".join(f"{q} Q0 {c} {i + 1} {1 - i / 10} deep\n" for q, cs in rows.items()
                           for i, c in enumerate(cs)), encoding="utf-8")
    store = tmp / "judgments.sqlite"
    (tmp / "q2.qrels").write_text("q2 0 r2 0\n", encoding="utf-8")
    assert main(["judge", "import", str(tmp / "q2.qrels"), "--format", "trec", "--who", "qa", "--judgments",
                 str(store)]) == 0
    out = tmp / "out.json"
    assert main(["report", "--traffic", str(export), "--run", f"deep={run}", "--queries", str(queries), "--qrels",
                 str(qrels), "--judgments-version", "v1", "--judgments", str(store), "--stages", "--json",
                 str(out)]) == 0
    js = json.loads(out.read_text())["stages"]
    assert "q2" not in {q for c in js["counts"].values() for q in c["questions"]}
    assert js["counts"].get("cut_by_k", {"n": 0})["n"] == 0  # written only when seen
    assert " with judgments version v1 " in js["judgments"]
