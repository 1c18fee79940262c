"""The decision record (``report --html``/``--pdf``) opened in headless Chromium with every request but the file's
own blocked: nothing fails, and the decision's figures read from the page (each marked ``data-figure``) equal the
report's JSON; the PDF printed from it carries the same figures (read back with pypdf).

Two audits: the built-in corpus (python-reference, strategies E and F, the hashing encoder: no model weights) and
a team's runs (``data/example``), each with a saved cut whose note holds markup (it must show as text, never
become an element) and an author.
"""

from __future__ import annotations

import json
import os
import unicodedata
from pathlib import Path

import pytest
from conftest import ROOT
from scipy.stats import binomtest

from streamlit_harness import launch_chromium, need_chromium

from audit.report.record import DETAILED

pytestmark = pytest.mark.browser

EX = ROOT / "data" / "example"
NOTE = "bluffs cost a ticket; <b>abandoned</b> & \"refused\" cost a search"
OUTCOMES = ("answered", "answered without", "abandoned", "bluff", "refused")


def _saved_key(kind: str) -> dict:
    if kind == "builtin":
        from conftest import builtin_cut_key

        return builtin_cut_key("python-reference")
    from audit.sources.imported.system import load_system

    rs = load_system(EX / "queries.tsv", {"before": EX / "before.trec", "after": EX / "after.trec"},
                     {"before": "cosine-distance"}, EX / "qrels.trec", None, EX / "chunks.jsonl", None,
                     EX / "ood-queries.tsv", {"before": EX / "ood-before.trec", "after": EX / "ood-after.trec"})
    return dict(rs.run("before").cut_key)


ARGS = {
    "builtin": ["--corpus", "python-reference", "--strategies", "E,F", "--retrievers", "dense,bm25", "--model",
                "hashing", "--reranker", "none", "--no-cache", "--quiet"],
    "example": ["--queries", str(EX / "queries.tsv"), "--qrels", str(EX / "qrels.trec"), "--run",
                f"before={EX / 'before.trec'}", "--run", f"after={EX / 'after.trec'}", "--score",
                "before=cosine-distance", "--chunks", str(EX / "chunks.jsonl"), "--corpus", str(EX / "docs"),
                "--ood-queries", str(EX / "ood-queries.tsv"), "--ood-run", f"before={EX / 'ood-before.trec'}",
                "--ood-run", f"after={EX / 'ood-after.trec'}"],
}
#: The saved cut of each audit (off every sweep grid step, so only the saved file can put it there).
CUTS = {"builtin": ("E/dense", 0.6125), "example": ("before", 0.37)}


@pytest.fixture(scope="module")
def audits(tmp_path_factory):
    need_chromium()
    pytest.importorskip("playwright.sync_api", reason="pip install playwright (requirements-dev.txt)")
    import vl_convert  # noqa: F401  (requirements.txt: a missing chart renderer fails here, never skips)
    from audit.cli import main
    from audit.evaluation.saved_cut import save_cut

    home = tmp_path_factory.mktemp("record_home")
    saved = {k: os.environ.get(k) for k in ("AUDIT_HOME", "AUDIT_HISTORY", "AUDIT_CHROMIUM")}
    os.environ.update({"AUDIT_HOME": str(home), "AUDIT_HISTORY": "off", "AUDIT_CHROMIUM": "/usr/bin/chromium"})
    out = {}
    try:
        for kind, args in ARGS.items():
            run, cut = CUTS[kind]
            save_cut(cut, _saved_key(kind), run, home / "threshold.json", note=f"{kind}: {NOTE}", author="Ana Lima")
            j, h, p = home / f"{kind}.json", home / f"{kind}.html", home / f"{kind}.pdf"
            assert main(["report", *args, "--json", str(j), "--html", str(h), "--pdf", str(p)]) == 0
            out[kind] = (json.loads(j.read_text(encoding="utf-8")), h, p)
    finally:
        for k, v in saved.items():
            os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)
    return out


def _thresholds(kind: str, data: dict) -> dict:
    return data["threshold"]  # every source: run name → its entry


def _open(page, path: Path) -> tuple[list, list]:
    """Open ``path`` with every other request aborted; returns (requests made, requests failed)."""
    url = path.as_uri()
    made, failed = [], []
    page.on("request", lambda r: made.append(r.url))
    page.on("requestfailed", lambda r: failed.append(r.url))
    page.route("**/*", lambda route: route.continue_() if route.request.url == url else route.abort())
    page.goto(url, wait_until="load")
    return made, failed


@pytest.mark.parametrize("kind", ["builtin", "example"])
def test_the_record_opens_offline_and_shows_the_reports_figures(audits, kind):
    from playwright.sync_api import sync_playwright

    data, html_path, _ = audits[kind]
    thresholds = _thresholds(kind, data)
    run, cut = CUTS[kind]
    assert thresholds[run]["cut"] == cut and thresholds[run]["how"] == "saved"  # the saved cut is the decision
    with sync_playwright() as p:
        browser = launch_chromium(p)
        try:
            page = browser.new_page()
            made, failed = _open(page, html_path)
            assert made == [html_path.as_uri()] and failed == []  # the file asks nothing of any host

            def fig(name, r):
                loc = page.locator(f'[data-figure="{name}"][data-run="{r}"]')
                assert loc.count() == 1, (name, r)
                return loc.get_attribute("data-value"), loc.inner_text()

            for i, (r, t) in enumerate(thresholds.items()):
                value, shown = fig("cut", r)
                assert float(value) == t["cut"] and shown == f"{t['cut']:.4g}"
                for o in OUTCOMES:
                    assert int(fig(f"count:{o}", r)[0]) == t["at_cut"][o]
                if not (len(thresholds) <= DETAILED or i == 0 or t["how"] == "saved"):
                    continue  # the same rule on the other runs: one row each (cut and counts), no intervals
                    iv = t["at_cut_wilson"][o]
                    for b in ("low", "high"):
                        value, shown = fig(f"{b}:{o}", r)
                        assert float(value) == iv[b] and shown == f"{iv[b]:.3f}"  # repr round-trips the float
                # the bounds are Wilson's of the count over its domain (scipy, the reference)
                n = t["at_cut"]["in-domain"]
                ci = binomtest(t["at_cut"]["answered"], n).proportion_ci(method="wilson")
                assert (t["at_cut_wilson"]["answered"]["low"], t["at_cut_wilson"]["answered"]["high"]) == \
                    pytest.approx((ci.low, ci.high), abs=1e-12)
            # the note and its author: shown as typed, the markup as text (no <b> element in the note)
            value, shown = fig("note", run)
            assert value == shown == thresholds[run]["saved"]["note"] == f"{kind}: {NOTE}"
            assert page.locator('[data-figure="note"] b').count() == 0
            assert fig("author", run)[1] == thresholds[run]["saved"]["author"] == "Ana Lima"
            # the paired tests with their Holm-adjusted p
            assert data["comparisons"]
            for c in data["comparisons"]:
                value, shown = fig("p_holm", f"{c['a']}|{c['b']}|{c['k']}")
                assert float(value) == c["p (Holm)"]
                assert shown == ("<0.0001" if c["p (Holm)"] < 0.0001 else f"{c['p (Holm)']:.4f}")
            assert page.locator("svg").count() >= len(thresholds)  # the sweeps, drawn inline
        finally:
            browser.close()


@pytest.mark.parametrize("kind", ["builtin", "example"])
def test_the_pdf_has_the_same_figures(audits, kind):
    from pypdf import PdfReader

    data, _, pdf_path = audits[kind]
    # NFKC folds the font's ligatures back (Chromium draws "ff" in "bluffs" as one glyph, pypdf reads U+FB00)
    text = unicodedata.normalize("NFKC", " ".join(" ".join((pg.extract_text() or "").split())
                                                  for pg in PdfReader(pdf_path).pages))
    run, cut = CUTS[kind]
    t = _thresholds(kind, data)[run]
    assert f"Cut {cut:.4g}" in text
    assert "Ana Lima" in text and f"{kind}: {NOTE}" in text
    for o in OUTCOMES:
        iv = t["at_cut_wilson"][o]
        assert f"{iv['low']:.3f}" in text and f"{iv['high']:.3f}" in text
    for c in data["comparisons"]:
        p = c["p (Holm)"]
        assert ("<0.0001" if p < 0.0001 else f"{p:.4f}") in text


def test_download_this_audit_from_the_threshold_page(tmp_path):
    """The dashboard's button (Threshold page, a team's runs of data/example) hands over the same record: the saved
    cut with its note and author, opened offline."""
    need_chromium()
    pytest.importorskip("playwright.sync_api", reason="pip install playwright (requirements-dev.txt)")
    from playwright.sync_api import sync_playwright

    from audit.evaluation.saved_cut import save_cut
    from streamlit_harness import app_env, serve_app
    from test_browser import _no_exception, _settle

    home = tmp_path / "home"
    home.mkdir()
    save_cut(0.37, _saved_key("example"), "run before", home / "threshold.json", note=NOTE, author="Ana Lima")
    ex = "data/example/"
    env = app_env(AUDIT_HOME=str(home), AUDIT_HISTORY="off", AUDIT_MODEL="hashing", AUDIT_RERANKER="none",
                  AUDIT_SOURCE="system", AUDIT_SYS_QUERIES=ex + "queries.tsv", AUDIT_SYS_QRELS=ex + "qrels.trec",
                  AUDIT_SYS_CHUNKS=ex + "chunks.jsonl", AUDIT_SYS_OOD_QUERIES=ex + "ood-queries.tsv",
                  AUDIT_SYS_RUNS=f"before={ex}before.trec", AUDIT_SYS_SCORES="before=cosine-distance",
                  AUDIT_SYS_OOD_RUNS=f"before={ex}ood-before.trec")
    with serve_app(env, tmp_path / "server.log") as app, sync_playwright() as p:
        browser = launch_chromium(p)
        try:
            pg = browser.new_page(accept_downloads=True)
            pg.set_default_timeout(60_000)
            pg.goto(app.url + "threshold")
            _settle(pg)
            _no_exception(pg, "threshold")
            with pg.expect_download() as dl:
                pg.get_by_role("button", name="Download this audit (HTML)").click()
            path = tmp_path / dl.value.suggested_filename
            dl.value.save_as(path)
            assert path.suffix == ".html"
            view = browser.new_page()
            made, failed = _open(view, path)
            assert made == [path.as_uri()] and failed == []
            cut = view.locator('[data-figure="cut"][data-run="before"]')
            assert float(cut.get_attribute("data-value")) == 0.37
            assert view.locator('[data-figure="note"][data-run="before"]').inner_text() == NOTE
            assert view.locator('[data-figure="author"][data-run="before"]').inner_text() == "Ana Lima"
            # data/example's README: at 0.37 before answers 5 of 9 and refuses all 4 out-of-domain questions
            assert view.locator('[data-figure="count:answered"][data-run="before"]').inner_text() == "5"
            assert view.locator('[data-figure="count:refused"][data-run="before"]').inner_text() == "4"
        finally:
            browser.close()


def test_issue54_item1_the_record_states_the_decision_on_the_sidebars_run(tmp_path):
    """A cut saved with a reason for the second run, that run chosen in the sidebar: the downloaded record leads with
    it, its cut, note and author equal the Threshold page's (it stated the first run's computed default before)."""
    need_chromium()
    pytest.importorskip("playwright.sync_api", reason="pip install playwright (requirements.txt)")
    from playwright.sync_api import sync_playwright

    from audit.evaluation.saved_cut import save_cut
    from audit.sources.imported.system import load_system
    from streamlit_harness import app_env, serve_app
    from test_browser import _no_exception, _settle

    rs = load_system(EX / "queries.tsv", {"before": EX / "before.trec", "after": EX / "after.trec"},
                     {"before": "cosine-distance", "after": "cosine-distance"}, EX / "qrels.trec", None,
                     EX / "chunks.jsonl", None, EX / "ood-queries.tsv",
                     {"before": EX / "ood-before.trec", "after": EX / "ood-after.trec"})
    home = tmp_path / "home"
    home.mkdir()
    save_cut(0.495, dict(rs.run("after").cut_key), "run after", home / "threshold.json", note=NOTE, author="PO")
    ex = "data/example/"
    env = app_env(AUDIT_HOME=str(home), AUDIT_HISTORY="off", AUDIT_MODEL="hashing", AUDIT_RERANKER="none",
                  AUDIT_SOURCE="system", AUDIT_SYS_QUERIES=ex + "queries.tsv", AUDIT_SYS_QRELS=ex + "qrels.trec",
                  AUDIT_SYS_CHUNKS=ex + "chunks.jsonl", AUDIT_SYS_OOD_QUERIES=ex + "ood-queries.tsv",
                  AUDIT_SYS_RUNS=f"before={ex}before.trec\nafter={ex}after.trec",
                  AUDIT_SYS_SCORES="before=cosine-distance\nafter=cosine-distance",
                  AUDIT_SYS_OOD_RUNS=f"before={ex}ood-before.trec\nafter={ex}ood-after.trec")
    with serve_app(env, tmp_path / "server.log") as app, sync_playwright() as p:
        browser = launch_chromium(p)
        try:
            pg = browser.new_page(accept_downloads=True)
            pg.set_default_timeout(60_000)
            pg.goto(app.url + "threshold")
            _settle(pg)
            _no_exception(pg, "threshold")
            box = pg.get_by_role("combobox", name="Run (detail pages)")
            box.click()
            box.fill("after")
            box.press("Enter")
            _settle(pg)
            _no_exception(pg, "threshold")
            with pg.expect_download() as dl:
                pg.get_by_role("button", name="Download this audit (HTML)").click()
            path = tmp_path / dl.value.suggested_filename
            dl.value.save_as(path)
            view = browser.new_page()
            _open(view, path)
            assert float(view.locator('[data-figure="cut"][data-run="after"]').get_attribute("data-value")) == 0.495
            assert view.locator('[data-figure="how"][data-run="after"]').first.inner_text() == "saved"
            assert view.locator('[data-figure="note"][data-run="after"]').inner_text() == NOTE
            assert view.locator('[data-figure="author"][data-run="after"]').inner_text() == "PO"
            import re

            decision = path.read_text(encoding="utf-8").split("<h2>The decision</h2>", 1)[1]
            assert re.search(r"<h3>(.*?)</h3>", decision)[1] == "run after"  # the sidebar's run leads
        finally:
            browser.close()
