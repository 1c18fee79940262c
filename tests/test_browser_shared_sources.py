"""Real-browser test of issue 54, item 2: a team's dashboard shares named sources, configured once in audit.toml.

One ``streamlit run app.py`` in shared mode, three browser sessions, no restart:

1. reviewer A finds no configured corpus and uploads a document: the sidebar says the upload is this session's
   alone and which audit.toml table shares it by name;
2. the operator adds ``[corpora] team-docs`` (data/example/docs: 3 documents) and ``[systems.relay]`` (data/example's
   files) to the running dashboard's audit.toml;
3. reviewer B opens the dashboard: the configured corpus is read at once (3 documents), nothing uploaded;
   under *Your system (files)* the configured system is offered by name (2 runs, 9 judged queries);
4. reviewer A's session, rerun, keeps its upload and now offers the configured corpus too: the same server
   process all along (no session dropped).
"""

from __future__ import annotations

import time

import pytest
from streamlit_harness import ROOT, app_env, launch_chromium, need_chromium, serve_app

pytestmark = pytest.mark.browser

EX = ROOT / "data" / "example"
BASE = 'shared = true\n[models]\nfast = "hashing"\n'
NAMED = f'''[corpora]
team-docs = "{EX / 'docs'}"
[systems.relay]
queries = "{EX / 'queries.tsv'}"
qrels = "{EX / 'qrels.trec'}"
chunks = "{EX / 'chunks.jsonl'}"
corpus = "{EX / 'docs'}"
runs = {{ before = "{EX / 'before.trec'}", after = "{EX / 'after.trec'}" }}
scores = {{ before = "cosine-distance" }}
'''


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    need_chromium()
    pytest.importorskip("playwright.sync_api", reason="pip install playwright (requirements-dev.txt)")
    root = tmp_path_factory.mktemp("shared")
    toml = root / "audit.toml"
    toml.write_text(BASE, encoding="utf-8")
    env = app_env(AUDIT_CONFIG=str(toml), AUDIT_RERANKER="none", AUDIT_HOME=str(root / "home"))
    with serve_app(env, root / "server.log") as app:
        yield app, toml


def _idle(pg, timeout: float = 90) -> None:
    """Until the script run ends (a run that stops early, with no footer, counts)."""
    deadline = time.time() + timeout
    pg.wait_for_selector('[data-testid="stApp"]')
    time.sleep(1.0)
    while time.time() < deadline:
        if not pg.query_selector('[data-testid="stStatusWidget"]'):
            time.sleep(0.5)
            if not pg.query_selector('[data-testid="stStatusWidget"]'):
                return
        time.sleep(0.3)
    raise AssertionError("the page did not finish running in time")


def _open(pg, name: str) -> None:
    exp = pg.locator('[data-testid="stSidebar"] [data-testid="stExpander"]', has_text=name).first
    if exp.locator('[data-testid="stExpanderDetails"]').is_hidden():
        exp.locator("summary").click()
        time.sleep(0.3)


def _metric(pg, label: str) -> str:
    box = pg.locator('[data-testid="stMetric"]', has_text=label).first
    return box.locator('[data-testid="stMetricValue"]').inner_text().strip()


def _no_exception(pg) -> None:
    boxes = pg.query_selector_all('[data-testid="stException"]')
    assert not boxes, " | ".join(b.inner_text()[:300] for b in boxes)


def test_a_source_configured_once_is_offered_by_name_to_every_session(served, tmp_path):
    from playwright.sync_api import sync_playwright

    app, toml = served
    pid = app.proc.pid
    with sync_playwright() as p:
        browser = launch_chromium(p)
        a = browser.new_context(viewport={"width": 1400, "height": 1800}).new_page()
        a.set_default_timeout(60_000)
        a.goto(app.url)
        _idle(a)
        _no_exception(a)
        assert "names no corpus: ask its operator to add one under [corpora]" in a.inner_text("body")
        # reviewer A uploads a document: the sidebar says it stays in the session, and how to share it by name
        _open(a, "Corpus")
        a.locator('[data-testid="stSidebar"] label', has_text="upload files").first.click()
        _idle(a)
        a.locator('[data-testid="stSidebar"] [data-testid="stFileUploader"] input[type="file"]').first \
            .set_input_files(str(EX / "docs" / "limits.md"))
        _idle(a)
        side = a.locator('[data-testid="stSidebar"]').inner_text()
        assert "Uploaded files stay in this session: another reviewer uploads them again." in side
        assert "[corpora]" in side and "offered at the next click, with no restart" in side
        assert _metric(a, "Documents") == "1"
        a.screenshot(path=str(tmp_path / "a-upload.png"))

        toml.write_text(BASE + NAMED, encoding="utf-8")  # the operator names the folder and the team's files once

        b = browser.new_context(viewport={"width": 1400, "height": 1800}).new_page()
        b.set_default_timeout(60_000)
        b.goto(app.url)
        _idle(b)
        _no_exception(b)
        assert _metric(b, "Documents") == "3"  # limits.md, ops/backups.md, ops/keys.md: nothing uploaded
        _open(b, "Corpus")
        assert "configured corpus" in b.locator('[data-testid="stSidebar"]').inner_text()
        b.screenshot(path=str(tmp_path / "b-named.png"))
        # the team's files, by name: Your system (files) → configured → relay
        b.locator('[data-testid="stSidebar"] label', has_text="Your system (files)").first.click()
        _idle(b)
        _no_exception(b)
        side = b.locator('[data-testid="stSidebar"]').inner_text()
        assert "2 runs (before, after) · 9 judged queries" in side
        b.screenshot(path=str(tmp_path / "b-system.png"))
        chosen = b.locator('[data-testid="stSidebar"] [data-testid="stSelectbox"]', has_text="System").first
        assert "relay" in chosen.inner_text() + (chosen.locator("input").first.input_value() if chosen.locator(
            "input").count() else "")
        b.screenshot(path=str(tmp_path / "b-system.png"))

        # reviewer A, rerun (Streamlit's R key): the upload is kept, the configured corpus is offered beside it
        a.locator("body").press("r")
        _idle(a)
        _open(a, "Corpus")
        side = a.locator('[data-testid="stSidebar"]').inner_text()
        assert "configured corpus" in side and _metric(a, "Documents") == "1"
        browser.close()
    assert app.proc.poll() is None and app.proc.pid == pid  # one server process: no restart, no session dropped
