"""Time ``streamlit run app.py`` to the Strategies page showing numbers, with Playwright + Chromium.

Same harness as ``tests/test_browser.py`` (Debian's ``/usr/bin/chromium``, a
free localhost port), but the real model and a given ``AUDIT_HOME``:

- ``server start``: process start until ``/_stcore/health`` answers;
- ``first Strategies page``: a new browser tab on ``/strategies`` until the
  script has finished (no running status) and a table or metric is drawn —
  the server's first run: libraries imported, indexes read from disk (or built
  when ``AUDIT_HOME`` is cold), rankings computed;
- ``reload``: the same page again in the same server (Streamlit's caches warm).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


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


def measure(home: Path, timeout: float = 900) -> dict:
    """Seconds for: server start, first Strategies page with numbers, reload."""
    if not Path(CHROMIUM).exists():
        raise RuntimeError(f"{CHROMIUM} not found (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    env = {k: v for k, v in os.environ.items() if not k.startswith("AUDIT_")}
    env.update({"AUDIT_HOME": str(home), "AUDIT_RERANKER": "none"})
    port = _free_port()
    log = open(Path(home) / "bench-streamlit.log", "w")
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
                             "--server.port", str(port), "--server.address", "127.0.0.1",
                             "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"],
                            cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}/"
    out = {}
    try:
        while True:
            try:
                if urllib.request.urlopen(base + "_stcore/health", timeout=2).read() == b"ok":
                    break
            except OSError:
                pass
            if proc.poll() is not None or time.perf_counter() - t0 > 120:
                raise RuntimeError("streamlit did not start")
            time.sleep(0.1)
        out["server start"] = time.perf_counter() - t0
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=[
                "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"])
            pg = browser.new_page(viewport={"width": 1400, "height": 2000})
            t = time.perf_counter()
            pg.goto(base + "strategies", timeout=timeout * 1000)
            _settled(pg, timeout)
            out["first Strategies page with numbers"] = time.perf_counter() - t
            t = time.perf_counter()
            pg.reload()
            _settled(pg, timeout)
            out["reload (same server)"] = time.perf_counter() - t
            browser.close()
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()
    return {"seconds": out, "load": "{:.2f}/{:.2f}/{:.2f}".format(*os.getloadavg())}
