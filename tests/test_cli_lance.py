"""``index --out DATASET``, ``report --index``, ``health --index``, ``compare A B`` on Lance datasets (CLI)."""

from __future__ import annotations

import json
import shutil

import pytest
from conftest import ROOT

from audit.cli import main

pytest.importorskip("lance", reason="pip install pylance (requirements-dev.txt)")
GOLDEN = ROOT / "tests" / "golden"


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    root = tmp_path_factory.mktemp("lance")
    shutil.copytree(GOLDEN / "docs", root / "docs")
    out = root / "E.lance"
    assert main(["index", str(root / "docs"), "--strategy", "E", "--model", "hashing", "--out", str(out),
                 "--quiet"]) == 0
    return root, out


def test_a_dataset_audited_as_it_is_gives_the_golden_figures(dataset, tmp_path, capsys):
    _, out = dataset
    js_path = tmp_path / "r.json"
    assert main(["report", "--index", str(out), "--ground-truth", str(GOLDEN / "gt.jsonl"), "--out-of-domain",
                 str(GOLDEN / "ood.txt"), "--reranker", "none", "--json", str(js_path)]) == 0
    got = {r["retriever"]: r for r in json.loads(js_path.read_text())["results"]}
    golden = {r["retriever"]: r for r in json.loads((GOLDEN / "report.json").read_text())["results"]
              if r["strategy"] == "E"}
    # the same chunks and vectors as the in-memory audit of the same folder: the same figures
    # (means are math.fsum(values) / n for every source: a mean may sit 1 ulp from the golden file's np.mean)
    for retriever in ("dense", "bm25", "hybrid"):
        assert got[retriever]["n_queries"] == golden[retriever]["n_queries"], retriever
        for key in ("Success@1", "Success@4", "Success@8", "Success@20", "RR@20", "nDCG@10"):
            assert got[retriever][key] == pytest.approx(golden[retriever][key], rel=1e-12), (retriever, key)
    assert "--corpus" not in capsys.readouterr().err


def test_health_of_a_dataset_exits_0(dataset, tmp_path, capsys):
    _, out = dataset
    js = tmp_path / "h.json"
    assert main(["health", "--index", str(out), "--json", str(js)]) == 0
    assert json.loads(js.read_text())["healthy"] is True
    # the extraction audit needs the source files, which a dataset does not hold: said, not guessed
    (extraction,) = [f for f in json.loads(js.read_text())["findings"] if f["check"] == "extraction"]
    assert extraction["severity"] == "ok" and "not the source files" in extraction["detail"]


def test_compare_two_datasets(dataset, capsys):
    root, out = dataset
    same = root / "E-copy.lance"
    if not same.exists():
        shutil.copytree(out, same)
    assert main(["compare", str(out), str(same), "--ground-truth", str(GOLDEN / "gt.jsonl"), "--out-of-domain",
                 str(GOLDEN / "ood.txt")]) == 0
    text = capsys.readouterr().out
    assert "Lost at k=8 (0): none" in text and "Gained at k=8 (0): none" in text  # the same index both sides


def test_index_options_are_checked(tmp_path, capsys):
    assert main(["index", str(GOLDEN / "docs"), "--engine", "ray", "--model", "hashing"]) == 2
    assert "give --out DATASET" in capsys.readouterr().err
    assert main(["report", "--index", str(tmp_path / "nothing.lance"), "--ground-truth",
                 str(GOLDEN / "gt.jsonl")]) == 2
    assert "not a Lance dataset index" in capsys.readouterr().err
    assert main(["report", "--index", "x.lance", "--corpus", "docs"]) == 2


@pytest.mark.ray
def test_the_ray_engine_writes_the_same_dataset_as_the_local_one(dataset, tmp_path):
    pytest.importorskip("ray", reason="pip install 'ray[data]' (requirements-dev.txt)")
    root, local = dataset
    out = tmp_path / "ray.lance"
    assert main(["index", str(root / "docs"), "--strategy", "E", "--model", "hashing", "--out", str(out),
                 "--engine", "ray", "--actors", "1", "--quiet"]) == 0
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    for ds, js in ((local, a), (out, b)):
        assert main(["report", "--index", str(ds), "--ground-truth", str(GOLDEN / "gt.jsonl"), "--reranker", "none",
                     "--retrievers", "dense,bm25", "--json", str(js)]) == 0
    assert json.loads(a.read_text())["results"] == json.loads(b.read_text())["results"]
