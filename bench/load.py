"""Load test: N concurrent browser sessions walking every dashboard page (a benchmark, not a test).

Starts ``streamlit run app.py`` on the built-in corpus on a free **loopback** port with a fresh
``AUDIT_HOME`` (so the first sessions find nothing built: the audit is built once while every
session waits for it), opens ``--sessions`` headless-Chromium contexts (one browser, each context
its own Streamlit session) at the same moment, and has each walk every page ``--rounds`` times
through the sidebar's navigation links, as a user does (one Streamlit session per context).
It stops by itself: each page has a timeout, the whole run a deadline, the server is terminated.

Reports p50/p95/max page time (navigation until the script has finished and the provenance line
is drawn, seconds), the time of the first page of each session (it includes waiting for the
build), the server's resident memory (start, peak, end; MB, server process and children) and the
errors (exception boxes, pages that did not finish, HTTP responses >= 400 from the server): they
must be 0.

    python bench/load.py [--sessions 8] [--rounds 2] [--model hashing] [--deadline 900]

``--model hashing`` (default) is the fast fake encoder; ``--model all-MiniLM-L6-v2`` the real one
(a cold build embeds ~6,500 chunks: minutes on two cores).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

# The server and browser start the same way as in the browser tests: that code lives once, in
# tests/streamlit_harness.py (no pytest needed at import), and tests/ is not a package, hence the path.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from streamlit_harness import CHROMIUM, AppDidNotStart, app_env, launch_chromium, serve_app  # noqa: E402

PAGES = ["", "strategies", "query-explorer", "chunk-map", "threshold", "tokens", "citations", "index-health",
         "upgrade-diff"]


def _rss_mb(pid: int) -> float:
    import psutil

    try:
        p = psutil.Process(pid)
        return (p.memory_info().rss + sum(c.memory_info().rss for c in p.children(recursive=True))) / 1e6
    except psutil.Error:
        return float("nan")


def _percentile(xs: list[float], q: float) -> float:
    """Nearest-rank percentile (q in [0, 100])."""
    s = sorted(xs)
    return s[max(0, min(len(s) - 1, int(round(q / 100 * len(s) + 0.5)) - 1))] if s else float("nan")


def _probe(url: str) -> bool:
    """Streamlit's frontend looks for its server under the page's path first (``/strategies/_stcore/health``,
    a 404), then under ``/``: those probes are not errors."""
    return url.endswith(("/_stcore/health", "/_stcore/host-config")) and url.count("/") > 4


async def _settle(pg, timeout: float) -> str | None:
    """Wait until the script has finished and the provenance line is drawn; an error text, or None."""
    deadline = time.time() + timeout
    await pg.wait_for_selector('[data-testid="stApp"]', timeout=timeout * 1000)
    await asyncio.sleep(0.5)
    while time.time() < deadline:
        exc = await pg.query_selector('[data-testid="stException"]')
        if exc:
            return "exception: " + (await exc.inner_text())[:200]
        running = await pg.query_selector('[data-testid="stStatusWidget"]')
        footer = await pg.query_selector('[data-testid="stCaptionContainer"]:has-text("retrieval-audit")')
        if not running and footer:
            return None
        await asyncio.sleep(0.2)
    return "the page did not finish in time"


async def _session(browser, base: str, rounds: int, page_timeout: float, out: dict, i: int) -> None:
    ctx = await browser.new_context(viewport={"width": 1400, "height": 1800})
    pg = await ctx.new_page()
    pg.on("response", lambda r: out["http_errors"].append(f"{r.status} {r.url}")
          if r.status >= 400 and r.url.startswith(base) and not _probe(r.url) else None)
    for rnd in range(rounds):
        for name in PAGES:
            t0 = time.perf_counter()
            try:
                if rnd == 0 and name == "":  # open the dashboard once; then navigate as a user does, same session
                    await pg.goto(base, timeout=page_timeout * 1000)
                else:
                    await pg.click(f'[data-testid="stSidebarNav"] a[href="{base}{name}"]', timeout=page_timeout * 1000)
                    await pg.wait_for_url(base + name, timeout=page_timeout * 1000)
                err = await _settle(pg, page_timeout)
            except Exception as e:  # a timeout of goto or of a selector
                err = f"{type(e).__name__}: {str(e)[:200]}"
            dt = time.perf_counter() - t0
            if err:
                out["errors"].append(f"session {i} page {name or 'overview'}: {err}")
            elif rnd == 0 and name == "":
                out["first"].append(dt)
            else:
                out["times"].append(dt)
                out["by_page"].setdefault(name or "overview", []).append(dt)
    await ctx.close()


async def _drive(base: str, sessions: int, rounds: int, page_timeout: float) -> dict:
    from playwright.async_api import async_playwright

    out = {"times": [], "first": [], "errors": [], "http_errors": [], "by_page": {}}
    async with async_playwright() as p:
        browser = await launch_chromium(p)
        await asyncio.gather(*[_session(browser, base, rounds, page_timeout, out, i) for i in range(sessions)])
        await browser.close()
    return out


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sessions", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--model", default="hashing")
    ap.add_argument("--page-timeout", type=float, default=300.0, help="seconds for one page")
    ap.add_argument("--deadline", type=float, default=900.0, help="seconds for the whole run")
    ap.add_argument("--json", help="write the figures here")
    args = ap.parse_args(argv)
    if not Path(CHROMIUM).exists():
        sys.exit(f"{CHROMIUM} not found (apt-get install chromium)")
    home = Path(tempfile.mkdtemp(prefix="audit-load-"))
    env = app_env(AUDIT_HOME=str(home), AUDIT_RERANKER="none", AUDIT_MODEL=args.model, HF_HUB_OFFLINE="1")
    mem: list[float] = []
    stop = threading.Event()
    try:
        with serve_app(env, home / "server.log") as app:
            mem.append(_rss_mb(app.proc.pid))

            def sample() -> None:
                while not stop.wait(0.5):
                    mem.append(_rss_mb(app.proc.pid))

            threading.Thread(target=sample, daemon=True).start()
            t0 = time.perf_counter()
            try:
                out = asyncio.run(asyncio.wait_for(_drive(app.url, args.sessions, args.rounds, args.page_timeout),
                                                   args.deadline))
            except asyncio.TimeoutError:
                out = {"times": [], "first": [], "errors": [f"the whole run passed its {args.deadline:.0f} s deadline"],
                       "http_errors": [], "by_page": {}}
            wall = time.perf_counter() - t0
            stop.set()
            end_mem = _rss_mb(app.proc.pid)  # before the server is terminated
    except AppDidNotStart as e:
        sys.exit(str(e))
    finally:
        stop.set()
    t = out["times"]
    res = {
        "sessions": args.sessions, "rounds": args.rounds, "model": args.model, "pages_timed": len(t),
        "page_p50_s": round(statistics.median(t), 2) if t else None,
        "page_p95_s": round(_percentile(t, 95), 2) if t else None,
        "page_max_s": round(max(t), 2) if t else None,
        "first_page_s": [round(x, 1) for x in sorted(out["first"])],
        "page_p50_by_page_s": {k: round(statistics.median(v), 1) for k, v in out["by_page"].items()},
        "wall_s": round(wall, 1),
        "server_mb_start": round(mem[0], 0), "server_mb_peak": round(max(mem), 0), "server_mb_end": round(end_mem, 0),
        "errors": len(out["errors"]) + len(out["http_errors"]),
        "error_list": (out["errors"] + out["http_errors"])[:20],
        "load_1min": round(os.getloadavg()[0], 2), "cpus": os.cpu_count(),
    }
    print(json.dumps(res, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(res, indent=2) + "\n")
    return res


if __name__ == "__main__":
    sys.exit(1 if main()["errors"] else 0)
