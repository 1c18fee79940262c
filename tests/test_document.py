"""The one audit document (issue 50): every source's ``report --json`` has the same top-level keys — one per
section, null where this source cannot show it — and ``not_shown`` names each null one with why; no key carries two
meanings and no row carries a figure twice. The servers' sources (a store, an endpoint, a Lance dataset) are held
to the same rule in tests/test_report_shape.py."""

from __future__ import annotations

import json
import shutil

import pytest
from conftest import ROOT

from audit.capabilities import CANNOT
from audit.cli import main
from audit.report.sections import SECTIONS, build_document, section

GOLDEN = ROOT / "tests" / "golden"
EXAMPLE = ROOT / "data" / "example"
TRAFFIC = EXAMPLE / "traffic.jsonl"
KEYS = [s.name for s in SECTIONS] + ["not_shown"]


def _json(tmp_path, monkeypatch, *args) -> dict:
    tmp_path.mkdir(parents=True, exist_ok=True)
    monkeypatch.setenv("AUDIT_HOME", str(tmp_path / "home"))
    out = tmp_path / "r.json"
    assert main(["report", *args, "--json", str(out), "--quiet"]) == 0
    return json.loads(out.read_text(encoding="utf-8"), parse_constant=lambda c: pytest.fail(f"non-strict {c}"))


def _builtin(tmp_path, monkeypatch) -> dict:
    tmp_path.mkdir(parents=True, exist_ok=True)
    shutil.copytree(GOLDEN / "docs", tmp_path / "docs")
    monkeypatch.chdir(tmp_path)
    return _json(tmp_path, monkeypatch, "--corpus", "docs", "--ground-truth", str(GOLDEN / "gt.jsonl"),
                 "--out-of-domain", str(GOLDEN / "ood.txt"), "--model", "hashing", "--reranker", "none",
                 "--strategies", "A,E", "--no-history")


def _runs(tmp_path, monkeypatch) -> dict:
    return _json(tmp_path, monkeypatch, "--queries", str(EXAMPLE / "queries.tsv"), "--qrels",
                 str(EXAMPLE / "qrels.trec"), "--run", f"before={EXAMPLE / 'before.trec'}", "--run",
                 f"after={EXAMPLE / 'after.trec'}", "--score", "before=cosine-distance", "--no-history")


def _traffic(tmp_path, monkeypatch) -> dict:
    return _json(tmp_path, monkeypatch, "--traffic", str(TRAFFIC), "--traffic-score", "cosine-distance")


@pytest.mark.parametrize("source", [_builtin, _runs, _traffic], ids=["builtin", "runs", "traffic"])
def test_every_source_has_the_same_top_level_keys(source, tmp_path, monkeypatch):
    js = source(tmp_path, monkeypatch)
    assert list(js) == KEYS
    nulls = [k for k in KEYS[:-1] if js[k] is None]
    assert [n["section"] for n in js["not_shown"]] == nulls
    assert all(n["why"] for n in js["not_shown"])


def test_what_each_source_lacks_is_named(tmp_path, monkeypatch):
    b = _builtin(tmp_path / "b", monkeypatch)
    r = _runs(tmp_path / "r", monkeypatch)
    t = _traffic(tmp_path / "t", monkeypatch)
    why = lambda js: {n["section"]: n["why"] for n in js["not_shown"]}  # noqa: E731
    # the built-in pipelines cut, count tokens, time and rank here; a team's runs were made elsewhere
    assert b["tokens"] is not None and b["needles"] is not None and b["retrieval"] is not None
    assert why(r)["tokens"] == CANNOT["tokens"] and why(r)["needles"] == CANNOT["needles"]
    assert why(r)["retrieval"] == CANNOT["query_time_search"]
    # the example's runs have no out-of-domain run: no threshold, said as the capability says it
    assert why(r)["threshold"] == CANNOT["out_of_domain"]
    # traffic alone: no judged question, so no result; the traffic section itself is shown
    assert why(t)["results"] == CANNOT["judgments"] and t["traffic"]["read"] == 200
    assert t["results"] is None and t["threshold"] is None
    assert why(b)["traffic"] == section("traffic").absent


def test_a_result_row_names_each_figure_once(tmp_path, monkeypatch):
    for js in (_builtin(tmp_path / "b", monkeypatch), _runs(tmp_path / "r", monkeypatch)):
        for row in js["results"]:
            assert not [k for k in row if k.startswith("recall@") or k == "mrr"], row["name"]
            assert {"name", "strategy", "retriever", "Success@8", "Success@8_low", "Success@8_high", "RR@20",
                    "destroyed"} <= set(row)


def test_threshold_keep_means_the_side_kept_for_every_source(tmp_path, monkeypatch):
    b = _builtin(tmp_path / "b", monkeypatch)
    r = _json(tmp_path / "r", monkeypatch, "--queries", str(EXAMPLE / "queries.tsv"), "--qrels",
              str(EXAMPLE / "qrels.trec"), "--run", f"before={EXAMPLE / 'before.trec'}", "--score",
              "before=cosine-distance", "--ood-queries", str(EXAMPLE / "ood-queries.tsv"), "--ood-run",
              f"before={EXAMPLE / 'ood-before.trec'}", "--no-history")
    for js in (b, r):
        for name, t in js["threshold"].items():
            assert t["keep"] in ("below", "above") and t["kept_at_most"] == 4, name
    # every run with out-of-domain rankings has its entry, the primary run (E's dense column) first
    assert list(b["threshold"])[0] == "E/dense" and len(b["threshold"]) == 6


def test_a_stray_input_beside_the_run_set_is_refused():
    with pytest.raises(ValueError, match="no section reads sweeps"):
        build_document(None, sweeps=object())


def test_the_text_names_each_reason_once_with_the_sections_it_keeps_out(tmp_path, monkeypatch, capsys):
    """Five sections kept out for one reason (no two models compared) are one line, not five of the same words."""
    shutil.copytree(GOLDEN / "docs", tmp_path / "docs")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("AUDIT_HOME", str(tmp_path / "home"))
    assert main(["report", "--corpus", "docs", "--ground-truth", str(GOLDEN / "gt.jsonl"), "--model", "hashing",
                 "--reranker", "none", "--strategies", "E", "--retrievers", "dense", "--no-history"]) == 0
    tail = capsys.readouterr().out.split("Not shown here:\n", 1)[1].splitlines()
    upgrade = section("upgrade").absent
    assert f"  upgrade, models, cut, tradeoff, cost: {upgrade}" in tail
    assert len([ln for ln in tail if upgrade in ln]) == 1
    assert len(tail) == len({ln.split(": ", 1)[1] for ln in tail})  # one line a reason
