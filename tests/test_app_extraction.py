"""AppTest of the Index health page's extraction section on the three PDFs of :mod:`pdfdraw` (fake encoder),
and the sidebar's "Strip running headers and footers" choice."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import shown
from streamlit.testing.v1 import AppTest

import pdfdraw

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
NEEDLE = "The first page says that keys rotate every thirty days."


@pytest.fixture(scope="module", autouse=True)
def env(tmp_path_factory):
    root = tmp_path_factory.mktemp("extraction-app")
    docs = root / "docs"
    docs.mkdir()
    (docs / "blank.pdf").write_bytes(pdfdraw.blank_page_pdf())
    (docs / "handbook.pdf").write_bytes(pdfdraw.running_lines_pdf())
    (docs / "layout.pdf").write_bytes(pdfdraw.columns_and_table_pdf())
    gt = root / "gt.jsonl"
    gt.write_text(json.dumps({"id": "n1", "needle": NEEDLE, "questions": ["How often do keys rotate?"]}) + "\n",
                  encoding="utf-8")
    ood = root / "ood.txt"
    ood.write_text("how do I bake bread\n", encoding="utf-8")
    values = {"AUDIT_CORPUS": str(docs), "AUDIT_GROUND_TRUTH": str(gt), "AUDIT_OUT_OF_DOMAIN": str(ood),
              "AUDIT_MODEL": "hashing", "AUDIT_RERANKER": "none", "AUDIT_HOME": str(root / "home")}
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    yield values
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


def _page() -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    at.switch_page("app_pages/8_Index_health.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _table(at, *columns):
    for d in at.dataframe:
        if set(columns) <= set(d.value.columns):
            return d.value
    raise KeyError(columns)


def test_index_health_lists_each_finding_with_its_pages_and_chunks():
    at = _page()
    at.selectbox(key="health_index").set_value("E").run()
    found = _table(at, "finding", "evidence", "chunks reached")
    got = sorted(zip(found["document"], found["finding"], found["pages"], found["chunks reached"]))
    assert got == [("blank.pdf", "page without a text layer", "2", 1),
                   ("handbook.pdf", "running header or footer", "1–6", 3),
                   ("layout.pdf", "column interleaving", "1", 1),
                   ("layout.pdf", "table flattened into lines", "1", 1)]
    pages = _table(at, "page", "own characters", "garbled share")
    assert len(pages) == 3 + 6 + 1 and list(pages[pages["document"] == "blank.pdf"]["text layer"]) == [True, False,
                                                                                                        True]


def test_stripping_in_the_sidebar_removes_the_running_lines_and_says_so():
    at = _page()
    at.checkbox(key="strip_running_lines").check().run()
    assert not at.exception, [e.value for e in at.exception]
    at.selectbox(key="health_index").set_value("E").run()
    found = _table(at, "finding", "evidence")
    assert "running header or footer" not in set(found["finding"])
    said = " ".join(shown(c) for c in at.caption)
    assert "handbook.pdf: header 'Relay handbook - Internal' (pages 1–6) stripped at extraction" in said
