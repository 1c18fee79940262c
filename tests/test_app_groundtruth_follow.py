"""AppTest of the Ground truth page following the sidebar: a draft opened on one corpus and ground truth is not kept
when the sidebar switches to another (a newcomer's report: after switching from the built-in corpus to
data/formats, the page still showed the 32 python-reference needles, warned that the readers would reject them, and
named the built-in file as the one it was opened from)."""

from __future__ import annotations

import os

import pytest
from conftest import ROOT, shown
from streamlit.testing.v1 import AppTest

pytestmark = pytest.mark.slow

APP = str(ROOT / "app.py")
PAGE = "app_pages/10_Ground_truth.py"
FORMATS = ROOT / "data" / "formats"


@pytest.fixture(autouse=True)
def env(tmp_path, monkeypatch):
    for k in [k for k in os.environ if k.startswith("AUDIT_")]:
        monkeypatch.delenv(k)
    monkeypatch.setenv("AUDIT_MODEL", "hashing")
    monkeypatch.setenv("AUDIT_RERANKER", "none")
    monkeypatch.setenv("AUDIT_HOME", str(tmp_path / "home"))


def _ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.value for e in at.exception]
    return at


def _needles(at: AppTest) -> list[str]:
    return next(list(d.value["id"]) for d in at.dataframe if {"id", "status"} <= set(d.value.columns))


def _to_formats(at: AppTest) -> None:
    """The sidebar switched as the newcomer did: the folder data/formats/docs, its two ground-truth files."""
    at.radio(key="corpus_source").set_value("folder")
    at.radio(key="gt_source").set_value("file")
    at.session_state["corpus_folder"] = str(FORMATS / "docs")
    at.session_state["gt_path"] = str(FORMATS / "groundtruth.jsonl")
    at.session_state["ood_path"] = str(FORMATS / "out_of_domain.txt")
    _ok(at.run())
    assert at.text_input(key="corpus_folder").value == str(FORMATS / "docs")


def _page() -> AppTest:
    at = _ok(AppTest.from_file(APP, default_timeout=120))
    at.run()
    _ok(at.switch_page(PAGE))
    at.run()
    return _ok(at)


def test_the_draft_follows_the_sidebar_to_another_corpus_and_ground_truth():
    at = _page()
    assert len(_needles(at)) == 32  # the built-in ground truth, opened to be extended
    _to_formats(at)
    formats = [line for line in (FORMATS / "groundtruth.jsonl").read_text(encoding="utf-8").splitlines()
               if line.strip()]
    assert len(_needles(at)) == len(formats) == 7
    captions = " ".join(shown(c) for c in at.main.caption)
    assert "opened from groundtruth.jsonl" in captions
    assert not any("the readers would reject" in shown(w) for w in at.warning)
    assert at.selectbox(key="gt_open_choice").value == "sidebar"  # the Open box names what is open


def test_unsaved_needles_picked_on_another_corpus_are_said_to_belong_to_it():
    at = _page()
    at.text_input(key="gt_ood_new").input("How do I bake sourdough bread?")
    at.button(key="gt_ood_add").click()
    _ok(at.run())
    _to_formats(at)  # the draft has an unsaved change: kept, and said to belong to the built-in corpus
    assert len(_needles(at)) == 32
    warned = " ".join(shown(w) for w in at.warning)
    assert "belongs to the corpus" in warned and "not the sidebar's" in warned
    at.button(key="gt_follow").click()
    _ok(at.run())
    assert len(_needles(at)) == 7
    assert not any("belongs to the corpus" in shown(w) for w in at.warning)
