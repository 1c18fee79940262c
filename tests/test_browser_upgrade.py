"""Real-browser test of Upgrade diff's "another model" flow (issue 51): on the small corpus of tests/test_app.py,
with the hashing encoder before, the page builds the after index with the hashing encoder at 64 dims in a worker
thread (a progress bar), with the before index's chunking, then shows the carried cut, both outcomes, the trade-off
curves (an Altair chart, drawn) and the bill; a reload reuses the kept index."""

from __future__ import annotations

import time

import pytest
from streamlit_harness import app_env, launch_chromium, need_chromium, serve_app
from test_app import _write_corpus
from test_browser import _no_exception, _settle


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    need_chromium()
    pytest.importorskip("playwright.sync_api", reason="pip install playwright (requirements-dev.txt)")
    root = tmp_path_factory.mktemp("upgrade")
    env = app_env(**_write_corpus(root), AUDIT_MODEL="hashing", AUDIT_RERANKER="none", AUDIT_HOME=str(root / "home"))
    with serve_app(env, root / "server.log") as app:
        yield app.url, root / "home"


def _wait_for(page, text: str, timeout: float = 90) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if page.get_by_text(text, exact=False).count():
            return
        time.sleep(0.5)
    said = page.locator('[data-testid="stMain"]').inner_text()[:4000]
    raise AssertionError(f"{text!r} never appeared; the page says: {said}")


@pytest.mark.browser
def test_another_model_flow_in_a_browser(served, tmp_path):
    from playwright.sync_api import sync_playwright

    url, home = served
    with sync_playwright() as p:
        browser = launch_chromium(p)
        page = browser.new_page(viewport={"width": 1400, "height": 7000})
        page.set_default_timeout(60_000)
        page.goto(url + "upgrade-diff")
        _settle(page)
        _no_exception(page, "upgrade-diff")
        assert page.get_by_text("Before: this corpus's own index E, chunking E: boundaries cut", exact=False).count()
        box = page.get_by_role("textbox", name="Model after")
        box.fill("hashing:64")
        box.press("Enter")
        _settle(page)
        assert page.get_by_text("model hashing:64", exact=False).count()
        page.get_by_role("button", name="Build the after index").click()
        _wait_for(page, "The cut carried across")
        _settle(page)
        _no_exception(page, "upgrade-diff after the build")
        for text in ("Carried cut (after model)", "The two trade-off curves", "The bill",
                     "applied to hashing:64's distances"):
            assert page.get_by_text(text, exact=False).count(), text
        kept = sorted((home / "after").glob("after-*.sqlite"))
        assert len(kept) == 1
        stamp = kept[0].stat().st_mtime_ns
        # the chart is drawn: a Vega canvas or SVG inside the trade-off chart's element
        charts = page.locator('[data-testid="stVegaLiteChart"]')
        assert charts.count() >= 1
        page.screenshot(path=str(tmp_path / "upgrade.png"), full_page=True)
        page.reload()  # a new session: the model typed again finds the kept index, nothing is built
        _settle(page)
        box = page.get_by_role("textbox", name="Model after")
        box.fill("hashing:64")
        box.press("Enter")
        _wait_for(page, "The cut carried across")
        _no_exception(page, "upgrade-diff reloaded")
        assert kept[0].stat().st_mtime_ns == stamp  # the kept index, not a second build
        browser.close()
