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
        time.sleep(0.3)
    for label, value in AREAS.items():
        box = pg.locator(f'[data-testid="stSidebar"] textarea[aria-label^="{label}"]')
        box.fill(value)
        box.press("Control+Enter")
        time.sleep(0.3)
    _settle(pg)
    for name in PAGES:
        pg.locator('[data-testid="stSidebarNav"] a', has_text=name).first.click()
        time.sleep(1.0)
        _settle(pg)
        _no_exception(pg, name)
        pg.screenshot(path=str(shots / f"{name.lower().replace(' ', '-')}.png"), full_page=True)
        text = _main_text(pg)
        assert "your system (before.trec, after.trec)" in text, name  # the system's provenance line
        if name == "Citations":
            assert "Chunks whose quote differs: b2, k4" in text
        if name == "Strategies":
            assert "before (cosine-distance), after (similarity)" in text
        if name == "Upgrade diff":
            assert "Sign tests, after (after) vs before (before)" in text

