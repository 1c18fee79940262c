"""AppTest of issue 25 on the sample folder data/formats: the Overview lists what was not read, the Citations
page shows a spreadsheet's and a transcript's locators and plays the transcript's media from its start."""

from __future__ import annotations

import os

import pytest
from conftest import ROOT, shown
from streamlit.testing.v1 import AppTest

pytestmark = pytest.mark.slow

SAMPLE = ROOT / "data" / "formats"


@pytest.fixture(scope="module", autouse=True)
def formats_env(tmp_path_factory):
    from audit.evaluation.saved_cut import save_cut
    from conftest import builtin_cut_key

    home = tmp_path_factory.mktemp("formats") / "home"
    env = {"AUDIT_CORPUS": str(SAMPLE / "docs"), "AUDIT_GROUND_TRUTH": str(SAMPLE / "groundtruth.jsonl"),
           "AUDIT_OUT_OF_DOMAIN": str(SAMPLE / "out_of_domain.txt"), "AUDIT_MODEL": "hashing",
           "AUDIT_RERANKER": "none", "AUDIT_HOME": str(home)}
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    # a cut every chunk passes: each question gets its 4 nearest chunks as sources
    save_cut(1.5, builtin_cut_key(SAMPLE / "docs"), "E/dense", home / "threshold.json")
    yield env
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


def _app(page: str) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    at.switch_page(page).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _frame(at, column):
    return next(d.value for d in at.dataframe if column in d.value.columns)


def test_overview_lists_the_files_not_read_with_their_reason():
    at = _app("app_pages/1_Overview.py")
    nr = _frame(at, "what")
    assert list(nr["file"]) == ["standup.wav", "oncall.xlsx"]
    assert "plays it beside its transcript standup.vtt" in nr["reason"].iloc[0]
    formats = _frame(at, "extractor version")
    assert set(formats["format"]) == {"csv", "docx", "srt", "webvtt", "xlsx"}


def _ask(at, qid: str):
    """Pick a question on Citations by its id (the select box's values; its labels are ``[badge] id — text``)."""
    box = at.selectbox(key="cit_query")
    assert any(f"] {qid} —" in label for label in box.options)
    box.set_value(qid).run()
    assert not at.exception, [e.value for e in at.exception]
    return _frame(at, "where")


def test_citations_show_sheet_ranges_and_times_and_play_the_media():
    at = _app("app_pages/7_Citations.py")
    sheet = _ask(at, "f6/doc")
    rota = sheet[sheet["locator"].str.contains("#sheet=Rota&range=A9:D15", regex=False)]
    assert len(rota) == 1 and rota["where"].iloc[0] == "sheet Rota, A9:D15"  # the chunk holding f6's merged cell
    assert sheet["quote matches locator"].all()
    times = _ask(at, "f7/doc")
    later = times[times["locator"].str.contains("#t=38.5,64", regex=False)]
    assert len(later) == 1 and later["where"].iloc[0] == "0:38.5–1:04"
    # the transcript's media, played from the cited start in whole seconds: one player per transcript citation
    captions = [shown(c) for c in at.caption if "standup.wav, played from" in shown(c)]
    assert any("played from 38 s to 64 s" in c for c in captions), captions
    players = at.get("audio")
    assert sorted((p.proto.start_time, p.proto.end_time) for p in players) == [(1, 38), (38, 64)]
    # the bytes were handed to Streamlit's media store: the page links its URL, never a server path
    assert all("/media/" in p.proto.url and "formats" not in p.proto.url for p in players)
