"""The command line: outputs, exit codes, one clear line for bad input."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from conftest import ROOT

from audit.capabilities import CANNOT
from audit.cli import main

GT_LINE = {"id": "n1", "needle": "The installer must be run twice on a fresh machine",
           "questions": ["How many times must the installer run?", "setup broke first time, do i rerun it?"]}


@pytest.fixture()
def folder(tmp_path, monkeypatch):
    monkeypatch.setenv("AUDIT_HOME", str(tmp_path / "home"))
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "guide.md").write_text("# Guide\n\nIntro.\n\n## Install\n\nThe installer must be run twice on a\n"
                                   "fresh machine.\n\n## Usage\n\nCall the tool with a path.\n", encoding="utf-8")
    (docs / "faq.md").write_text("# FAQ\n\n## Errors\n\nError 42 means the disk is full.\n", encoding="utf-8")
    gt = tmp_path / "gt.jsonl"
    gt.write_text(json.dumps(GT_LINE) + "\n", encoding="utf-8")
    ood = tmp_path / "ood.txt"
    ood.write_text("# unrelated\nhow do I cook paella\n\nvisa rules for Spain\n", encoding="utf-8")
    return docs, gt, ood


def run_cli(*args, env=None):
    return subprocess.run([sys.executable, "-m", "audit", *args], cwd=ROOT, capture_output=True, text=True,
                          env=env)


def test_report_on_a_folder_writes_json(folder, tmp_path, capsys):
    docs, gt, ood = folder
    out = tmp_path / "r.json"
    code = main(["report", "--corpus", str(docs), "--ground-truth", str(gt), "--out-of-domain", str(ood),
                 "--model", "hashing", "--strategies", "C,E", "--reranker", "none", "--json", str(out),
                 "--quiet"])
    assert code == 0
    text = capsys.readouterr().out
    assert "Success@k (the specification's recall@k) with Wilson 95% intervals" in text and "Threshold sweep" in text
    js = json.loads(out.read_text())
    assert {(r["strategy"], r["retriever"]) for r in js["results"]} >= {("C", "dense"), ("E", "bm25")}
    bm25 = next(r for r in js["results"] if r["strategy"] == "E" and r["retriever"] == "bm25")
    # the documentation question shares "installer" with the needle's chunk; the ticket question shares
    # no word with any chunk, so BM25 returns nothing for it: 1 of 2
    assert bm25["n_queries"] == 2 and bm25["Success@1"] == 0.5


def test_fail_under_gate_exits_1(folder, capsys):
    docs, gt, ood = folder
    code = main(["report", "--corpus", str(docs), "--ground-truth", str(gt), "--out-of-domain", str(ood),
                 "--model", "hashing", "--strategies", "C", "--retrievers", "dense", "--fail-under",
                 "recall@1=1.01", "--quiet"])
    assert code == 2  # 1.01 is not a valid recall
    code = main(["report", "--corpus", str(docs), "--ground-truth", str(gt), "--out-of-domain", str(ood),
                 "--model", "hashing", "--strategies", "C", "--retrievers", "bm25", "--fail-under",
                 "recall@1=0.99", "--quiet"])
    err = capsys.readouterr().err
    assert code == 1 and "gate failed: C/bm25 recall@1 = 0.500 < 0.99" in err
    # the ir_measures name the docs show is the same gate (the specification's recall@1 is Success@1)
    code = main(["report", "--corpus", str(docs), "--ground-truth", str(gt), "--out-of-domain", str(ood),
                 "--model", "hashing", "--strategies", "C", "--retrievers", "bm25", "--fail-under",
                 "Success@1=0.99", "--quiet"])
    err = capsys.readouterr().err
    assert code == 1 and "gate failed: C/bm25 Success@1 = 0.500 < 0.99" in err


@pytest.mark.parametrize("args, message", [
    (["--strategies", "Z"], "unknown strategy 'Z'"),
    (["--retrievers", "dense,sparse"], "unknown retriever 'sparse'"),
    (["--ground-truth", "MISSING"], "ground-truth file not found"),
    (["--model", "no-such-org/no-such-model"], "no-such-org/no-such-model"),
])
def test_bad_input_exits_2_with_one_line(folder, tmp_path, args, message):
    docs, gt, ood = folder
    full = ["report", "--corpus", str(docs), "--ground-truth", str(gt), "--model", "hashing", "--quiet"]
    for flag, value in zip(args[::2], args[1::2]):
        i = full.index(flag) if flag in full else None
        if i is not None:
            full[i + 1] = value if value != "MISSING" else str(tmp_path / "missing.jsonl")
        else:
            full += [flag, value]
    r = run_cli(*full)
    assert r.returncode == 2
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and message in lines[0], r.stderr


def test_malformed_jsonl_names_the_line(folder, tmp_path):
    docs, gt, ood = folder
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(GT_LINE) + "\n{oops\n", encoding="utf-8")
    r = run_cli("report", "--corpus", str(docs), "--ground-truth", str(bad), "--model", "hashing", "--quiet")
    assert r.returncode == 2 and "bad.jsonl:2: not valid JSON" in r.stderr


def test_empty_corpus_folder_exits_2(tmp_path):
    (tmp_path / "empty").mkdir()
    r = run_cli("report", "--corpus", str(tmp_path / "empty"), "--model", "hashing")
    assert r.returncode == 2 and "no readable document" in r.stderr


def test_chunks_and_corpus_jsonl(tmp_path):
    out = tmp_path / "e.jsonl"
    assert main(["chunks", "--strategy", "E", "--jsonl", str(out)]) == 0
    rows = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert len(rows) > 1000
    assert set(rows[0]) == {"chunk_id", "doc_id", "title", "section", "text", "content", "start", "end"}
    docs = tmp_path / "c.jsonl"
    assert main(["corpus", "--jsonl", str(docs)]) == 0
    texts = {d["doc_id"]: d["text"] for d in map(json.loads, docs.read_text(encoding="utf-8").splitlines())}
    assert len(texts) == 79
    for r in rows[:200]:
        assert texts[r["doc_id"]][r["start"]:r["end"]] == r["content"]


def test_index_health_compare_commands(tmp_path, monkeypatch):
    monkeypatch.setenv("AUDIT_HOME", str(tmp_path / "home"))
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "guide.md").write_text("# Guide\n\n## Install\n\nThe installer must be run twice on a\nfresh machine.\n",
                                   encoding="utf-8")
    gt = tmp_path / "gt.jsonl"
    gt.write_text(json.dumps(GT_LINE) + "\n", encoding="utf-8")
    old, new = tmp_path / "old.sqlite", tmp_path / "new.sqlite"
    assert main(["index", str(docs), "--db", str(old), "--model", "hashing", "--quiet"]) == 0
    assert main(["index", str(docs), "--db", str(new), "--model", "hashing:64", "--quiet"]) == 0
    assert main(["health", "--db", str(old), "--model", "hashing", "--json", str(tmp_path / "h.json")]) == 0
    assert json.loads((tmp_path / "h.json").read_text())[0]["healthy"] is True
    assert main(["health", "--db", str(old), "--model", "hashing:64"]) == 1  # the configured model changed
    assert main(["compare", str(old), str(new), "--ground-truth", str(gt), "--threshold", "0.5"]) == 0
    assert main(["health", "--db", str(tmp_path / "absent.sqlite")]) == 2


@pytest.mark.parametrize("bad", ["nan", "-0.5", "7", "inf"])
def test_threshold_must_be_a_cosine_distance(folder, bad, capsys):
    docs, gt, ood = folder
    code = main(["report", "--corpus", str(docs), "--ground-truth", str(gt), "--model", "hashing", "--reranker",
                 "none", "--threshold", bad, "--quiet"])
    assert code == 2
    assert f"--threshold must be a cosine distance in [0, 2], got {float(bad)!r}" in capsys.readouterr().err


def test_report_json_is_strict_without_out_of_domain_queries(folder, tmp_path):
    docs, gt, _ = folder
    out = tmp_path / "r.json"
    assert main(["report", "--corpus", str(docs), "--ground-truth", str(gt), "--model", "hashing", "--reranker",
                 "none", "--strategies", "C", "--json", str(out), "--quiet"]) == 0
    js = json.loads(out.read_text(), parse_constant=lambda c: pytest.fail(f"non-strict JSON constant {c}"))
    # no out-of-domain question: the threshold section is null and not_shown says why (strict JSON all the same)
    assert js["threshold"] is None
    assert {"section": "threshold", "why": CANNOT["out_of_domain"]} in js["not_shown"]


def test_index_retry_failed_uses_the_stamped_model(tmp_path, capsys):
    import sqlite3

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "ok.md").write_text("# Ok\n\nFine.\n", encoding="utf-8")
    (docs / "broken.md").write_bytes(b"\x00")
    db = tmp_path / "i.sqlite"
    assert main(["index", str(docs), "--db", str(db), "--model", "hashing:64", "--quiet"]) == 0
    (docs / "broken.md").write_text("# Broken\n\nFixed.\n", encoding="utf-8")
    # another model: refused in one line, nothing written (before: a whole new generation with that model)
    assert main(["index", str(docs), "--db", str(db), "--model", "hashing", "--retry-failed", "--quiet"]) == 2
    assert "was built with hashing:64 (64 dims" in capsys.readouterr().err
    # no --model: the model stamped on the index (hashing:64), not the default all-MiniLM-L6-v2
    assert main(["index", str(docs), "--db", str(db), "--retry-failed", "--quiet"]) == 0
    assert "re-indexed 1 document, " in capsys.readouterr().out  # one document, singular
    con = sqlite3.connect(db)
    assert con.execute("SELECT doc_id, status, model FROM document ORDER BY doc_id").fetchall() == [
        ("broken.md", "indexed", "hashing:64"), ("ok.md", "indexed", "hashing:64")]
    assert con.execute("SELECT COUNT(*) FROM generation").fetchone() == (1,)
    con.close()
