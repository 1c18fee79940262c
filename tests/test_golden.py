"""The JSON report of a small folder is a golden file: a restructure must not move a figure.

The folder (``tests/golden``: three documents in markdown, text and reST, six needles of which
one is rejected, four out-of-domain queries) is audited with the hashing encoder (no model
weights), every preset and every retriever (rerank without a cross-encoder). Only what is
measured on the clock is left out: latencies, run time, query-embedding time and the two build
columns of the chunk table. A commit that changes a figure on purpose regenerates the file with
``AUDIT_UPDATE_GOLDEN=1 pytest tests/test_golden.py`` and says why in its message.
"""

from __future__ import annotations

import json
import os
import shutil

from conftest import ROOT

from audit.cli import main

GOLDEN = ROOT / "tests" / "golden"
#: Sections the clock (or the history's record number) decides, whole.
VOLATILE = ("latency", "history")
VOLATILE_CHUNK_COLUMNS = ("chunks embedded now", "index build (ms/chunk)")
#: What issue 57 (languages) added beside the figures, checked by test_languages.py rather than by the file:
#: the provenance's ``language``, each result row's ``token_rule`` and the ``languages`` section.
ADDED_KEYS = {"provenance": ("language",), "results": ("token_rule",)}
ADDED_SECTIONS = ("languages",)


def normalised(report: dict) -> dict:
    """The report without what the clock decides (the latency section, the run time, the build's cost per chunk)
    or the history numbers (the record's id)."""
    out = {k: v for k, v in report.items() if k not in VOLATILE + ADDED_SECTIONS}
    out["provenance"] = {k: v for k, v in out["provenance"].items()
                         if k != "wall_seconds" and k not in ADDED_KEYS["provenance"]}
    out["results"] = [{k: v for k, v in row.items() if k not in ADDED_KEYS["results"]} for row in out["results"]]
    out["tokens"] = {**out["tokens"], "rows": [{k: v for k, v in row.items() if k not in VOLATILE_CHUNK_COLUMNS}
                                               for row in out["tokens"]["rows"]]}
    out["not_shown"] = [n for n in out["not_shown"] if n["section"] not in VOLATILE + ADDED_SECTIONS]
    return out


def golden_report(tmp_path, monkeypatch, *extra: str) -> dict:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("AUDIT_HOME", str(tmp_path / "home"))
    shutil.copytree(GOLDEN / "docs", tmp_path / "docs")  # the corpus name ("docs") is part of the report
    code = main(["report", "--corpus", "docs", "--ground-truth", str(GOLDEN / "gt.jsonl"), "--out-of-domain",
                 str(GOLDEN / "ood.txt"), "--model", "hashing", "--reranker", "none", "--json", "r.json",
                 "--quiet", *extra])
    assert code == 0
    return normalised(json.loads((tmp_path / "r.json").read_text(encoding="utf-8")))


def test_report_json_equals_the_golden_file(tmp_path, monkeypatch):
    got = golden_report(tmp_path, monkeypatch)
    path = GOLDEN / "report.json"
    if os.environ.get("AUDIT_UPDATE_GOLDEN"):
        path.write_text(json.dumps(got, indent=1, ensure_ascii=False, sort_keys=True) + "\n", encoding="utf-8")
    want = json.loads(path.read_text(encoding="utf-8"))
    assert json.loads(json.dumps(got, sort_keys=True)) == want


def test_in_memory_and_persisted_index_give_the_same_report(tmp_path, monkeypatch):
    # --no-cache chunks and embeds in memory; the default reads through the SQLite index: same figures
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    assert golden_report(tmp_path / "a", monkeypatch) == golden_report(tmp_path / "b", monkeypatch, "--no-cache")
