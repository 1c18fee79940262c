"""``report --json`` has one shape for every source (issues 37, 50): the same top-level keys, one per section of
the audit document (null where the source cannot show it) and ``not_shown``; ``results``, one row per run, made by
``build_report(runset)``; what a source adds is a section of its own (a store's ``approximate``).

The sources: the built-in pipelines, a team's runs, every live store engine (the servers and folders the store
protocol's tests start: tests/test_store_protocol.py), a Lance dataset, and an endpoint (a loopback server,
tests/endpoint_server.py). Each figure checked is computed by another route: the golden file for the built-in
pipelines and the dataset, data/example/README.md for the runs, numpy over the table's own vectors for a store,
the qrels file's query count for the endpoint.
"""

from __future__ import annotations

import json
import shutil

import pytest
from conftest import ROOT
from endpoint_server import EXAMPLE, LoopbackServer, Service, need_uvicorn
from pgfixture import pg_server  # noqa: F401 - the session fixture
from test_store_protocol import LIVE, _numpy_topk, chroma_server, data, store  # noqa: F401 - fixtures

from audit.cli import main
from audit.report.sections import SECTIONS
from audit.sources.imported import read_qrels, read_queries

pytestmark = pytest.mark.store
GOLDEN = ROOT / "tests" / "golden"
MEASURED = ("Success@1", "Success@4", "Success@8", "Success@20", "RR@20", "nDCG@10")


def _report(tmp_path, *args) -> dict:
    out = tmp_path / "r.json"
    assert main(["report", *args, "--json", str(out)]) == 0
    js = json.loads(out.read_text(), parse_constant=lambda c: pytest.fail(f"non-strict JSON constant {c}"))
    assert isinstance(js["results"], list) and js["results"], "no results"
    assert list(js) == [s.name for s in SECTIONS] + ["not_shown"], "one shape for every source"
    assert [n["section"] for n in js["not_shown"]] == [k for k in js if k != "not_shown" and js[k] is None]
    return js


def _golden_e() -> dict:
    return {r["retriever"]: r for r in json.loads((GOLDEN / "report.json").read_text())["results"]
            if r["strategy"] == "E"}


def test_the_builtin_pipelines(tmp_path):
    js = _report(tmp_path, "--corpus", str(GOLDEN / "docs"), "--ground-truth", str(GOLDEN / "gt.jsonl"),
                 "--out-of-domain", str(GOLDEN / "ood.txt"), "--model", "hashing", "--strategies", "E",
                 "--retrievers", "dense,bm25", "--reranker", "none", "--no-cache", "--quiet")
    got, golden = {r["retriever"]: r for r in js["results"]}, _golden_e()
    for retriever in ("dense", "bm25"):
        for key in MEASURED:
            assert got[retriever][key] == pytest.approx(golden[retriever][key], rel=1e-12), (retriever, key)


def test_a_teams_runs(tmp_path):
    js = _report(tmp_path, "--queries", str(EXAMPLE / "queries.tsv"), "--qrels", str(EXAMPLE / "qrels.trec"),
                 "--run", f"before={EXAMPLE / 'before.trec'}", "--run", f"after={EXAMPLE / 'after.trec'}",
                 "--score", "before=cosine-distance")
    rows = {r["name"]: r for r in js["results"]}
    # data/example/README.md: Success@1 before 3/9, after 7/9
    assert rows["before"]["Success@1"] == pytest.approx(3 / 9)
    assert rows["after"]["Success@1"] == pytest.approx(7 / 9)


def test_a_lance_dataset(tmp_path):
    pytest.importorskip("lance", reason="pip install pylance (requirements-dev.txt)")
    shutil.copytree(GOLDEN / "docs", tmp_path / "docs")
    ds = tmp_path / "E.lance"
    assert main(["index", str(tmp_path / "docs"), "--strategy", "E", "--model", "hashing", "--out", str(ds),
                 "--quiet"]) == 0
    js = _report(tmp_path, "--index", str(ds), "--ground-truth", str(GOLDEN / "gt.jsonl"), "--out-of-domain",
                 str(GOLDEN / "ood.txt"), "--retrievers", "dense", "--reranker", "none")
    (dense,) = js["results"]
    for key in MEASURED:
        assert dense[key] == pytest.approx(_golden_e()["dense"][key], rel=1e-12), key


def test_every_live_store_engine(store, data, tmp_path):
    if store["kind"] not in LIVE:
        pytest.skip("the audit's own indexes are reported as the built-in pipelines are (report --index, --db)")
    js = _report(tmp_path, *store["cli"], "--ground-truth", str(data["gt"]), "--query-vectors", str(data["qv"]))
    rows = {r["name"]: r for r in js["results"]}
    assert list(rows) == ["approximate", "exact"]
    # numpy over the table's vectors: the needles whose own row is in the exact top 8 (one question each)
    hits = [i for i, q in zip((10, 21, 32, 39), data["qs"]) if f"c{i}" in _numpy_topk(data["rows"], q, 8)[0]]
    assert rows["exact"]["n_queries"] == 4
    assert rows["exact"]["Success@8"] == len(hits) / 4
    # what the store adds is its own section: the approximate index against the exact scan
    assert set(js["approximate"]) == {"store", "model", "comparison", "approximate_ms", "exact_ms"}
    by_k = {r["k"]: r for r in js["approximate"]["comparison"]["rows"]}
    assert by_k[8]["recall_exact"] == rows["exact"]["Success@8"]


def test_an_endpoint(tmp_path, monkeypatch):
    need_uvicorn()
    questions = [*read_queries(EXAMPLE / "queries.tsv").values(), *read_queries(EXAMPLE / "ood-queries.tsv").values()]
    srv = LoopbackServer(Service(5.0, {}, questions)).start()
    try:
        monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
        cfg = tmp_path / "endpoints.toml"
        cfg.write_text(f'[endpoints.blue]\nurl = "{srv.url}/search"\n', encoding="utf-8")
        js = _report(tmp_path, "--endpoint", "blue", "--endpoint-config", str(cfg), "--queries",
                     str(EXAMPLE / "queries.tsv"), "--qrels", str(EXAMPLE / "qrels.trec"), "--retries", "0")
    finally:
        srv.stop()
    (row,) = [r for r in js["results"] if r["name"] == "blue"]
    assert row["n_queries"] == len(read_qrels(EXAMPLE / "qrels.trec").query_ids)
