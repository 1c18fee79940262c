"""A Lance dataset whose rows were all deleted (issue 33): a health finding and one line from report, never a
traceback (it was ``KeyError: 'model'``)."""

from __future__ import annotations

import json
import shutil

import pytest
from conftest import ROOT

from audit.cli import main

lance = pytest.importorskip("lance", reason="pip install 'retrieval-audit[scale]' (pylance)")
GOLDEN = ROOT / "tests" / "golden"


@pytest.fixture(scope="module")
def emptied(tmp_path_factory):
    root = tmp_path_factory.mktemp("lance-deleted")
    shutil.copytree(GOLDEN / "docs", root / "docs")
    out = root / "E.lance"
    assert main(["index", str(root / "docs"), "--strategy", "E", "--model", "hashing", "--out", str(out),
                 "--quiet"]) == 0
    ds = lance.dataset(str(out))
    assert ds.count_rows() > 0
    ds.delete("true")  # every row, as a team's cleanup job might
    assert lance.dataset(str(out)).count_rows() == 0
    return out


def test_health_names_the_empty_dataset(emptied, tmp_path, capsys):
    js = tmp_path / "h.json"
    assert main(["health", "--index", str(emptied), "--json", str(js)]) == 1
    text = capsys.readouterr().out
    assert "no chunk: every row was deleted (or none was written), so nothing can be retrieved" in text
    rows = {f["check"]: f for f in json.loads(js.read_text())["findings"]}["rows"]
    assert rows["severity"] == "unhealthy"


def test_report_says_so_in_one_line(emptied, capsys):
    code = main(["report", "--index", str(emptied), "--ground-truth", str(GOLDEN / "gt.jsonl"), "--reranker", "none"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.strip() == (f"error: {emptied}: holds no chunk: every row was deleted (or none was written), so there "
                           "is nothing to audit; health --index lists it")
