"""Real-browser test of the Strategies page's chunking sweep (issue 56): a sweep run by the CLI on the built-in corpus
(``python -m audit sweep --json``, the hashing encoder: no model weights) is uploaded on /strategies as a user would,
through the file input (AppTest cannot upload). The page draws the Pareto chart without an exception box, the points
of the best and of the cheapest configuration carry their configuration and reading (read from the chart's own
tooltip, found by the reading's colour), and the "why this configuration" paragraph is the sweep's, word for word.

The app serves a team's runs (data/example) so it settles in seconds: the sweep's section reads only the uploaded
file. Screenshots at 1400 and 800 px go to pytest's temporary folder (or $AUDIT_SHOTS).
"""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

import pytest

from streamlit_harness import app_env, launch_chromium, need_chromium, serve_app
from test_browser import _no_exception, _settle

pytestmark = pytest.mark.browser

EX = "data/example/"
#: A grid whose reading has all four kinds of point on the built-in corpus with the hashing encoder: the best
#: (boundaries+header 512/0 bm25), the cheapest not distinguishable from it (boundaries+header 512/0 dense), others
#: not distinguishable, and worse ones (every blind cut destroys needles); 8 points, none hiding another.
GRID = ["--target", "256,512", "--overlap", "0", "--header", "on", "--cut", "blind,boundaries",
        "--retrievers", "dense,bm25", "--at", "8"]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    need_chromium()
    pytest.importorskip("playwright.sync_api", reason="pip install playwright (requirements-dev.txt)")
    from audit.cli import main

    home = tmp_path_factory.mktemp("sweep_home")
    sweep = home / "sweep.json"
    saved = {k: os.environ.get(k) for k in ("AUDIT_HOME", "AUDIT_HISTORY")}
    os.environ.update({"AUDIT_HOME": str(home), "AUDIT_HISTORY": "off"})
    try:
        assert main(["sweep", "--model", "hashing", *GRID, "--quiet", "--json", str(sweep)]) == 0
    finally:
        for k, v in saved.items():
            os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)
    env = app_env(AUDIT_HOME=str(home), AUDIT_HISTORY="off", AUDIT_MODEL="hashing", AUDIT_RERANKER="none",
                  AUDIT_SOURCE="system", AUDIT_SYS_QUERIES=EX + "queries.tsv", AUDIT_SYS_QRELS=EX + "qrels.trec",
                  AUDIT_SYS_RUNS=f"before={EX}before.trec\nafter={EX}after.trec")
    with serve_app(env, home / "server.log") as app:
        yield app.url, sweep


def _idle(pg, timeout: float = 90) -> None:
    """Wait until the script run ends (no status widget)."""
    deadline = time.time() + timeout
    time.sleep(0.8)
    while time.time() < deadline:
        if not pg.query_selector('[data-testid="stStatusWidget"]'):
            time.sleep(0.4)
            return
        time.sleep(0.4)
    raise AssertionError("the page did not finish running in time")


def _marks(png: bytes) -> list[tuple[float, float]]:
    """Centres of the filled marks of a chart's screenshot: the coloured pixels (far from grey: not the axes, the
    grid, the text or the white), less every line thinner than 5 pixels (the error bars, the dashed front), grouped
    by contact. A legend's symbols are marks too; they show no tooltip."""
    import io

    import numpy as np
    from PIL import Image
    from scipy import ndimage

    px = np.asarray(Image.open(io.BytesIO(png)).convert("RGB")).astype(int)
    coloured = (px.max(axis=2) - px.min(axis=2)) > 40
    solid = ndimage.binary_opening(coloured, structure=np.ones((5, 5)))
    labels, n = ndimage.label(solid)
    return [(float(x), float(y)) for y, x in ndimage.center_of_mass(solid, labels, range(1, n + 1))]


def _tooltips(pg, chart) -> dict[str, str]:
    """Hover every filled mark of the chart (its centre, and 3 pixels above and below it: two points may touch);
    the configuration and the reading each tooltip shows (vega-tooltip's table: a row a field)."""
    box = chart.bounding_box()
    tip = pg.locator("#vg-tooltip-element")
    seen: dict[str, str] = {}
    for x, y in _marks(chart.screenshot()):
        for dy in (0, -3, 3):
            pg.mouse.move(box["x"] + x, box["y"] + y + dy)
            try:
                tip.wait_for(state="visible", timeout=800)
            except Exception:  # noqa: BLE001 — no tooltip here: a legend's symbol
                continue
            fields = {k.strip().rstrip(":"): v.strip() for k, v in tip.evaluate(
                "e => Array.from(e.querySelectorAll('tr')).map(r => [r.cells[0].innerText, r.cells[1].innerText])")}
            if "configuration" in fields:
                seen[fields["configuration"]] = fields.get("reading", "")
            pg.mouse.move(box["x"] + 1, box["y"] + 1)
            tip.wait_for(state="hidden", timeout=2000)
    return seen


def test_the_strategies_page_draws_an_uploaded_sweep(served, tmp_path):
    from playwright.sync_api import sync_playwright

    from audit.views.strategies import sweep_frame, sweep_why

    base, sweep_file = served
    sw = json.loads(sweep_file.read_text(encoding="utf-8"))["sweep"]
    frame = sweep_frame(sw)
    label = lambda c: f"{c['cut']}{'+header' if c['header'] else ''} {c['target']}/{c['overlap']} {c['retriever']}"  # noqa: E731
    best, cheapest = label(sw["best"]), label(sw["cheapest"])
    assert best != cheapest and set(frame["reading"]) == {"best", "cheapest", "not distinguishable", "worse"}
    shots = Path(os.environ.get("AUDIT_SHOTS") or tmp_path / "shots")
    shots.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = launch_chromium(p)
        try:
            pg = browser.new_page(viewport={"width": 1400, "height": 2400})
            pg.set_default_timeout(60_000)
            pg.goto(base + "strategies")
            _settle(pg)
            _no_exception(pg, "strategies")
            assert not pg.locator(".st-key-sweep_pareto").count()  # nothing drawn before a sweep is given
            pg.locator('.st-key-sweep_json input[type="file"]').set_input_files(str(sweep_file))
            _idle(pg)
            _no_exception(pg, "strategies with a sweep")
            chart = pg.locator('.st-key-sweep_pareto [data-testid="stVegaLiteChart"]')
            chart.wait_for()
            chart.scroll_into_view_if_needed()
            time.sleep(1.0)  # vega draws after the element is laid out
            size = chart.bounding_box()
            assert size["width"] > 600 and size["height"] > 300
            # the paragraph is the sweep's own, word for word (the JSON's choice put in words; the page's Markdown
            # escaping puts an invisible word joiner before "@" so no e-mail link is made)
            why = pg.locator(".st-key-sweep_why").inner_text().replace("\u2060", "")
            assert re.sub(r"\s+", " ", why).strip() == "Why this configuration: " + sweep_why(sw)
            # every point read back from the chart's own tooltips: the configuration and its reading, as the
            # sweep's JSON has them (points of one configuration can hide another: most of them, best and cheapest
            # always, are found)
            seen = _tooltips(pg, chart)
            expected = dict(zip(frame["configuration"], frame["reading"]))
            assert seen.items() <= expected.items() and len(seen) >= len(expected) - 2, (seen, expected)
            assert seen[best] == "best" and seen[cheapest] == "cheapest"
            pg.screenshot(path=str(shots / "strategies-sweep-1400.png"), full_page=True)
            pg.set_viewport_size({"width": 800, "height": 2400})
            time.sleep(1.5)
            _no_exception(pg, "strategies at 800 px")
            assert chart.bounding_box()["width"] < 800
            chart.screenshot(path=str(shots / "strategies-sweep-chart-800.png"))
            pg.screenshot(path=str(shots / "strategies-sweep-800.png"), full_page=True)
        finally:
            browser.close()
