"""Real-browser test of the Ground truth page (issue 31): a 3-needle ground truth built on data/example's documents
from the page alone, saved, and scored by the Strategies page; a Q/A CSV uploaded gives one proposal and one
"not found".

Starts ``streamlit run app.py`` on data/example/docs (the fake encoder, a private ``AUDIT_HOME``), then, in one
session: for each needle types a few words, clicks the passage and the sentence in their tables (canvas clicks on
the row markers), writes two questions and adds it; adds one out-of-domain question; uploads the CSV; saves under
``$AUDIT_HOME``; opens Strategies. Screenshots of the page at 1400 and 800 px wide go to pytest's temporary folder,
or ``$AUDIT_SHOTS`` when set.
"""

from __future__ import annotations

import csv
import json
import os
import time
from pathlib import Path

import pytest
from streamlit_harness import app_env, launch_chromium, need_chromium, serve_app

pytestmark = pytest.mark.browser

ROW, HEADER = 35, 35  # pixels: st.dataframe's default row height, and its header's
NEEDLES = [  # words typed, sentence row, the needle it gives, documentation and ticket wording
    ("shredded", 0, "After seventy-two hours the old key is shredded and any message still sealed with it is moved "
                    "to the dead-letter shelf.",
     "What happens to the old key seventy-two hours after a rotation?", "my old messages vanished 3 days after we rotated"),
    ("40 GB", 0, "A restore of a 40 GB journal takes about twenty minutes on the standard node size.",
     "How long does restoring a large journal take?", "restore is taking forever, is 20 min normal"),
    ("PUBLISH", 0, "Each tenant may publish 2,000 messages per second.",
     "What is the per-tenant message rate limit?", "we get LR-429, how fast can we send"),
]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    need_chromium()
    pytest.importorskip("playwright.sync_api", reason="pip install playwright (requirements-dev.txt)")
    home = tmp_path_factory.mktemp("gt_home")
    env = app_env(AUDIT_MODEL="hashing", AUDIT_RERANKER="none", AUDIT_HOME=str(home), AUDIT_CORPUS="data/example/docs")
    with serve_app(env, home / "server.log") as app:
        yield app.url, home


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


def _no_exception(pg, where: str) -> None:
    boxes = pg.query_selector_all('[data-testid="stException"]')
    assert not boxes, f"{where}: " + " | ".join(b.inner_text()[:300] for b in boxes)


def _type(pg, label: str, text: str) -> None:
    box = pg.locator(f'[data-testid="stMain"] input[aria-label="{label}"]')
    box.fill(text)
    box.press("Enter")
    _idle(pg)


def _click_row(pg, key: str, row: int) -> None:
    """Click the row marker (the checkbox column) of row ``row`` in the dataframe keyed ``key``."""
    box = pg.locator(f".st-key-{key}").first.bounding_box()
    pg.mouse.click(box["x"] + 15, box["y"] + HEADER + ROW * row + ROW / 2)
    _idle(pg)


def _main(pg) -> str:
    return pg.locator('[data-testid="stMain"]').inner_text()


def test_a_ground_truth_built_on_the_page_is_saved_and_scored(served, tmp_path):
    from playwright.sync_api import sync_playwright

    base, home = served
    shots = Path(os.environ.get("AUDIT_SHOTS") or tmp_path / "shots")
    shots.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = launch_chromium(p)
        pg = browser.new_page(viewport={"width": 1400, "height": 3200})
        pg.set_default_timeout(60_000)
        pg.goto(base + "ground-truth")
        _idle(pg)
        _no_exception(pg, "ground truth")
        for i, (words, row, needle, q_doc, q_ticket) in enumerate(NEEDLES, start=1):
            _type(pg, "Find a passage (a few words)", words)
            _click_row(pg, "gt_hits", 0)
            _click_row(pg, "gt_sentences", row)
            text = _main(pg)
            assert "Occurs exactly once" in text and needle in text, words
            _type(pg, "Documentation wording", q_doc)
            _type(pg, "Support-ticket wording", q_ticket)
            if i == 1:
                pg.screenshot(path=str(shots / "ground-truth-1400.png"), full_page=True)
            pg.get_by_role("button", name="Add to the ground truth").click()
            _idle(pg)
            _no_exception(pg, f"after adding {words}")
            assert f"n0{i} added." in _main(pg)
        assert "3 needles · 0 out-of-domain questions" in _main(pg)
        pg.get_by_role("tab", name="Out-of-domain questions").click()
        _idle(pg)
        _type(pg, "Out-of-domain question", "What is the capital of France?")
        pg.get_by_role("button", name="Add", exact=True).click()
        _idle(pg)
        assert "3 needles · 1 out-of-domain question" in _main(pg)

        pg.get_by_role("tab", name="Import question/answer pairs").click()
        _idle(pg)
        qa = tmp_path / "faq.csv"
        qa.write_text('question,answer\nHow long are undelivered messages kept?,"Undelivered messages are kept for  '
                      'seven days,\nthen moved to the dead-letter shelf"\nWhat colour is the sky?,The sky is blue.\n',
                      encoding="utf-8")
        pg.locator('.st-key-gt_qa_file input[type="file"]').set_input_files(str(qa))
        _idle(pg)
        _no_exception(pg, "import")
        text = _main(pg)
        assert "2 pairs: 1 matching view, 1 not found" in text and "line 4: not found" in text

        pg.get_by_role("tab", name="Save").click()
        _idle(pg)
        _type(pg, "Author", "qa@example.com")
        _type(pg, "Name of the new ground truth", "relay")
        pg.get_by_role("button", name="Save and use it on every page").click()
        _idle(pg)
        _no_exception(pg, "save")
        assert "Saved relay.jsonl and relay.ood.txt: every page now uses it." in _main(pg)
        saved = [json.loads(x) for x in (home / "groundtruth" / "relay.jsonl").read_text(encoding="utf-8").splitlines()]
        assert [(x["id"], x["needle"], x["questions"]) for x in saved] == [
            (f"n0{i}", needle, [q_doc, q_ticket]) for i, (_, _, needle, q_doc, q_ticket) in enumerate(NEEDLES, start=1)]

        pg.set_viewport_size({"width": 800, "height": 3200})
        pg.get_by_role("tab", name="Pick a needle").click()
        _idle(pg)
        _type(pg, "Find a passage (a few words)", "readable")
        _click_row(pg, "gt_hits", 0)
        _click_row(pg, "gt_sentences", 1)
        _no_exception(pg, "800 px")
        pg.screenshot(path=str(shots / "ground-truth-800.png"), full_page=True)

        pg.locator('[data-testid="stSidebarNav"] a', has_text="Strategies").first.click()
        _idle(pg)
        _no_exception(pg, "strategies")
        assert "6 questions × 18 runs" in _main(pg)  # 3 needles × 2 phrasings; 6 strategies × 3 retrievers
        with pg.expect_download() as dl:  # the rank matrix is drawn on a canvas: read it from its CSV
            pg.get_by_role("button", name="Download rank matrix (CSV)").click()
        with open(dl.value.path(), encoding="utf-8") as fh:
            matrix = list(csv.DictReader(fh))
        assert [r["query"] for r in matrix] == [f"n0{i}/{p}" for i in (1, 2, 3) for p in ("doc", "ticket")]
        assert [r["question"] for r in matrix] == [q for *_, q_doc, q_ticket in NEEDLES for q in (q_doc, q_ticket)]
        assert all(r["E/bm25"] or r["E/dense"] for r in matrix)  # scored: a rank in at least one column
        browser.close()
