"""Real-browser test of issue 24 item 1: the sidebar's choices survive a stop, a source switch and a reload, a link
carries names only and restores them, and a name this dashboard does not offer is dropped with a notice.

AppTest keeps every widget's state between runs, so the loss this guards against (Streamlit dropping the state
of a widget a run did not draw) only shows in a browser. The small corpus of tests/test_app.py.
"""

from __future__ import annotations

import time
from urllib.parse import parse_qs, urlparse

import pytest
from streamlit_harness import app_env, launch_chromium, need_chromium, serve_app

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    need_chromium()
    pytest.importorskip("playwright.sync_api", reason="pip install playwright (requirements-dev.txt)")
    from test_app import _write_corpus

    root = tmp_path_factory.mktemp("sidebar")
    env = app_env(**_write_corpus(root), AUDIT_MODEL="hashing", AUDIT_RERANKER="none", AUDIT_HOME=str(root / "home"))
    with serve_app(env, root / "server.log") as app:
        yield app.url, root


@pytest.fixture()
def page(server):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = launch_chromium(p)
        pg = browser.new_page(viewport={"width": 1400, "height": 1800})
        pg.set_default_timeout(60_000)
        yield pg
        browser.close()


def _idle(pg, timeout: float = 90) -> None:
    """Until the script run ends (a run that stops early counts)."""
    deadline = time.time() + timeout
    pg.wait_for_selector('[data-testid="stApp"]')
    time.sleep(1.0)
    while time.time() < deadline:
        if not pg.query_selector('[data-testid="stStatusWidget"]'):
            time.sleep(0.5)
            return
        time.sleep(0.3)
    raise AssertionError("the page did not finish running in time")


def _open(pg, name: str) -> None:
    """Open a sidebar expander by its label (no-op when already open)."""
    exp = pg.locator('[data-testid="stSidebar"] [data-testid="stExpander"]', has_text=name).first
    if exp.locator('[data-testid="stExpanderDetails"]').is_hidden():
        exp.locator("summary").click()
        time.sleep(0.3)


def _chips(pg, label: str) -> list[str]:
    box = pg.locator('[data-testid="stMultiSelect"]', has_text=label).first
    box.locator(".react-aria-ComboBox").first.wait_for()
    return [t.strip() for t in box.locator(".react-aria-ComboBox [data-tag] > span").all_inner_texts()]


def _params(pg) -> dict:
    return parse_qs(urlparse(pg.url).query)


def _source(pg, label: str) -> None:
    pg.locator('[data-testid="stSidebar"] label', has_text=label).first.click()
    _idle(pg)


def test_choices_survive_a_source_switch_a_stop_and_a_reload(server, page):
    url, root = server
    page.goto(url + "?presets=A&presets=C&retrievers=dense&focus_strategy=C")  # a link a colleague sent
    _idle(page)
    _open(page, "Strategies and retrievers")
    assert _chips(page, "Preset strategies") == ["A", "C"]
    assert _chips(page, "Retrievers") == ["dense"]
    _source(page, "Your system (files)")  # draws none of the built-in widgets
    _source(page, "Built-in pipelines")
    _open(page, "Strategies and retrievers")
    assert _chips(page, "Preset strategies") == ["A", "C"]
    assert "Choose at least one strategy" not in page.inner_text("body")
    # a run that stops before the strategies are drawn: the folder emptied
    _open(page, "Corpus")
    box = page.locator('[data-testid="stSidebar"] input[aria-label="Folder path"]')
    folder = box.input_value()
    box.fill("")
    box.press("Enter")
    _idle(page)
    assert "Type the path of a folder" in page.inner_text("body")
    box.fill(folder)
    box.press("Enter")
    _idle(page)
    _open(page, "Strategies and retrievers")
    assert _chips(page, "Preset strategies") == ["A", "C"]
    q = _params(page)
    assert q.get("presets") == ["A", "C"] and q.get("retrievers") == ["dense"]
    assert not any(str(root) in v for vals in q.values() for v in vals), q  # never a typed path in the link
    assert "corpus_folder" not in q
    page.reload()  # F5: a new session, restored from the URL
    _idle(page)
    _open(page, "Strategies and retrievers")
    assert _chips(page, "Preset strategies") == ["A", "C"]
    assert "C: boundaries, 512 chars" in page.locator('[data-testid="stSidebar"]').inner_text()  # the focus's recipe
    assert _params(page).get("focus_strategy") == ["C"]


def test_a_name_not_offered_is_dropped_with_a_notice(server, page):
    url, _ = server
    page.goto(url + "?presets=Z&presets=B")
    _idle(page)
    assert "Not offered here, ignored from the link: presets=Z" in page.locator('[data-testid="stSidebar"]').inner_text()
    _open(page, "Strategies and retrievers")
    assert _chips(page, "Preset strategies") == ["B"]
