"""Real-browser tests of issue 54, items 3 and 8 (built before, tested with AppTest only).

Item 3: the dashboard offers the decision record as a PDF where Chromium and Playwright for Python are installed (what
``make run`` installs): the PDF button hands over a real PDF; where Playwright is missing while Chromium is there,
the page names Playwright, never "no Chromium here". Playwright is hidden from the second server by a
``sitecustomize`` that sets ``sys.modules["playwright"] = None`` (``importlib.util.find_spec`` then answers None).

Item 8: History records an audit when a person asks (its button), never on every sidebar edit, and its times are
24-hour UTC: the trend's tooltip reads the record's own ``created_at`` hour (21:xx, not 09:xx, in the evening).
"""

from __future__ import annotations

import re
import sqlite3
import time

import pytest
from streamlit_harness import ROOT, app_env, launch_chromium, need_chromium, serve_app
from test_browser import _no_exception, _settle

pytestmark = pytest.mark.browser

EX = "data/example/"
SYSTEM = dict(AUDIT_MODEL="hashing", AUDIT_RERANKER="none", AUDIT_SOURCE="system",
              AUDIT_SYS_QUERIES=EX + "queries.tsv", AUDIT_SYS_QRELS=EX + "qrels.trec",
              AUDIT_SYS_RUNS=f"before={EX}before.trec\nafter={EX}after.trec", AUDIT_SYS_SCORES="before=cosine-distance")


@pytest.fixture(scope="module")
def browser():
    need_chromium()
    pytest.importorskip("playwright.sync_api", reason="pip install playwright (requirements-dev.txt)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = launch_chromium(p)
        yield b
        b.close()


def _idle(pg, timeout: float = 90) -> None:
    deadline = time.time() + timeout
    time.sleep(0.8)
    while time.time() < deadline:
        if not pg.query_selector('[data-testid="stStatusWidget"]'):
            time.sleep(0.4)
            if not pg.query_selector('[data-testid="stStatusWidget"]'):
                return
        time.sleep(0.3)
    raise AssertionError("the script run did not end in time")


def test_item3_the_pdf_button_gives_a_pdf_and_a_missing_playwright_is_named(browser, tmp_path):
    home = tmp_path / "home"
    with serve_app(app_env(AUDIT_HOME=str(home), AUDIT_HISTORY="off", **SYSTEM), tmp_path / "server.log") as app:
        pg = browser.new_page(accept_downloads=True, viewport={"width": 1400, "height": 1800})
        pg.set_default_timeout(90_000)
        pg.goto(app.url)
        _settle(pg)
        _no_exception(pg, "overview")
        body = pg.inner_text("body")
        assert "No Chromium here" not in body and "no Chromium here" not in body
        with pg.expect_download(timeout=120_000) as dl:
            pg.get_by_role("button", name="PDF", exact=True).click()
        path = tmp_path / dl.value.suggested_filename
        dl.value.save_as(path)
        assert path.suffix == ".pdf" and path.read_bytes()[:5] == b"%PDF-" and path.stat().st_size > 10_000
        pg.close()
    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "sitecustomize.py").write_text("import sys\nsys.modules['playwright'] = None  # as if not installed\n")
    env = app_env(AUDIT_HOME=str(home), AUDIT_HISTORY="off", PYTHONPATH=str(shim), **SYSTEM)
    with serve_app(env, tmp_path / "server2.log") as app:
        pg = browser.new_page(viewport={"width": 1400, "height": 1800})
        pg.set_default_timeout(90_000)
        pg.goto(app.url)
        _settle(pg)
        _no_exception(pg, "overview")
        main = pg.locator('[data-testid="stMain"]').inner_text()
        assert re.search(r"Chromium is here \(chromium\) but Playwright for Python, which drives it, is not "
                         r"installed: run make run\s+again", main), main[:2000]
        assert "no Chromium here" not in main.lower().replace("chromium is here", "")
        assert pg.get_by_role("button", name="PDF", exact=True).count() == 0
        pg.screenshot(path=str(tmp_path / "no-playwright.png"))
        pg.close()


def _records(db) -> list[tuple[int, str]]:
    with sqlite3.connect(db) as c:
        return c.execute("SELECT id, created_at FROM audit_history_records ORDER BY id").fetchall()


def test_item8_history_records_when_asked_and_reads_24_hour_time(browser, tmp_path):
    home = tmp_path / "home"
    with serve_app(app_env(AUDIT_HOME=str(home), AUDIT_HISTORY="on", **SYSTEM), tmp_path / "server.log") as app:
        pg = browser.new_page(viewport={"width": 1400, "height": 2000})
        pg.set_default_timeout(90_000)
        pg.goto(app.url + "history")
        _settle(pg)
        _no_exception(pg, "history")
        db = home / "history.sqlite"
        assert len(_records(db)) == 1  # the session's configuration, once
        assert "An audit is recorded when you ask" in pg.locator('[data-testid="stMain"]').inner_text()
        # sidebar edits (the run of the detail pages, back and forth) and reruns write nothing
        for run in ("after", "before", "after"):
            box = pg.locator('[data-testid="stSidebar"] [data-testid="stSelectbox"]').first
            box.click()
            pg.get_by_role("option", name=run, exact=True).click()
            _idle(pg)
        pg.keyboard.press("Escape")
        pg.locator("h1", has_text="History").click()  # the focus leaves the select box: R reruns the script
        pg.keyboard.press("r")
        _idle(pg)
        assert len(_records(db)) == 1
        # a person asks: one record more, and the page says which
        pg.get_by_role("button", name="Record this audit").click()
        _idle(pg)
        rows = _records(db)
        assert len(rows) == 2
        assert f"Recorded as record {rows[-1][0]}" in pg.locator('[data-testid="stMain"]').inner_text()
        # the trend's tooltip gives the record's time in 24-hour UTC, the hour as stored (created_at is ISO UTC)
        hours = {ts[11:16] for _, ts in rows}
        chart = pg.locator('[data-testid="stVegaLiteChart"]').first
        chart.wait_for()
        chart.scroll_into_view_if_needed()
        box = chart.bounding_box()
        seen = ""
        for fx in [i / 40 for i in range(2, 39)]:
            for fy in (0.2, 0.3, 0.4, 0.5, 0.6):
                pg.mouse.move(box["x"] + fx * box["width"], box["y"] + fy * box["height"])
                tip = pg.query_selector("#vg-tooltip-element.visible")
                if tip is not None and re.search(r"\d{4}-\d{2}-\d{2}|[A-Z][a-z]{2} \d{2}, \d{4}", tip.inner_text()):
                    seen = tip.inner_text()
                    break
            if seen:
                break
        pg.screenshot(path=str(tmp_path / "history.png"), full_page=True)
        assert seen, "no tooltip found over the trend"
        when = re.search(r"(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}):\d{2} UTC", seen)
        assert when is not None and when.group(2) in hours, (seen, hours)
        assert not re.search(r"\b(AM|PM)\b", seen)
        pg.close()
