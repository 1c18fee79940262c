"""Load test: N concurrent browser sessions walking every dashboard page (a benchmark, not a test).

Starts ``streamlit run app.py`` on the built-in corpus on a free **loopback** port with a fresh
``AUDIT_HOME`` (so the first sessions find nothing built: the audit is built once while every
session waits for it), opens ``--sessions`` headless-Chromium contexts (one browser, each context
its own Streamlit session) at the same moment, and has each walk every page ``--rounds`` times
through the sidebar's navigation links, as a user does (one Streamlit session per context).
It stops by itself: each page has a timeout, the whole run a deadline, the server is terminated.

On the Threshold page each session also moves the cut slider ``--slider-moves`` times (one step
right, one back, ... with the keyboard, as the browser test does).

Two times for every page view and slider move (seconds, p50/p95/max, per page and overall):

- **end-to-end**: from just before the click or key press until the server has sent the end of
  the script run it started (``script_finished`` on the page's websocket, so a short run is never
  missed) and the page shows it: script state not running, no element stale, the provenance line
  drawn;
- **server time**: the server's own time for that script run, from the top of ``app.py`` to the
  end of ``page.run()``, which the server writes when ``AUDIT_TIMINGS`` is set
  (:mod:`audit.timings`; read back by ``bench/server_times.py``). The browsers share the machine's
  cores with the server, so with many sessions end-to-end is mostly the browsers' own time.

Also the time of the first page of each session (it includes waiting for the build; left out of
the percentiles), the server's resident memory (start, peak, end; MB, server process and
children), the 1-minute load average (start, highest sampled, end) and the errors (exception
boxes, pages that did not finish, HTTP responses >= 400 from the server): they must be 0.

    python bench/load.py [--sessions 8] [--rounds 2] [--slider-moves 3] [--fast | --model M --reranker R] [--home H]
                         [--deadline 900]
                         [--json OUT] [--markdown] [--profile FOLDER]

``--profile FOLDER`` writes a pyinstrument report of every script run there (``AUDIT_PROFILE``).

By default the server runs what ``make run`` runs: the real encoder (all-MiniLM-L6-v2), the default
reranker (cross-encoder/ms-marco-MiniLM-L-6-v2, which is not packaged: without a hub the server asks once,
for at most 2 s, and runs without rerank) and the caller's environment minus ``HF_HUB_OFFLINE`` (a new user
has not set it). A cold build embeds ~6,500 chunks: minutes on two cores; ``--home FOLDER`` reuses a folder
whose embedding cache is already filled (the figures then say "warm cache"). ``--fast`` is the faster setting
measured beside it, named as such in the output: the hashing fake encoder, reranker none, HF_HUB_OFFLINE=1.
``--model`` / ``--reranker`` set one of them by hand.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
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

sys.path.insert(0, str(Path(__file__).resolve().parent))
from server_times import percentile, read_timings, split_runs  # noqa: E402

from audit.models.base import DEFAULT_MODEL, DEFAULT_RERANKER  # noqa: E402

#: url path → page title (``app.py``'s ``st.Page`` titles, which the server's timing lines carry)
PAGE_TITLES = {"overview": "Overview", "strategies": "Strategies", "query-explorer": "Query explorer",
               "chunk-map": "Chunk map", "threshold": "Threshold", "tokens": "Tokens", "citations": "Citations",
               "index-health": "Index health", "upgrade-diff": "Upgrade diff"}
PAGES = ["" if k == "overview" else k for k in PAGE_TITLES]


def _rss_mb(pid: int) -> float:
    import psutil

    try:
        p = psutil.Process(pid)
        return (p.memory_info().rss + sum(c.memory_info().rss for c in p.children(recursive=True))) / 1e6
    except psutil.Error:
        return float("nan")


def _probe(url: str) -> bool:
    """Streamlit's frontend looks for its server under the page's path first (``/strategies/_stcore/health``,
    a 404), then under ``/``: those probes are not errors."""
    return url.endswith(("/_stcore/health", "/_stcore/host-config")) and url.count("/") > 4


#: True once the page is drawn after a script run: state notRunning, no element stale, the provenance line present;
#: or an exception box.
_SETTLED = """() => {
    const app = document.querySelector('[data-testid="stApp"]');
    if (!app || app.getAttribute('data-test-script-state') !== 'notRunning') return false;
    if (document.querySelector('[data-testid="stException"]')) return {error: true};
    if (document.querySelector('[data-stale="true"]')) return false;
    const footer = Array.from(document.querySelectorAll('[data-testid="stCaptionContainer"]'))
        .some(e => e.textContent.includes('retrieval-audit'));
    return footer ? {error: false} : false;
}"""


class _Runs:
    """Counts the script runs the server reports as finished to one page, from its websocket frames
    (Streamlit's ``ForwardMsg.script_finished``), so the end of a run is known even when it is too short for
    the page's own state to show it."""

    def __init__(self, pg) -> None:
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        self.finished = 0
        self._msg = ForwardMsg
        self._changed = asyncio.Event()
        pg.on("websocket", lambda ws: ws.on("framereceived", self._frame))

    def _frame(self, payload) -> None:
        if not isinstance(payload, (bytes, bytearray)):
            return
        m = self._msg()
        try:
            m.ParseFromString(bytes(payload))
        except Exception:  # not a ForwardMsg: ignore
            return
        if m.WhichOneof("type") == "script_finished" and \
                m.script_finished == self._msg.ScriptFinishedStatus.FINISHED_SUCCESSFULLY:
            self.finished += 1
            self._changed.set()

    async def after(self, n: int, timeout: float) -> None:
        """Wait until more than ``n`` runs have finished (``asyncio.TimeoutError`` after ``timeout`` seconds)."""
        deadline = time.perf_counter() + timeout
        while self.finished <= n:
            self._changed.clear()
            await asyncio.wait_for(self._changed.wait(), max(0.01, deadline - time.perf_counter()))


async def _first_settle(pg, timeout: float) -> str | None:
    """The first page of a session (a new document): wait until the script has finished and the provenance
    line is drawn; an error text, or None."""
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


async def _timed(pg, runs: _Runs, action, timeout: float) -> tuple[float, str | None]:
    """End-to-end seconds of ``action`` (a click, a key press): from just before it until the script run it
    started has finished on the server and the page shows it with nothing stale; and an error text or None."""
    n = runs.finished
    t0 = time.perf_counter()
    await action()
    await runs.after(n, timeout)
    handle = await pg.wait_for_function(_SETTLED, polling="raf", timeout=timeout * 1000)
    dt = time.perf_counter() - t0
    err = None
    if (await handle.json_value())["error"]:
        exc = await pg.query_selector('[data-testid="stException"]')
        err = "exception: " + ((await exc.inner_text())[:200] if exc else "")
    return dt, err


async def _session(browser, base: str, rounds: int, slider_moves: int, page_timeout: float, out: dict,
                   i: int) -> None:
    ctx = await browser.new_context(viewport={"width": 1400, "height": 1800})
    pg = await ctx.new_page()
    runs = _Runs(pg)
    pg.on("response", lambda r: out["http_errors"].append(f"{r.status} {r.url}")
          if r.status >= 400 and r.url.startswith(base) and not _probe(r.url) else None)
    for rnd in range(rounds):
        for name in PAGES:
            label = name or "overview"
            try:
                if rnd == 0 and name == "":  # open the dashboard once; then navigate as a user does, same session
                    t0 = time.perf_counter()
                    await pg.goto(base, timeout=page_timeout * 1000)
                    err = await _first_settle(pg, page_timeout)
                    dt = time.perf_counter() - t0
                else:
                    link = pg.locator(f'[data-testid="stSidebarNav"] a[href="{base}{name}"]')
                    dt, err = await _timed(pg, runs, lambda: link.click(timeout=page_timeout * 1000), page_timeout)
            except Exception as e:  # a timeout of goto, of a selector or of the settled state
                dt, err = math.nan, f"{type(e).__name__}: {str(e)[:200]}"
            if err:
                out["errors"].append(f"session {i} page {label}: {err}")
                continue
            if rnd == 0 and name == "":
                out["first"].append(dt)
            else:
                out["times"].append(dt)
                out["by_page"].setdefault(label, []).append(dt)
            if name == "threshold":
                slider = pg.locator('[data-testid="stSlider"] input[type="range"], '
                                    '[data-testid="stSlider"] [role="slider"]').first  # as tests/test_browser.py
                for m in range(slider_moves):
                    key = "ArrowRight" if m % 2 == 0 else "ArrowLeft"  # one step (0.005) right, back, ...
                    try:
                        await slider.focus(timeout=page_timeout * 1000)
                        dt, err = await _timed(pg, runs, lambda: pg.keyboard.press(key), page_timeout)
                    except Exception as e:
                        dt, err = math.nan, f"{type(e).__name__}: {str(e)[:200]}"
                    if err:
                        out["errors"].append(f"session {i} slider move {m + 1}: {err}")
                    else:
                        out["slider"].append(dt)
    await ctx.close()


async def _drive(base: str, sessions: int, rounds: int, slider_moves: int, page_timeout: float) -> dict:
    from playwright.async_api import async_playwright

    out = _empty()
    async with async_playwright() as p:
        browser = await launch_chromium(p)
        await asyncio.gather(*[_session(browser, base, rounds, slider_moves, page_timeout, out, i)
                               for i in range(sessions)])
        await browser.close()
    return out


def _empty() -> dict:
    return {"times": [], "first": [], "errors": [], "http_errors": [], "by_page": {}, "slider": []}


def _stats(xs: list[float]) -> dict:
    """n, p50, p95, max in seconds (nearest-rank percentiles), rounded to the millisecond."""
    xs = [x for x in xs if math.isfinite(x)]
    if not xs:
        return {"n": 0, "p50": None, "p95": None, "max": None}
    return {"n": len(xs), "p50": round(statistics.median(xs), 3), "p95": round(percentile(xs, 95), 3),
            "max": round(max(xs), 3)}


def markdown(res: dict) -> str:
    """The figures of one run as the Markdown table of docs/benchmarks.md."""
    rows = ["| page | views | end-to-end p50 s | end-to-end p95 s | server p50 s | server p95 s |",
            "|---|---|---|---|---|---|"]

    def cell(v):
        return "–" if v is None else f"{v:.2f}"

    for label, title in PAGE_TITLES.items():
        e, sv = res["end_to_end_by_page"].get(label, _stats([])), res["server_by_page"].get(title, _stats([]))
        rows.append(f"| {title} | {e['n']} | {cell(e['p50'])} | {cell(e['p95'])} | {cell(sv['p50'])} | "
                    f"{cell(sv['p95'])} |")
    e, sv = res["end_to_end"], res["server"]
    rows.append(f"| **every page** | {e['n']} | {cell(e['p50'])} | {cell(e['p95'])} | {cell(sv['p50'])} | "
                f"{cell(sv['p95'])} |")
    e, sv = res["slider_end_to_end"], res["slider_server"]
    rows.append(f"| **slider move** (Threshold) | {e['n']} | {cell(e['p50'])} | {cell(e['p95'])} | "
                f"{cell(sv['p50'])} | {cell(sv['p95'])} |")
    first = res["first_page_s"]
    tail = (f"{res['setting']}; {res['sessions']} session(s) × {res['rounds']} rounds, encoder {res['model']}, "
            f"reranker {res['reranker']}, {res['cache']}; first page of each session (build included) {min(first):.1f}–{max(first):.1f} s end-to-end; errors "
            f"{res['errors']}; server memory start / peak / end {res['server_mb_start']:.0f} / "
            f"{res['server_mb_peak']:.0f} / {res['server_mb_end']:.0f} MB; load (1-min average) "
            f"{res['load_start']} at the start, {res['load_max']} at most, {res['load_end']} at the end "
            f"({res['cpus']} CPUs); wall {res['wall_s']:.0f} s") if first else "no session finished its first page"
    return "\n".join(rows) + "\n\n" + tail


def make_run_setting(args) -> dict:
    """What the server runs: ``make run``'s defaults unless ``--fast`` (named so in the output) or a hand choice.

    Returns ``{"name", "model", "reranker", "env"}``; ``env`` holds only the variables to set (none for the
    defaults, so the app's own defaults apply as under ``make run``).
    """
    if args.fast:
        return {"name": "fast setting (not make run's: hashing, reranker none, HF_HUB_OFFLINE=1)",
                "model": "hashing", "reranker": "none",
                "env": {"AUDIT_MODEL": "hashing", "AUDIT_RERANKER": "none", "HF_HUB_OFFLINE": "1"}}
    env = {}
    if args.model:
        env["AUDIT_MODEL"] = args.model
    if args.reranker:
        env["AUDIT_RERANKER"] = args.reranker
    name = "make run's defaults" if not env else "make run's defaults but " + ", ".join(
        f"{k}={v}" for k, v in env.items())
    return {"name": name, "model": args.model or DEFAULT_MODEL, "reranker": args.reranker or DEFAULT_RERANKER,
            "env": env}


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sessions", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--slider-moves", type=int, default=3, help="slider moves on each visit of Threshold")
    ap.add_argument("--model", default=None, help=f"embedding model (default: make run's, {DEFAULT_MODEL})")
    ap.add_argument("--reranker", default=None, help=f"cross-encoder (default: make run's, {DEFAULT_RERANKER})")
    ap.add_argument("--fast", action="store_true", help="the faster setting, not make run's: hashing encoder, "
                                                        "reranker none, HF_HUB_OFFLINE=1")
    ap.add_argument("--home", help="AUDIT_HOME to use (default a new empty folder: a cold build)")
    ap.add_argument("--page-timeout", type=float, default=300.0, help="seconds for one page")
    ap.add_argument("--deadline", type=float, default=900.0, help="seconds for the whole run")
    ap.add_argument("--json", help="write the figures here")
    ap.add_argument("--markdown", action="store_true", help="print the docs/benchmarks.md table too")
    ap.add_argument("--profile", help="folder for a pyinstrument report of every script run (AUDIT_PROFILE; the "
                                      "profiler's overhead is in the times then)")
    args = ap.parse_args(argv)
    if not Path(CHROMIUM).exists():
        sys.exit(f"{CHROMIUM} not found (apt-get install chromium)")
    home = Path(args.home).resolve() if args.home else Path(tempfile.mkdtemp(prefix="audit-load-"))
    timings = Path(tempfile.mkdtemp(prefix="audit-load-timings-")) / "timings.jsonl"
    setting = make_run_setting(args)
    env = app_env(AUDIT_HOME=str(home), AUDIT_TIMINGS=str(timings), **setting["env"],
                  **({"AUDIT_PROFILE": str(Path(args.profile).resolve())} if args.profile else {}))
    if "HF_HUB_OFFLINE" not in setting["env"]:
        env.pop("HF_HUB_OFFLINE", None)  # make run's: a new user's shell does not set it
    args.model = setting["model"]
    mem: list[float] = []
    loads: list[float] = [os.getloadavg()[0]]
    stop = threading.Event()
    try:
        with serve_app(env, home / "server.log") as app:
            mem.append(_rss_mb(app.proc.pid))

            def sample() -> None:
                while not stop.wait(0.5):
                    mem.append(_rss_mb(app.proc.pid))
                    loads.append(os.getloadavg()[0])

            threading.Thread(target=sample, daemon=True).start()
            t0 = time.perf_counter()
            try:
                out = asyncio.run(asyncio.wait_for(
                    _drive(app.url, args.sessions, args.rounds, args.slider_moves, args.page_timeout), args.deadline))
            except asyncio.TimeoutError:
                out = _empty()
                out["errors"].append(f"the whole run passed its {args.deadline:.0f} s deadline")
            wall = time.perf_counter() - t0
            stop.set()
            end_mem = _rss_mb(app.proc.pid)  # before the server is terminated
    except AppDidNotStart as e:
        sys.exit(str(e))
    finally:
        stop.set()
    server = split_runs(read_timings(timings))
    res = {
        "sessions": args.sessions, "rounds": args.rounds, "slider_moves": args.slider_moves, "model": args.model,
        "setting": setting["name"], "reranker": setting["reranker"],
        "cache": "warm cache" if args.home else "cold build",
        "end_to_end": _stats(out["times"]),
        "end_to_end_by_page": {k: _stats(v) for k, v in out["by_page"].items()},
        "slider_end_to_end": _stats(out["slider"]),
        "server": _stats([x for v in server["pages"].values() for x in v]),
        "server_by_page": {k: _stats(v) for k, v in server["pages"].items()},
        "slider_server": _stats(server["slider"]),
        "server_runs_not_ok": len(server["not_ok"]),
        "first_page_s": [round(x, 1) for x in sorted(out["first"])],
        "server_first_run_s": [round(x, 1) for x in sorted(server["first"])],
        "wall_s": round(wall, 1),
        "server_mb_start": round(mem[0], 0), "server_mb_peak": round(max(mem), 0), "server_mb_end": round(end_mem, 0),
        "errors": len(out["errors"]) + len(out["http_errors"]),
        "error_list": (out["errors"] + out["http_errors"])[:20],
        "load_start": round(loads[0], 2), "load_max": round(max(loads), 2), "load_end": round(os.getloadavg()[0], 2),
        "cpus": os.cpu_count(),
    }
    print(json.dumps(res, indent=2))
    if args.markdown:
        print("\n" + markdown(res))
    if args.json:
        Path(args.json).write_text(json.dumps(res, indent=2) + "\n")
    return res


if __name__ == "__main__":
    sys.exit(1 if main()["errors"] else 0)
