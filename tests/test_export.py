"""``export``: the built-in strategies as TREC and BEIR files, and the round trip through ``report --run``."""

from __future__ import annotations

import json

import pytest
from conftest import ROOT

from audit.cli import main

GOLDEN = ROOT / "tests" / "golden"


def test_trec_export_reads_back_to_the_same_figures(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("AUDIT_HOME", str(tmp_path / "home"))
    base = ["--corpus", str(GOLDEN / "docs"), "--ground-truth", str(GOLDEN / "gt.jsonl"), "--model", "hashing",
            "--reranker", "none", "--strategies", "C,E", "--retrievers", "dense,bm25,hybrid", "--quiet"]
    out = tmp_path / "trec"
    assert main(["export", "--format", "trec", "--out", str(out), *base]) == 0
    assert sorted(p.name for p in out.iterdir()) == sorted(
        ["C-dense.run", "C-bm25.run", "C-hybrid.run", "C.qrels", "E-dense.run", "E-bm25.run", "E-hybrid.run",
         "E.qrels", "queries.tsv", "runs.json"])
    first = (out / "E-dense.run").read_text().splitlines()[0].split()
    assert first[1] == "Q0" and first[3] == "1" and first[5] == "E-dense"
    built = tmp_path / "built.json"
    assert main(["report", *base, "--json", str(built)]) == 0
    rows = {(r["strategy"], r["retriever"]): r for r in json.loads(built.read_text())["results"]}
    for strategy in ("C", "E"):
        back = tmp_path / f"back-{strategy}.json"
        runs = [a for r in ("dense", "bm25", "hybrid") for a in ("--run", f"{r}={out / f'{strategy}-{r}.run'}")]
        assert main(["report", "--queries", str(out / "queries.tsv"), "--qrels", str(out / f"{strategy}.qrels"),
                     *runs, "--score", "dense=cosine-distance", "--json", str(back)]) == 0
        for r in json.loads(back.read_text())["results"]:
            ours = rows[(strategy, r["name"])]
            assert r["n_queries"] == ours["n_queries"] == 10
            for name in ("Success@1", "Success@4", "Success@8", "Success@20", "RR@20"):
                # equal unless a tie straddles the first relevant chunk (trec_eval orders ties the other way)
                assert r[name] == pytest.approx(ours[name], abs=1.5 / ours["n_queries"]), (strategy, r["name"], name)
    capsys.readouterr()


def test_beir_export_layout(tmp_path, monkeypatch):
    monkeypatch.setenv("AUDIT_HOME", str(tmp_path / "home"))
    out = tmp_path / "beir"
    assert main(["export", "--format", "beir", "--out", str(out), "--corpus", str(GOLDEN / "docs"), "--ground-truth",
                 str(GOLDEN / "gt.jsonl"), "--model", "hashing", "--reranker", "none", "--strategies", "E",
                 "--retrievers", "dense", "--quiet"]) == 0
    qrels = (out / "E" / "qrels" / "test.tsv").read_text().splitlines()
    assert qrels[0] == "query-id\tcorpus-id\tscore" and all(len(line.split("\t")) == 3 for line in qrels[1:])
    corpus = [json.loads(line) for line in (out / "E" / "corpus.jsonl").read_text().splitlines()]
    assert set(corpus[0]) == {"_id", "title", "text", "metadata"} and corpus[0]["_id"] == "0"
    # where each chunk's quote sits: a markdown chunk has #char= offsets only
    assert set(corpus[0]["metadata"]) == {"doc_id", "start", "end"}
    queries = [json.loads(line) for line in (out / "E" / "queries.jsonl").read_text().splitlines()]
    assert len(queries) == 10 and queries[0]["_id"] == "g1/doc"
    assert (out / "E" / "runs" / "dense.run").is_file()
