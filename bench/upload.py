"""Time an upload of 11 small documents in the dashboard's sidebar (issue 39, item 5), with Playwright + Chromium.

The server runs what ``make run`` runs (default encoder and reranker, no ``HF_HUB_OFFLINE``) on a free
loopback port (``tests/streamlit_harness.py``) and is stopped at the end. The browser opens the first
page (built-in corpus), waits until it has settled, then chooses **Corpus → upload files** and, ``--pick``
seconds later (a user choosing files in the dialog; default 5), gives the file input 11 documents of mixed
formats written here: 5 markdown files, a .docx (python-docx), an .xlsx (openpyxl), a .vtt, a .srt, a .csv
and a PDF (fpdf2). Timed:

- ``upload → first page settled``: from ``set_input_files`` until the script has stopped running and the
  sidebar's caption counts the 11 documents;
- ``rerun after the upload``: a reload of the page in the same session would lose the upload, so a second
  script run is asked with the ``r`` key (Streamlit's "Rerun") and timed the same way.

The server's own time of each script run (``AUDIT_TIMINGS``) is read back beside them; ``--profile FOLDER``
writes a pyinstrument report of every script run (``AUDIT_PROFILE``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from streamlit_harness import CHROMIUM, app_env, launch_chromium, serve_app  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from server_times import read_timings  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def write_documents(folder: Path) -> list[Path]:
    """Write the 11 documents into ``folder``: 5 markdown, docx, xlsx, vtt, srt, csv, pdf; return their paths."""
    import docx
    import openpyxl
    from fpdf import FPDF

    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for i, topic in enumerate(["backups", "keys", "limits", "rotation", "alerts"]):
        p = folder / f"{topic}.md"
        p.write_text(f"# {topic.title()}\n\n## Scope\n\nThe {topic} policy covers service {i}. Retention is "
                     f"{i + 3} days and owners review it weekly.\n\n## Steps\n\n1. Check the {topic} dashboard.\n"
                     f"2. Page the on-call engineer if the {topic} check fails twice.\n", encoding="utf-8")
        out.append(p)
    d = docx.Document()
    d.add_heading("Runbook", 0)
    d.add_heading("Restore", 1)
    d.add_paragraph("Restore the snapshot into a scratch cluster, then compare row counts.")
    out.append(folder / "runbook.docx")
    d.save(out[-1])
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Rota"
    for row in [("week", "primary", "secondary"), (1, "Ana", "Bo"), (2, "Bo", "Cy"), (3, "Cy", "Ana")]:
        ws.append(row)
    out.append(folder / "oncall.xlsx")
    wb.save(out[-1])
    (folder / "standup.vtt").write_text("WEBVTT\n\n00:01.000 --> 00:04.000\n<v Ana>The restore drill passed.\n\n"
                                        "00:04.500 --> 00:08.000\n<v Bo>Keys rotate on Monday.\n", encoding="utf-8")
    (folder / "drill.srt").write_text("1\n00:00:01,000 --> 00:00:03,000\nStart the drill.\n\n2\n"
                                      "00:00:03,500 --> 00:00:06,000\nStop the writers first.\n", encoding="utf-8")
    (folder / "incidents.csv").write_text("id,summary,minutes\r\n1,\"disk full, node 3\",42\r\n2,cert expired,17\r\n",
                                          encoding="utf-8")
    out += [folder / "standup.vtt", folder / "drill.srt", folder / "incidents.csv"]
    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("helvetica", size=12)
    pdf.multi_cell(0, 8, "Capacity review\n\nThe cluster holds 40 TB; growth is 2 TB a month.")
    out.append(folder / "capacity.pdf")
    pdf.output(str(out[-1]))
    return out


def _settled(pg, expect: str, timeout: float) -> None:
    """Wait until no script runs and the sidebar shows ``expect`` (or raise on an exception box)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        if pg.query_selector('[data-testid="stException"]'):
            raise RuntimeError("exception: " + pg.query_selector('[data-testid="stException"]').inner_text()[:300])
        if not pg.query_selector('[data-testid="stStatusWidget"]') and expect in \
                pg.locator('[data-testid="stSidebar"]').inner_text():
            time.sleep(0.3)  # still settled 0.3 s later (the status widget can lag)
            if not pg.query_selector('[data-testid="stStatusWidget"]'):
                return
        time.sleep(0.1)
    raise TimeoutError(f"the page did not settle on {expect!r} in {timeout:g} s")


def measure(home: Path, profile: str | None = None, timeout: float = 240, pick: float = 5.0) -> dict:
    """Seconds of the upload's first settled page and of one rerun after it, with the server's times."""
    from playwright.sync_api import sync_playwright

    tmp = Path(tempfile.mkdtemp(prefix="audit-upload-"))
    files = write_documents(tmp / "docs")
    timings = tmp / "timings.jsonl"
    extra = {"AUDIT_PROFILE": profile} if profile else {}
    env = app_env(AUDIT_HOME=str(home), AUDIT_TIMINGS=str(timings), **extra)
    env.pop("HF_HUB_OFFLINE", None)  # as make run leaves it
    out: dict = {}
    with serve_app(env, tmp / "streamlit.log", start_timeout=120, poll=0.1) as app:
        with sync_playwright() as p:
            browser = launch_chromium(p)
            pg = browser.new_page(viewport={"width": 1400, "height": 1600})
            t = time.perf_counter()
            pg.goto(app.url, timeout=timeout * 1000)
            _settled(pg, "Corpus", timeout)  # the sidebar's expanders are drawn, closed
            out["first page (built-in corpus)"] = time.perf_counter() - t
            pg.locator('[data-testid="stSidebar"] summary', has_text="Corpus").first.click()
            pg.locator('[data-testid="stSidebar"] label', has_text="upload files").first.click()
            pg.wait_for_selector('.st-key-corpus_files input[type="file"]', state="attached", timeout=timeout * 1000)
            time.sleep(pick)  # the user choosing the files in the dialog
            n_before = len(read_timings(timings)) if timings.exists() else 0
            t = time.perf_counter()
            pg.locator('.st-key-corpus_files input[type="file"]').set_input_files([str(f) for f in files])
            _settled(pg, f"{len(files)} documents ·", timeout)
            out["upload → first page settled"] = time.perf_counter() - t
            n_upload = len(read_timings(timings))
            time.sleep(0.5)
            t = time.perf_counter()
            pg.evaluate("document.activeElement && document.activeElement.blur()")
            pg.keyboard.press("r")  # Streamlit's "Rerun" key (the focus outside any input)
            time.sleep(0.5)
            _settled(pg, f"{len(files)} documents ·", timeout)
            out["rerun after the upload"] = time.perf_counter() - t
            browser.close()
    rows = read_timings(timings)
    out["server: runs of the upload"] = [round(r["seconds"], 2) for r in rows[n_before:n_upload]]
    out["server: rerun"] = [round(r["seconds"], 2) for r in rows[n_upload:]]
    return {"seconds": out, "load": "{:.2f}/{:.2f}/{:.2f}".format(*os.getloadavg()), "files": len(files), "pick": pick,
            "setting": "make run's defaults"}


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--home", help="AUDIT_HOME (default a new empty folder: the built-in index is built cold)")
    ap.add_argument("--pick", type=float, default=5.0, help="seconds from 'upload files' shown to the files given")
    ap.add_argument("--profile", help="folder for pyinstrument reports of every script run (AUDIT_PROFILE)")
    args = ap.parse_args(argv)
    if not Path(CHROMIUM).exists():
        raise SystemExit(f"{CHROMIUM} not found")
    home = Path(args.home) if args.home else Path(tempfile.mkdtemp(prefix="audit-home-"))
    res = measure(home, args.profile, pick=args.pick)
    print(json.dumps(res, indent=1))
    return res


if __name__ == "__main__":
    main()
