"""Real-browser tests of issue 39 (round 4) items that only a browser shows: the sidebar at 800 px, and a CSV
download that is written when clicked (never a media file the server already dropped).

The small corpus of tests/test_app.py, the fake encoder, reranker none.
"""

from __future__ import annotations

import time

import pytest
from streamlit_harness import app_env, launch_chromium, need_chromium, serve_app

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    need_chromium()
    pytest.importorskip("playwright.sync_api", reason="pip install playwright (requirements-dev.txt)")
    from test_app import _write_corpus

    root = tmp_path_factory.mktemp("round4")
    env = app_env(**_write_corpus(root), AUDIT_MODEL="hashing", AUDIT_RERANKER="none", AUDIT_HOME=str(root / "home"))
    with serve_app(env, root / "server.log") as app:
        yield app.url, root


def _idle(pg, timeout: float = 90) -> None:
    deadline = time.time() + timeout
    pg.wait_for_selector('[data-testid="stApp"]')
    time.sleep(1.0)
    while time.time() < deadline:
        if not pg.query_selector('[data-testid="stStatusWidget"]'):
            time.sleep(0.5)
            return
        time.sleep(0.3)
    raise AssertionError("the page did not finish running in time")


def _sidebar_width(pg) -> float:
    return pg.evaluate('() => { const b = document.querySelector(\'[data-testid="stSidebar"]\'); '
                       'return b ? b.getBoundingClientRect().width : 0; }')


@pytest.mark.parametrize("width, open_", [(800, False), (1400, True)])
def test_item9_the_sidebar_starts_collapsed_at_800_px_and_open_at_1400(server, width, open_):
    url, _ = server
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = launch_chromium(p)
        pg = browser.new_page(viewport={"width": width, "height": 1200})
        pg.set_default_timeout(60_000)
        pg.goto(url + "strategies")
        _idle(pg)
        time.sleep(1.0)  # the collapse animation
        w = _sidebar_width(pg)
        assert (w > 200) == open_, (width, w)
        if not open_:  # the user can open it again, and it stays open across pages of this tab
            pg.locator('[data-testid="stExpandSidebarButton"]').first.click()
            time.sleep(1.0)
            assert _sidebar_width(pg) > 200
            pg.locator('[data-testid="stSidebarNav"] a', has_text="Tokens").first.click()
            _idle(pg)
            time.sleep(1.0)
            assert _sidebar_width(pg) > 200
        browser.close()


def test_item9_a_csv_download_is_written_on_click(server, tmp_path):
    """The Overview's first table's CSV button: the file arrives (written on click, Streamlit's deferred download) with
    the table's header, and the click does not rerun the page."""
    url, _ = server
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = launch_chromium(p)
        pg = browser.new_page(viewport={"width": 1400, "height": 2400}, accept_downloads=True)
        pg.set_default_timeout(60_000)
        bad = []
        pg.on("response", lambda r: bad.append((r.status, r.url)) if r.status >= 400 else None)
        pg.goto(url)
        _idle(pg)
        # the first table's CSV button ("Download this audit", the decision record, comes before the tables)
        button = pg.locator('[data-testid="stDownloadButton"] button:visible', has_text="CSV").first
        with pg.expect_download() as info:
            button.click()
        path = tmp_path / info.value.suggested_filename
        info.value.save_as(str(path))
        text = path.read_text(encoding="utf-8")
        assert path.suffix == ".csv" and text.count("\n") >= 2 and "," in text.splitlines()[0]
        assert not pg.query_selector('[data-testid="stStatusWidget"]')  # no rerun after the click
        assert not bad, bad
        browser.close()
