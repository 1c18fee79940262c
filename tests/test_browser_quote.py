"""Real-browser test of the quote marking on Citations (issue 12, item 4): every character stays visible.

A one-document corpus whose needle holds ``__debug__``, ``assert_stmt``, a combining accent and a
251-character unbroken line. On Citations the question's first source is drawn inside its
document; in Chromium the box's innerText must hold each of them exactly, no element inside the box
may be styled with something that paints over glyphs (outline, underline, box shadow), and the long
line must wrap inside the box (no horizontal overflow hiding characters).
"""

from __future__ import annotations

import json
import time

import pytest
from streamlit_harness import app_env, launch_chromium, need_chromium, serve_app
from test_browser import _no_exception, _settle

LONG = "L" + "0123456789" * 25  # 251 characters, no space (~90 fit a line of the box): must wrap
NEEDLE = ("Under python -O the constant __debug__ is False, so every assert_stmt is dropped from the cafe\u0301 "
          f"build {LONG} for good.")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    need_chromium()
    pytest.importorskip("playwright.sync_api", reason="pip install playwright (requirements-dev.txt)")
    root = tmp_path_factory.mktemp("quote")
    docs = root / "docs"
    docs.mkdir()
    (docs / "asserts.md").write_text(
        "# Assertions\n\n## Optimised mode\n\nSome words first about the interpreter. " + NEEDLE + " " + LONG
        + " The end of the paragraph.\n\n## Other\n\nA second section about queues and workers.\n",
        encoding="utf-8")
    gt = root / "gt.jsonl"
    gt.write_text(json.dumps({"id": "debug", "needle": NEEDLE, "questions": [NEEDLE, "what does -O do to asserts"]})
                  + "\n", encoding="utf-8")
    env = app_env(AUDIT_CORPUS=str(docs), AUDIT_GROUND_TRUTH=str(gt), AUDIT_MODEL="hashing",
                  AUDIT_RERANKER="none", AUDIT_HOME=str(root / "home"))
    with serve_app(env, root / "server.log") as app:
        yield app.url


#: For each quote box (the pre-wrapped div inside an expander): its innerText, whether it overflows
#: sideways, and the styles of its elements that could paint over a glyph.
_BOXES = """() => [...document.querySelectorAll('[data-testid="stExpander"] div[style*="pre-wrap"]')].map(b => ({
  text: b.innerText,
  overflow: b.scrollWidth - b.clientWidth,
  covering: [...b.querySelectorAll('*')].map(e => getComputedStyle(e))
      .filter(s => s.outlineStyle !== 'none' || s.textDecorationLine !== 'none' || s.boxShadow !== 'none')
      .length,
}))"""


@pytest.mark.browser
def test_quote_marking_keeps_every_character_visible(server):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = launch_chromium(p)
        page = browser.new_page(viewport={"width": 1400, "height": 2400})
        page.set_default_timeout(60_000)
        page.goto(server + "citations")
        _settle(page)
        _no_exception(page, "citations")
        for exp in page.query_selector_all('[data-testid="stExpander"] summary'):
            exp.click()
        time.sleep(1.0)
        boxes = page.evaluate(_BOXES)
        browser.close()
    # The first question is the needle itself: its chunk is cited, so at least one box holds it.
    holding = [b for b in boxes if NEEDLE in b["text"]]
    assert holding, [b["text"][:120] for b in boxes]
    for b in holding:
        assert "__debug__" in b["text"] and "assert_stmt" in b["text"] and "cafe\u0301" in b["text"]
        assert LONG in b["text"]  # soft wraps add no character: the whole unbroken line is there
        assert b["overflow"] <= 1, b["overflow"]  # wrapped inside the box, nothing hidden sideways
        assert b["covering"] == 0
