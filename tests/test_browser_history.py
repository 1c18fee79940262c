"""Real-browser test of the History page: three CLI audits of data/example recorded in a private AUDIT_HOME, then
``streamlit run app.py`` (source "Your system" on the example, no model) opened on /history in Chromium: the
trend chart is drawn, with no exception box. Saves a screenshot in pytest's temporary folder (or $AUDIT_SHOTS)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from streamlit_harness import ROOT, app_env, launch_chromium, need_chromium, serve_app
from test_browser import _no_exception, _settle

pytestmark = pytest.mark.browser

EX = "data/example/"


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    need_chromium()
    pytest.importorskip("playwright.sync_api", reason="pip install playwright (requirements-dev.txt)")
    home = tmp_path_factory.mktemp("audit_home")
    chunks2 = home / "chunks2.jsonl"
    rows = [json.loads(x) for x in (ROOT / EX / "chunks.jsonl").read_text().splitlines() if x.strip()]
    rows[0]["text"] += " (re-chunked)"
    chunks2.write_text("".join(json.dumps(r) + "\n" for r in rows))
    from audit.cli import main

    saved = {k: os.environ.get(k) for k in ("AUDIT_HOME", "AUDIT_HISTORY")}
    os.environ.update({"AUDIT_HOME": str(home), "AUDIT_HISTORY": "on"})
    try:
        for run, chunks in (("before.trec", ROOT / EX / "chunks.jsonl"), ("after.trec", chunks2),
                            ("after.trec", chunks2)):
            extra = ["--score", "sys=cosine-distance"] if run == "before.trec" else []
            assert main(["report", "--queries", str(ROOT / EX / "queries.tsv"), "--qrels", str(ROOT / EX / "qrels.trec"),
                         "--run", f"sys={ROOT / EX / run}", "--chunks", str(chunks), "--series", "relay",
                         *extra]) == 0
    finally:
        for k, v in saved.items():
            os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)
    env = app_env(AUDIT_HOME=str(home), AUDIT_HISTORY="off", AUDIT_MODEL="hashing", AUDIT_RERANKER="none",
                  AUDIT_SOURCE="system", AUDIT_SYS_QUERIES=EX + "queries.tsv", AUDIT_SYS_QRELS=EX + "qrels.trec",
                  AUDIT_SYS_RUNS=f"after={EX}after.trec")
    with serve_app(env, home / "server.log") as app:
        yield app.url


def test_the_history_page_draws_the_trend(served, tmp_path):
    from playwright.sync_api import sync_playwright

    shots = Path(os.environ.get("AUDIT_SHOTS") or tmp_path / "shots")
    shots.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = launch_chromium(p)
        pg = browser.new_page(viewport={"width": 1400, "height": 2400})
        pg.set_default_timeout(60_000)
        pg.goto(served + "history")
        _settle(pg)
        _no_exception(pg, "history")
        main = pg.locator('[data-testid="stMain"]')
        text = main.inner_text()
        assert "Success@8 (recall@8) over time" in text and "Changes" in text
        chart = main.locator('[data-testid="stVegaLiteChart"]').first
        chart.wait_for()
        box = chart.bounding_box()
        assert box is not None and box["width"] > 300 and box["height"] > 100
        pg.screenshot(path=str(shots / "history.png"), full_page=True)
        browser.close()
