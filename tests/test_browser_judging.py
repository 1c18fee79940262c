"""Real-browser test of the Judging page (issue 43's "done when"): ``streamlit run app.py`` on data/example ("Your
system (files)", no model), two reviewers in two browser sessions label an overlapping pool one item at a time;
κ and α shown equal the hand computations (tests/test_judging_agreement.py's coincidence matrix); the
disagreement is adjudicated and a new version saved; judged on it, Strategies' CSV gives Success@1 and Hole@10
as counted by hand from the run files; every page's provenance line names the version, and the History page names
it for the audit recorded on it (its trend table and the record's caption)."""

from __future__ import annotations

import csv
import os
from pathlib import Path

import numpy as np
import pytest

from streamlit_harness import ROOT, app_env, launch_chromium, need_chromium, serve_app
from test_browser import _no_exception, _settle
from test_browser_groundtruth import _idle
from test_cli_judge import ANA, BEN
from test_judging_agreement import ordinal_alpha_by_hand

pytestmark = pytest.mark.browser

EX = "data/example/"
GRADE_LABELS = {0: "0 · not relevant", 1: "1 · related", 2: "2 · highly relevant", 3: "3 · perfectly relevant"}


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    need_chromium()
    pytest.importorskip("playwright.sync_api", reason="pip install playwright (requirements-dev.txt)")
    home = tmp_path_factory.mktemp("audit_home")
    env = app_env(AUDIT_HOME=str(home), AUDIT_HISTORY="on", AUDIT_MODEL="hashing", AUDIT_RERANKER="none",
                  AUDIT_SOURCE="system", AUDIT_SYS_QUERIES=EX + "queries.tsv", AUDIT_SYS_QRELS=EX + "qrels.trec",
                  AUDIT_SYS_CHUNKS=EX + "chunks.jsonl",
                  AUDIT_SYS_RUNS=f"before={EX}before.trec\nafter={EX}after.trec",
                  AUDIT_SYS_SCORES="before=cosine-distance")
    with serve_app(env, home / "server.log") as app:
        yield app.url


def _main(pg) -> str:
    """The page's text as the reader reads it (ui.text.md breaks a bare "Success@8" with a word joiner)."""
    return pg.locator('[data-testid="stMain"]').inner_text().replace("\u2060", "")


def _type(pg, label: str, text: str) -> None:
    box = pg.locator(f'[data-testid="stMain"] input[aria-label="{label}"]')
    box.fill(text)
    box.press("Enter")
    _idle(pg)


def _open(browser, url: str, who: str):
    pg = browser.new_context(viewport={"width": 1400, "height": 3000}).new_page()
    pg.set_default_timeout(60_000)
    pg.goto(url + "judging")
    _settle(pg)
    _type(pg, "Your name", who)
    _type(pg, "Pool depth k", "1")
    _type(pg, "Reviewers sharing the queue", "ana,ben")
    slider = pg.locator('[data-testid="stSlider"] input[type="range"], [data-testid="stSlider"] [role="slider"]').first
    slider.focus()
    pg.keyboard.press("End")  # overlap 1.0: every item to both reviewers
    _idle(pg)
    _no_exception(pg, who)
    return pg


def _current(pg) -> tuple[str, str] | None:
    text = _main(pg)
    q = next((ln.split()[1] for ln in text.splitlines() if ln.startswith("Question ")), None)
    if q is None:
        return None
    c = next(ln.split()[1] for ln in text.splitlines() if ln.startswith("Chunk "))
    return q, c


def _label_all(pg, grades) -> int:
    n = 0
    while (item := _current(pg)) is not None:
        assert item in grades and n < len(grades), item
        pg.locator('[data-testid="stMain"] label', has_text=GRADE_LABELS[grades[item]]).first.click()
        pg.get_by_role("button", name="Save label").click()
        _idle(pg)
        _no_exception(pg, f"label {item}")
        n += 1
    return n


def _hole10(run: str, labels) -> float:
    """Mean Hole@10 of ``run`` counted from the files: per judged question, the share of its returned chunks (5
    here) that neither data/example/qrels.trec nor ``labels`` judge for that question; a judged question the run
    does not return (before has no q9) has no hole (docs/definitions.md, *Hole@k*)."""
    qrels = [x.split() for x in (ROOT / EX / "qrels.trec").read_text().splitlines()]
    judged = {(f[0], f[2]) for f in qrels} | set(labels)
    top: dict = {f[0]: [] for f in qrels}
    for f in (x.split() for x in (ROOT / EX / f"{run}.trec").read_text().splitlines()):
        if int(f[3]) <= 10:
            top[f[0]].append(f[2])
    return float(np.mean([sum((q, c) not in judged for c in cs) / len(cs) if cs else 0.0 for q, cs in top.items()]))


def test_two_reviewers_agree_adjudicate_and_the_version_moves_strategies(served, tmp_path):
    from playwright.sync_api import sync_playwright

    shots = Path(os.environ.get("AUDIT_SHOTS") or tmp_path / "shots")
    shots.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = launch_chromium(p)
        ana, ben = _open(browser, served, "ana"), _open(browser, served, "ben")
        assert "0 of 6 items labelled by ana" in _main(ana) and "#char=" in _main(ana)
        assert _label_all(ana, ANA) == 6
        assert _label_all(ben, BEN) == 6
        ana.screenshot(path=str(shots / "judging-ana.png"), full_page=True)
        text = _main(ben)
        # κ by hand: p_o = 5/6, p_e = 1/3 → 0.75 (tests/test_cli_judge.py); α by the coincidence matrix
        order = sorted(ANA)
        alpha = ordinal_alpha_by_hand(np.array([[ANA[k] for k in order], [BEN[k] for k in order]], dtype=float))
        assert "κ 0.750 [" in text and f"α (ordinal) {alpha:.3f} [" in text and "seed 0" in text
        assert "6 of 6 items labelled by ben" in text

        ben.locator('[data-testid="stMain"] input[aria-label="Settled grade"]').fill("2")
        ben.locator('[data-testid="stMain"] input[aria-label="Settled grade"]').press("Enter")
        _idle(ben)
        ben.get_by_role("button", name="Adjudicate").click()
        _idle(ben)
        ben.get_by_role("button", name="Save a new version").click()
        _idle(ben)
        assert "Saved v1" in _main(ben) and "6 added" in _main(ben)
        assert "Success@8 of before 0.667 → 0.778 because 3 holes were judged relevant" in _main(ben)
        ben.locator('[data-testid="stMain"] label', has_text="Judge every page on the latest version").click()
        _idle(ben)
        ben.locator('[data-testid="stSidebarNav"] a', has_text="Strategies").first.click()
        _settle(ben)
        _no_exception(ben, "strategies")
        with ben.expect_download() as dl:  # the table is drawn on a canvas: read it from its CSV
            ben.get_by_role("button", name="Download table (CSV, numeric)").click()
        with open(dl.value.path(), encoding="utf-8") as fh:
            rows = {r["name"]: r for r in csv.DictReader(fh)}
        # Success@1 by hand (tests/test_cli_judge.py): before 3/9 → 5/9, after 7/9 → 8/9
        assert float(rows["before"]["Success@1"]) == pytest.approx(5 / 9)
        assert float(rows["after"]["Success@1"]) == pytest.approx(8 / 9)
        settled = {**ANA, ("q7", "k3"): 2}
        for run in ("before", "after"):
            assert float(rows[run]["Hole@10"]) == pytest.approx(_hole10(run, settled))
            assert _hole10(run, settled) < _hole10(run, ())  # the version judged some of its holes
        assert "judgments version v1" in _main(ben)
        ben.screenshot(path=str(shots / "strategies-on-v1.png"), full_page=True)

        # the history: each session's audit on the source's own judgments (ana's, ben's), then ben's on v1, named
        v1 = next(ln for ln in _main(ben).splitlines() if "judgments version v1 " in ln)
        v1 = "v1 " + v1.split("judgments version v1 ")[1].split()[0]
        ben.locator('[data-testid="stSidebarNav"] a', has_text="History").first.click()
        _settle(ben)
        _no_exception(ben, "history")
        with ben.expect_download() as dl:
            ben.get_by_role("button", name="Download the trend (CSV)").click()
        with open(dl.value.path(), encoding="utf-8") as fh:
            trend = list(csv.DictReader(fh))
        assert [r["judging store version"] for r in trend] == ["", "", v1]
        # the record on v1 is judged on the run set's qrels with v1 laid over them: another content digest
        assert trend[0]["judgments version"] == trend[1]["judgments version"] != trend[2]["judgments version"]
        ben.goto(served + f"history?record={trend[2]['record']}")
        _settle(ben)
        assert f"judgments version {v1} of the judging store" in _main(ben)
        ben.screenshot(path=str(shots / "history-on-v1.png"), full_page=True)
        browser.close()
