"""Time ``streamlit run app.py`` to the Strategies page showing numbers, with Playwright + Chromium.

Same harness as the browser tests (``tests/streamlit_harness.py``: Debian's ``/usr/bin/chromium``, a
free localhost port), but the real model and a given ``AUDIT_HOME``:

- ``server start``: process start until ``/_stcore/health`` answers;
- ``first Strategies page``: a new browser tab on ``/strategies`` until the
  script has finished (no running status) and a table or metric is drawn —
  the server's first run: libraries imported, indexes read from disk (or built
  when ``AUDIT_HOME`` is cold), rankings computed;
- ``reload``: the same page again in the same server (Streamlit's caches warm).

The server runs what ``make run`` runs: the default encoder and reranker (the reranker is not packaged:
without a hub the server asks once, for at most 2 s, and runs without rerank) and no ``HF_HUB_OFFLINE``;
``measure(..., fast=True)`` is the faster setting (reranker none, HF_HUB_OFFLINE=1), named as such.

Beside each browser time, the server's own time for the same script run (``server: …``): from the top
of ``app.py`` to the end of ``page.run()``, written by the server under ``AUDIT_TIMINGS``
(:mod:`audit.timings`) into a temporary file and read back here.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

# The server and browser start the same way as in the browser tests: that code lives once, in
# tests/streamlit_harness.py (no pytest needed at import), and tests/ is not a package, hence the path.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from streamlit_harness import CHROMIUM, app_env, launch_chromium, serve_app  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from server_times import read_timings  # noqa: E402


def _settled(pg, timeout: float) -> None:
    deadline = time.time() + timeout
    pg.wait_for_selector('[data-testid="stApp"]', timeout=timeout * 1000)
    while time.time() < deadline:
        if pg.query_selector('[data-testid="stException"]'):
            raise RuntimeError("the Strategies page shows an exception: "
                               + pg.query_selector('[data-testid="stException"]').inner_text()[:200])
        running = pg.query_selector('[data-testid="stStatusWidget"]')
        numbers = pg.query_selector('[data-testid="stDataFrame"], [data-testid="stTable"], [data-testid="stMetric"]')
        if not running and numbers:
            time.sleep(0.2)  # still settled 0.2 s later (the status widget can lag the first element)
            if not pg.query_selector('[data-testid="stStatusWidget"]'):
                return
        time.sleep(0.1)
    raise TimeoutError("the Strategies page did not show numbers in time")


def measure(home: Path, timeout: float = 900, fast: bool = False) -> dict:
    """Seconds for: server start, first Strategies page with numbers, reload; and the server's time of the
    two page runs (``server: …``). ``fast``: reranker none and HF_HUB_OFFLINE=1 instead of make run's defaults;
    the result's ``setting`` names which."""
    if not Path(CHROMIUM).exists():
        raise RuntimeError(f"{CHROMIUM} not found (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    timings = Path(tempfile.mkdtemp(prefix="audit-dashboard-")) / "timings.jsonl"
    if fast:
        env = app_env(AUDIT_HOME=str(home), AUDIT_RERANKER="none", HF_HUB_OFFLINE="1", AUDIT_TIMINGS=str(timings))
    else:  # make run's: nothing set but the home and the timings file
        env = app_env(AUDIT_HOME=str(home), AUDIT_TIMINGS=str(timings))
        env.pop("HF_HUB_OFFLINE", None)
    out = {}
    t0 = time.perf_counter()
    with serve_app(env, Path(home) / "bench-streamlit.log", start_timeout=120, poll=0.1) as app:
        out["server start"] = time.perf_counter() - t0
        with sync_playwright() as p:
            browser = launch_chromium(p)
            pg = browser.new_page(viewport={"width": 1400, "height": 2000})
            t = time.perf_counter()
            pg.goto(app.url + "strategies", timeout=timeout * 1000)
            _settled(pg, timeout)
            out["first Strategies page with numbers"] = time.perf_counter() - t
            t = time.perf_counter()
            pg.reload()
            _settled(pg, timeout)
            out["reload (same server)"] = time.perf_counter() - t
            browser.close()
    runs = [r for r in read_timings(timings) if r["page"] == "Strategies"]
    for label, r in zip(("server: first Strategies page", "server: reload"), runs[-2:]):
        out[label] = r["seconds"]
    return {"seconds": out, "load": "{:.2f}/{:.2f}/{:.2f}".format(*os.getloadavg()),
            "setting": "fast setting (reranker none, HF_HUB_OFFLINE=1)" if fast else "make run's defaults"}
