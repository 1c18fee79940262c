"""Real-browser test of the source "Your system (files)": data/example loaded through the sidebar, every page.

Starts ``streamlit run app.py`` (built-in pipelines by default, the fake encoder), chooses "Your system
(files)" in the sidebar, types the example's paths (relative to the working directory, an allowed root)
and walks every page through the navigation (one session): no exception box, the two wrong chunks
(b2, k4: data/example/README.md) on Citations, both runs on Strategies and Upgrade diff. Saves a
screenshot per page (1400 px wide) in pytest's temporary folder, or ``$AUDIT_SHOTS`` when set.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from test_browser import _no_exception, _settle, page, server  # noqa: F401  (fixtures)

pytestmark = pytest.mark.browser

EX = "data/example/"
FIELDS = {
    "Queries": EX + "queries.tsv", "Judgments": EX + "qrels.trec", "Chunks": EX + "chunks.jsonl",
    "Documents folder": EX + "docs", "Out-of-domain queries": EX + "ood-queries.tsv",
}
AREAS = {
    "Runs, one": f"before={EX}before.trec\nafter={EX}after.trec",
    "What each run": "before=cosine-distance",
    "Out-of-domain runs": f"before={EX}ood-before.trec\nafter={EX}ood-after.trec",
}
PAGES = ["Overview", "Strategies", "Query explorer", "Chunk map", "Threshold", "Tokens", "Citations",
         "Index health", "Upgrade diff"]


def _idle(pg, timeout: float = 90) -> None:
    """Wait until no script run is in flight (the page may stop early, before the footer :func:`_settle` waits for)."""
    deadline = time.time() + timeout
    time.sleep(0.5)
    while time.time() < deadline:
        if not pg.query_selector('[data-testid="stStatusWidget"]'):
            time.sleep(0.3)
            if not pg.query_selector('[data-testid="stStatusWidget"]'):
                return
        time.sleep(0.3)
    raise AssertionError("the script run did not end in time")


def _main_text(pg) -> str:
    return pg.locator('[data-testid="stMain"]').inner_text()


def test_your_system_on_every_page(server, page, tmp_path):  # noqa: F811
    shots = Path(os.environ.get("AUDIT_SHOTS") or tmp_path / "shots")
    shots.mkdir(parents=True, exist_ok=True)
    pg = page
    pg.goto(server)
    _settle(pg)
    pg.locator('[data-testid="stSidebar"] label', has_text="Your system (files)").click()
    pg.wait_for_selector('[data-testid="stSidebar"] :text("paths on disk")')
    for label, value in FIELDS.items():
        box = pg.locator(f'[data-testid="stSidebar"] input[aria-label^="{label}"]')
        box.fill(value)
        box.press("Enter")
        _idle(pg)  # the rerun done: while it runs, the sidebar can hold the old and the new input at once
    for label, value in AREAS.items():
        box = pg.locator(f'[data-testid="stSidebar"] textarea[aria-label^="{label}"]')
        box.fill(value)
        box.press("Control+Enter")
        _idle(pg)
    _settle(pg)
    for name in PAGES:
        pg.locator('[data-testid="stSidebarNav"] a', has_text=name).first.click()
        time.sleep(1.0)
        _settle(pg)
        _no_exception(pg, name)
        pg.screenshot(path=str(shots / f"{name.lower().replace(' ', '-')}.png"), full_page=True)
        text = _main_text(pg)
        assert "run before before.trec (" in text and "run after after.trec (" in text, name  # the provenance line
        if name == "Citations":
            assert "Chunks whose quote differs: b2, k4" in text
        if name == "Strategies":
            assert "Runs: before (cosine distance), after (similarity)" in text
        if name == "Upgrade diff":
            assert "Paired sign tests, after vs before" in text



def _idle(pg, timeout: float = 90) -> None:
    """Wait until the script run ends (no status widget); unlike _settle, a page that stops early counts."""
    deadline = time.time() + timeout
    time.sleep(1.0)
    while time.time() < deadline:
        if not pg.query_selector('[data-testid="stStatusWidget"]'):
            time.sleep(0.5)
            return
        time.sleep(0.5)
    raise AssertionError("the page did not finish running in time")


def test_your_system_uploaded(server, page, tmp_path):  # noqa: F811
    """The upload route (AppTest cannot drive st.file_uploader): queries, judgments and two runs uploaded in the
    browser; the runs are named after their files and both reach Strategies; a broken third run is reported
    (file and line) while the two good ones are still audited."""
    pg = page
    pg.goto(server)
    _settle(pg)
    pg.locator('[data-testid="stSidebar"] label', has_text="Your system (files)").click()
    pg.wait_for_selector('[data-testid="stSidebar"] :text("paths on disk")')
    pg.locator('[data-testid="stSidebar"] label', has_text="upload").first.click()
    _idle(pg)
    root = Path(__file__).resolve().parent.parent / EX
    uploaders = pg.locator('[data-testid="stSidebar"] [data-testid="stFileUploader"]')
    by_label = {u.inner_text().splitlines()[0]: u for u in uploaders.all()}

    def upload(prefix: str, files) -> None:
        (box,) = [u for label, u in by_label.items() if label.startswith(prefix)]
        box.locator('input[type="file"]').set_input_files(files)
        time.sleep(0.5)
        _idle(pg)

    broken = tmp_path / "broken.trec"
    broken.write_text("q1 Q0 b3 one 0.31 broken\n", encoding="utf-8")  # rank "one" is not a number
    upload("Queries", str(root / "queries.tsv"))
    upload("Judgments", str(root / "qrels.trec"))
    upload("Runs", [str(root / "before.trec"), str(root / "after.trec"), str(broken)])
    _no_exception(pg, "upload")
    sidebar = pg.locator('[data-testid="stSidebar"]').inner_text()
    assert "broken.trec:1" in sidebar or "broken.trec:1" in _main_text(pg)
    pg.locator('[data-testid="stSidebarNav"] a', has_text="Strategies").first.click()
    time.sleep(1.0)
    _settle(pg)
    _no_exception(pg, "Strategies after upload")
    text = _main_text(pg)
    assert "run before before.trec (" in text and "run after after.trec (" in text
