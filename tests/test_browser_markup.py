"""Real-browser test: a corpus full of Markdown/HTML tricks through every page creates no element and
no request.

Titles, section titles, file names, ground-truth ids, questions and out-of-domain queries carry
links, images (to ``http://127.0.0.1:9/…`` and to relative ``audittrap-…`` URLs), raw HTML,
``javascript:`` links, Streamlit colour directives, LaTeX and autolinks, each marked with the word
``audittrap``. Every page is opened in Chromium (``/usr/bin/chromium``, as in test_browser.py);
every request the page makes is recorded (``page.on("request")``): none may name the marker or go
to another host than the dashboard, and no link, image, frame, emphasis, heading or formula may
hold the marker. The marker must still be visible as text (the data is shown, not dropped).
"""

from __future__ import annotations

import json
import time
import urllib.parse
from pathlib import Path

import pytest
from streamlit_harness import app_env, launch_chromium, need_chromium, serve_app
from test_browser import PAGES, _no_exception, _settle

MARK = "audittrap"
NEEDLE = "The gateway retries a failed call three times before it gives up."
TRICKS = (f"![{MARK}-img](http://127.0.0.1:9/{MARK}-abs.png) [{MARK}-link](javascript:alert(5)) "
          f"<img src=\"{MARK}-html.png\"> :red[{MARK}-red] $x^{{{MARK}}}$ **{MARK}-bold** www.{MARK}.example "
          f"![{MARK}-rel]({MARK}-rel.png)")


def _write_corpus(root: Path) -> dict:
    docs = root / "docs"
    docs.mkdir()
    (docs / f"![{MARK}-name]({MARK}-name.png).md").write_text(
        f"# Gateway {TRICKS}\n\n## Retries {TRICKS}\n\nThe gateway sits in front of every service. {NEEDLE} "
        f"After that the caller sees an error.\n\n## Limits <iframe src=\"{MARK}-frame.html\"></iframe>\n\n"
        "Each tenant may send one hundred calls a second.\n", encoding="utf-8")
    (docs / f"[{MARK}-link](javascript:alert(1)).md").write_text(
        f"# Second page [{MARK}](http://127.0.0.1:9/{MARK}-second)\n\n## Plain\n\nNothing special here, "
        "only a paragraph about queues and workers.\n", encoding="utf-8")
    (docs / f"<img src={MARK}-fail.png>.md").write_bytes(b"\xff\xfe\x00 not text")  # listed as failed
    gt = root / "gt.jsonl"
    gt.write_text("\n".join(json.dumps(x) for x in [
        {"id": f"![{MARK}-id](http://127.0.0.1:9/{MARK}-id.png)", "needle": NEEDLE,
         "questions": [f"How often does the gateway retry? {TRICKS}", f"retries {TRICKS}"]},
        {"id": f"[{MARK}-bad](javascript:x)", "needle": "nowhere at all", "questions": ["a?", "b?"]},
    ]) + "\n", encoding="utf-8")
    ood = root / "ood.txt"
    ood.write_text(f"what is the capital of France {TRICKS}\nbake bread ![{MARK}](http://127.0.0.1:9/{MARK}-ood)\n",
                   encoding="utf-8")
    return {"AUDIT_CORPUS": str(docs), "AUDIT_GROUND_TRUTH": str(gt), "AUDIT_OUT_OF_DOMAIN": str(ood)}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    need_chromium()
    pytest.importorskip("playwright.sync_api", reason="pip install playwright (requirements-dev.txt)")
    root = tmp_path_factory.mktemp("markup")
    env = app_env(**_write_corpus(root), AUDIT_MODEL="hashing", AUDIT_RERANKER="none", AUDIT_HOME=str(root / "home"))
    with serve_app(env, root / "server.log") as app:
        yield app.url, root


#: Elements data must never become: links, media, frames, emphasis, headings, formulas.
_FORBIDDEN = ("a", "img", "iframe", "object", "embed", "video", "audio", "source", "strong", "em", "b", "i", "del",
              "h1", "h2", "h3", "h4", "h5", "h6", "sup", "sub", ".katex", "math")

_CREATED_FROM_DATA = """(mark) => {
  const bad = [];
  for (const sel of %s) {
    for (const e of document.querySelectorAll(sel)) {
      const attrs = [...e.attributes].map(a => a.value).join(' ');
      if ((e.textContent || '').includes(mark) || attrs.includes(mark) || attrs.includes('javascript:'))
        bad.push(e.outerHTML.slice(0, 200));
    }
  }
  return bad;
}""" % json.dumps(list(_FORBIDDEN))


@pytest.mark.browser
def test_markup_in_data_creates_no_element_and_no_request(server):
    from playwright.sync_api import sync_playwright

    base, root = server
    host = urllib.parse.urlsplit(base).netloc
    requests: list[str] = []
    seen_as_text = 0
    with sync_playwright() as p:
        browser = launch_chromium(p)
        page = browser.new_page(viewport={"width": 1400, "height": 2400})
        page.set_default_timeout(60_000)
        page.on("request", lambda r: requests.append(r.url))
        for name in PAGES:
            page.goto(base + name)
            _settle(page)
            _no_exception(page, name or "overview")
            if name == "upgrade-diff":  # compare the corpus's index with itself: every table drawn
                after = page.locator('input[aria-label="After (index database)"]').input_value()
                box = page.locator('input[aria-label="Before (index database)"]')
                box.fill(after)
                box.press("Enter")
                _settle(page)
                _no_exception(page, "upgrade-diff with two files")
            # open every expander: their labels and bodies hold document names and sections
            for exp in page.query_selector_all('[data-testid="stExpander"] summary'):
                exp.click()
            time.sleep(0.5)
            bad = page.evaluate(_CREATED_FROM_DATA, MARK)
            assert not bad, f"{name or 'overview'}: elements created from data: {bad}"
            seen_as_text += page.inner_text("body").count(MARK)
        browser.close()
    leaving = [u for u in requests if MARK in u or (
        urllib.parse.urlsplit(u).scheme in ("http", "https", "ws", "wss") and urllib.parse.urlsplit(u).netloc != host)]
    assert not leaving, sorted(set(leaving))  # the app's own favicon included: no page_icon fetched from a CDN
    assert requests, "no request was recorded at all: the recorder is broken"
    assert seen_as_text > 20  # the tricks are shown as text (file names, titles, ids, questions)
