"""``judge`` end to end without the dashboard: two reviewers label an overlapping pool of data/example, κ and α
equal a hand computation, a disagreement is adjudicated, the new version moves the runs' figures and Hole@k
as counted by hand; and each sub-command's bad input is one line."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest

from conftest import ROOT
from test_judging_agreement import ordinal_alpha_by_hand

from audit.cli import main

EX = ROOT / "data" / "example"
RUNS = ["--queries", str(EX / "queries.tsv"), "--run", f"before={EX / 'before.trec'}", "--run",
        f"after={EX / 'after.trec'}", "--score", "before=cosine-distance"]

# The pool at depth 1 (every run's first chunk the judgments of data/example do not hold), by hand from the
# run files: before puts k1 first for q2, k2 for q3, l2 for q4, b4 for q5, k2 for q7; after's first chunks are
# judged but for q7 (k3). Two reviewers grade all six (overlap 1); they differ on q7/k3 alone.
ANA = {("q2", "k1"): 2, ("q3", "k2"): 1, ("q4", "l2"): 0, ("q5", "b4"): 0, ("q7", "k2"): 0, ("q7", "k3"): 1}
BEN = {**ANA, ("q7", "k3"): 3}


def judge(*args, home, capsys=None, stdin=None, monkeypatch=None) -> tuple[int, str]:
    if stdin is not None:
        monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    code = main(["judge", *args, "--judgments", str(home / "j.sqlite")])
    out = capsys.readouterr().out if capsys is not None else ""
    return code, out


def test_two_reviewers_agreement_adjudication_and_a_new_version(tmp_path, capsys, monkeypatch):
    j = dict(home=tmp_path, capsys=capsys)
    assert judge("import", str(EX / "qrels.trec"), "--format", "trec", "--who", "qa-lead", **j)[0] == 0
    code, out = judge("pool", *RUNS, "--depth", "1", "--reviewers", "ana,ben", "--overlap", "1",
                      "--out", str(tmp_path / "pool.jsonl"), **j)
    assert code == 0 and "6 unjudged chunks over 5 questions" in out and "6 items to two reviewers" in out
    items = [json.loads(x) for x in (tmp_path / "pool.jsonl").read_text().splitlines()]
    assert {(i["query_id"], i["chunk_id"]) for i in items} == set(ANA)
    assert all(i["reviewers"] == ["ana", "ben"] or i["reviewers"] == ["ben", "ana"] for i in items)
    # ana labels one item at a time on the keyboard (a wrong key is asked again); ben from a file
    keys = "\n".join(str(ANA[(i["query_id"], i["chunk_id"])]) for i in items)
    code, out = judge("label", "--who", "ana", "--items", str(tmp_path / "pool.jsonl"), "--chunks",
                      str(EX / "chunks.jsonl"), home=tmp_path, capsys=capsys, stdin="x\n" + keys + "\n",
                      monkeypatch=monkeypatch)
    assert code == 0 and "6 labels by ana" in out and "type one of 0/1/2/3" in out and "#char=" in out
    (tmp_path / "ben.tsv").write_text("".join(f"{q} {c} {g}\n" for (q, c), g in BEN.items()))
    assert judge("label", "--who", "ben", "--from", str(tmp_path / "ben.tsv"), **j)[0] == 0

    # agreement from the stored labels: κ by hand. Six items, agree on five (p_o = 5/6); ana's grades
    # 0,0,0,1,1,2 and ben's 0,0,0,1,2,3 give p_e = (3·3 + 2·1 + 1·1 + 0·1) / 36 = 1/3 → κ = (5/6 − 1/3)/(2/3) = 0.75
    code, out = judge("agreement", "--seed", "5", "--n-boot", "200", "--json", str(tmp_path / "ag.json"), **j)
    ag = json.loads((tmp_path / "ag.json").read_text())
    assert code == 0 and ag["kappa"]["value"] == pytest.approx(0.75) and ag["seed"] == 5
    order = sorted(ANA)
    alpha = ordinal_alpha_by_hand(np.array([[ANA[k] for k in order], [BEN[k] for k in order]], dtype=float))
    assert ag["alpha"]["value"] == pytest.approx(alpha, abs=1e-12)
    assert ag["kappa"]["low"] <= 0.75 <= ag["kappa"]["high"] and ag["alpha"]["n_boot"] == 200
    assert ag["disagreements"] == [{"item": ["", "q7", "k3"], "grades": {"ana": 1, "ben": 3}}]
    assert "1 disagreement to adjudicate" in out

    # the same agreement from each reviewer's qrels files (the issue's `judge agreement QRELS_A QRELS_B`)
    for name, g in (("ana", ANA), ("ben", BEN)):
        (tmp_path / f"{name}.qrels").write_text("".join(f"{q} 0 {c} {v}\n" for (q, c), v in g.items()))
    code, _ = judge("agreement", str(tmp_path / "ana.qrels"), str(tmp_path / "ben.qrels"), "--seed", "5",
                    "--n-boot", "200", "--json", str(tmp_path / "ag2.json"), **j)
    ag2 = json.loads((tmp_path / "ag2.json").read_text())
    assert ag2["kappa"]["value"] == ag["kappa"]["value"] and ag2["alpha"]["value"] == ag["alpha"]["value"]
    assert ag2["kappa"]["reviewers"] == [str(tmp_path / "ana.qrels"), str(tmp_path / "ben.qrels")]

    # saving before adjudication leaves the disputed item out and says so; adjudication settles it (2)
    code, out = judge("save", "--who", "qa-lead", **j)
    assert code == 0 and "1 disagreements wait" in out and "5 added" in out
    assert judge("adjudicate", "q7", "k3", "2", "--who", "qa-lead", **j)[0] == 0
    code, out = judge("save", "--who", "qa-lead", "--note", "adjudicated", **j)
    assert code == 0 and "1 added, 0 changed" in out
    code, out = judge("versions", "--json", str(tmp_path / "v.json"), **j)
    vs = json.loads((tmp_path / "v.json").read_text())
    assert [v["id"] for v in vs] == [1, 2, 3] and [v["parent"] for v in vs] == [None, 1, 2]
    assert [v["n_labels"] for v in vs] == [14, 19, 20]

    # v1 → head: before's Success@1 3/9 → 5/9 (k1 and k2 judged relevant); after's 7/9 → 8/9 (k3 adjudicated 2)
    code, out = judge("diff", "v1", "head", *RUNS, "--measure", "Success@1", "--json", str(tmp_path / "d.json"), **j)
    d = json.loads((tmp_path / "d.json").read_text())
    runs = {r["run"]: r for r in d["runs"]}
    assert (d["added"], d["changed"], d["removed"]) == (6, 0, 0)
    assert runs["before"]["before"] == pytest.approx(3 / 9) and runs["before"]["after"] == pytest.approx(5 / 9)
    assert runs["after"]["before"] == pytest.approx(7 / 9) and runs["after"]["after"] == pytest.approx(8 / 9)
    assert "Success@1 of before 0.333 → 0.556 because 2 holes were judged relevant and 3 holes were judged not " \
           "relevant" in out
    # Hole@1 by hand: each run's rank-1 chunk was a hole on the questions the pool lists for it (before 5 of 9,
    # after 1 of 9: q7); every one is judged now → 0
    code, out = judge("diff", "v1", "head", *RUNS, "--measure", "Hole@1", "--json", str(tmp_path / "h.json"), **j)
    h = {r["run"]: r for r in json.loads((tmp_path / "h.json").read_text())["runs"]}
    n_before = sum(1 for i in items if "before" in i["runs"])
    n_after = sum(1 for i in items if "after" in i["runs"])
    assert (n_before, n_after) == (5, 1)
    assert h["before"]["before"] == pytest.approx(5 / 9) and h["before"]["after"] == 0.0
    assert h["after"]["before"] == pytest.approx(1 / 9) and h["after"]["after"] == 0.0

    # the head exported as TREC qrels is what `report --run` reads: the same Success@1 and Hole@10 there
    assert judge("export", "--format", "trec", "--out", str(tmp_path / "head.qrels"), **j)[0] == 0
    monkeypatch.setenv("AUDIT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("AUDIT_HISTORY", "on")
    assert main(["report", *RUNS, "--qrels", str(tmp_path / "head.qrels"), "--json", str(tmp_path / "r.json")]) == 0
    capsys.readouterr()
    res = {r["name"]: r for r in json.loads((tmp_path / "r.json").read_text())["results"]}
    assert res["before"]["Success@1"] == pytest.approx(5 / 9) and res["after"]["Success@1"] == pytest.approx(8 / 9)
    assert "Hole@10" in res["before"]
    # the history shows the version: the record of that report names the head's digest (the same labels)
    assert main(["history", "show", "1"]) == 0
    assert f"judgments version: {vs[-1]['digest']}" in capsys.readouterr().out


def test_label_studio_export_imports_each_annotator(tmp_path, capsys):
    tasks = [{"id": 1, "data": {"query_id": "q1", "chunk_id": "b1", "question": "?", "text": "…"},
              "annotations": [{"completed_by": {"id": 7, "email": "ana@example.org"},
                               "result": [{"type": "choices", "from_name": "grade", "to_name": "chunk",
                                           "value": {"choices": ["Highly relevant"]}}]},
                              {"completed_by": 8, "result": [{"type": "choices", "value": {"choices": ["2"]}}]}]},
             {"id": 2, "data": {"query_id": "q1", "chunk_id": "b4"},
              "annotations": [{"completed_by": 7, "result": [{"type": "choices", "value": {"choices": ["0"]}}]},
                              {"completed_by": 8, "was_cancelled": True, "result": []}]}]
    (tmp_path / "ls.json").write_text(json.dumps(tasks))
    code, out = judge("import", str(tmp_path / "ls.json"), "--format", "label-studio", "--who", "qa", home=tmp_path,
                      capsys=capsys)
    assert code == 0 and "2 added" in out  # b1 (both annotators say 2) and b4 (one says 0)
    assert judge("export", "--format", "jsonl", "--out", str(tmp_path / "j.jsonl"), home=tmp_path)[0] == 0
    rows = [json.loads(x) for x in (tmp_path / "j.jsonl").read_text().splitlines()]
    assert rows == [{"space": "", "query_id": "q1", "chunk_id": "b1", "grade": 2},
                    {"space": "", "query_id": "q1", "chunk_id": "b4", "grade": 0}]
    # the JSONL imports back to the same content digest
    assert judge("import", str(tmp_path / "j.jsonl"), "--format", "jsonl", "--who", "qa", "--replace",
                 home=tmp_path, capsys=capsys)[0] == 0
    code, _ = judge("versions", "--json", str(tmp_path / "v.json"), home=tmp_path, capsys=capsys)
    vs = json.loads((tmp_path / "v.json").read_text())
    assert vs[0]["digest"] == vs[1]["digest"] and vs[1]["added"] == 0


@pytest.mark.parametrize("args, message", [
    (["agreement", "one.qrels"], "needs two qrels files or more"),
    (["diff", "v1", "v2"], "no judgments version yet"),
    (["label", "--who", "ana", "--from", "bad.tsv"], "bad.tsv:2: expected 'query chunk grade'"),
    (["import", "ls.json", "--format", "label-studio", "--who", "qa"], "task 1 (id 4), annotation 1: choice 'maybe' names no grade"),
])
def test_bad_input_is_one_line(tmp_path, capsys, monkeypatch, args, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "one.qrels").write_text("q1 0 a 1\n")
    (tmp_path / "bad.tsv").write_text("q1 a 1\nq1 b\n")
    (tmp_path / "ls.json").write_text(json.dumps([{"id": 4, "data": {"query_id": "q", "chunk_id": "c"},
                                                   "annotations": [{"result": [{"type": "choices",
                                                                                "value": {"choices": ["maybe"]}}]}]}]))
    code = main(["judge", *args, "--judgments", str(tmp_path / "j.sqlite")])
    err = capsys.readouterr().err
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1


def test_bluffs_queue_on_the_keyboard_answerable_or_not(tmp_path, capsys, monkeypatch):
    from audit.evaluation.saved_cut import save_cut
    from audit.sources.imported.system import load_system

    monkeypatch.setenv("AUDIT_HOME", str(tmp_path / "home"))
    s = load_system(EX / "queries.tsv", {"before": EX / "before.trec"}, {"before": "cosine-distance"},
                    EX / "qrels.trec", None, None, None, EX / "ood-queries.tsv", {"before": EX / "ood-before.trec"})
    save_cut(0.55, dict(s.run("before").cut_key), "before")
    args = ["--queries", str(EX / "queries.tsv"), "--run", f"before={EX / 'before.trec'}", "--score",
            "before=cosine-distance", "--qrels", str(EX / "qrels.trec"), "--ood-queries", str(EX / "ood-queries.tsv"),
            "--ood-run", f"before={EX / 'ood-before.trec'}"]
    code, out = judge("pool", "--queue", "bluffs", *args, "--out", str(tmp_path / "b.jsonl"), home=tmp_path,
                      capsys=capsys)
    # o3 (0.41) and o4 (0.52) are under the saved 0.55 (tests/test_judging.py, by hand)
    assert code == 0 and "bluffs at the saved cut: 2 out-of-domain questions answered" in out
    code, out = judge("label", "--who", "ana", "--items", str(tmp_path / "b.jsonl"), "--chunks",
                      str(EX / "chunks.jsonl"), home=tmp_path, capsys=capsys, stdin="2\n0\n1\n",
                      monkeypatch=monkeypatch)
    assert code == 0 and "1 answerable, 0 not in the corpus" in out and "chunk l1 at limits.md#char=" in out
    assert "2 labels by ana" in out  # "2" is off this scale: asked again
    code, out = judge("save", "--who", "qa-lead", home=tmp_path, capsys=capsys)
    assert code == 0 and "0 added" in out  # "answerable?" is kept for agreement, never saved as a chunk judgment


def test_qa_proposals_labelled_on_the_keyboard_become_a_ground_truth(tmp_path, capsys, monkeypatch):
    from audit.groundtruth import load_needles

    # two answers copied from data/example/docs/limits.md, one not in it
    limits = (EX / "docs" / "limits.md").read_text(encoding="utf-8")
    a1 = "A single message may carry at most 256 KiB of payload."
    a2 = "Undelivered messages are kept for seven days"
    assert a1 in limits and a2 in limits
    qa = tmp_path / "faq.csv"
    qa.write_text(f"id,question,answer\nf1,How big may a message be?,{a1}\nf2,How long are messages kept?,{a2}\n"
                  "f3,What colour is the sky?,The sky is a pale shade of green today.\n", encoding="utf-8")
    src = ["--qa", str(qa), "--corpus", str(EX / "docs")]
    j = dict(home=tmp_path, capsys=capsys)
    code, out = judge("pool", "--queue", "proposals", *src, "--reviewers", "ana,ben", "--overlap", "1", "--out",
                      str(tmp_path / "p.jsonl"), **j)
    assert code == 0 and "Q/A proposals: 2 answers of 3 pairs located" in out
    items = [json.loads(x) for x in (tmp_path / "p.jsonl").read_text().splitlines()]
    start = limits.index(a1)
    assert [(i["query_id"], i["chunk_id"], i["passage"]) for i in items][0] == (
        "f1", f"limits.md#char={start},{start + len(a1)}", a1)
    for who, keys in (("ana", "1\n1\n"), ("ben", "1\n0\n")):
        code, out = judge("label", "--who", who, "--items", str(tmp_path / "p.jsonl"), home=tmp_path, capsys=capsys,
                          stdin=keys, monkeypatch=monkeypatch)
        assert code == 0 and "1 answers the question, 0 does not" in out and f"2 labels by {who}" in out
    # f1 both accept; f2 split 1/0 stays open until adjudicated
    code, out = judge("needles", *src, "--out", str(tmp_path / "gt.jsonl"), **j)
    assert code == 0 and "1 of 2 proposals accepted" in out
    assert [(n.id, n.needle, n.questions) for n in load_needles(tmp_path / "gt.jsonl")] == [
        ("f1", a1, ("How big may a message be?",))]
    assert judge("adjudicate", "f2", items[1]["chunk_id"], "1", "--queue", "proposals", "--who", "qa", **j)[0] == 0
    judge("needles", *src, "--out", str(tmp_path / "gt.jsonl"), **j)
    assert [n.id for n in load_needles(tmp_path / "gt.jsonl")] == ["f1", "f2"]
    code, out = judge("save", "--who", "qa", **j)
    assert code == 0 and "0 added" in out  # accepted needles are no chunk judgment


def test_trec_export_refuses_an_id_with_whitespace_and_what_it_writes_reads_back(tmp_path, capsys):
    from audit.qrels import read_qrels

    rows = [{"query_id": "q1", "chunk_id": "c1", "grade": 2}, {"query_id": "q1", "chunk_id": "doc 7#p2", "grade": 1}]
    (tmp_path / "j.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert judge("import", str(tmp_path / "j.jsonl"), "--format", "jsonl", "--who", "qa", home=tmp_path)[0] == 0
    out = tmp_path / "head.qrels"
    code = main(["judge", "export", "--format", "trec", "--out", str(out), "--judgments", str(tmp_path / "j.sqlite")])
    err = capsys.readouterr().err
    assert code == 2 and "'doc 7#p2'" in err and "--format jsonl" in err and len(err.strip().splitlines()) == 1
    assert not out.exists()  # nothing half written
    # without the whitespace id, the file reads back as the labels (read_qrels, the reader `report --qrels` uses)
    rows[1]["chunk_id"] = "doc-7#p2"
    (tmp_path / "j.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert judge("import", str(tmp_path / "j.jsonl"), "--format", "jsonl", "--who", "qa", "--replace",
                 home=tmp_path)[0] == 0
    assert judge("export", "--format", "trec", "--out", str(out), home=tmp_path)[0] == 0
    assert {c: g for c, g in read_qrels(out).judgments["q1"].items()} == {"c1": 2, "doc-7#p2": 1}


def test_agreement_text_names_the_undefined_resamples_as_the_json_does(tmp_path, capsys):
    # three items, one disagreement: many resamples draw one item thrice, one grade throughout, κ undefined
    (tmp_path / "ana.qrels").write_text("q1 0 a 1\nq1 0 b 0\nq1 0 c 1\n")
    (tmp_path / "ben.qrels").write_text("q1 0 a 1\nq1 0 b 0\nq1 0 c 0\n")
    code, out = judge("agreement", str(tmp_path / "ana.qrels"), str(tmp_path / "ben.qrels"), "--n-boot", "300",
                      "--seed", "3", "--json", str(tmp_path / "ag.json"), home=tmp_path, capsys=capsys)
    ag = json.loads((tmp_path / "ag.json").read_text())
    # by hand, the same resamples: κ is undefined when both sequences hold one and the same grade
    rng = np.random.default_rng(3)
    a, b = [1, 0, 1], [1, 0, 0]
    undefined = sum(len({a[i] for i in d} | {b[i] for i in d}) == 1 for d in (rng.integers(0, 3, 3) for _ in range(300)))
    assert code == 0 and ag["kappa"]["n_undefined"] == undefined > 0
    kappa_line = next(ln for ln in out.splitlines() if ln.strip().startswith("κ"))
    assert f"300 resamples, {undefined} undefined and left out of the interval" in kappa_line
    alpha_line = next(ln for ln in out.splitlines() if ln.strip().startswith("α"))
    n_alpha = ag["alpha"]["n_undefined"]
    assert (f"{n_alpha} undefined" in alpha_line) == (n_alpha > 0)
