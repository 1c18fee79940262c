"""The live store's questions in the sidebar (issue 24, item 9), driven by AppTest without a server: nothing here
connects (a complete spec is only described until **Ask the store**).

- An upload survives ticking and unticking "Two tables" and clearing the table: the questions' inputs are drawn on
  every run, whatever else is missing (Streamlit drops the state of a widget a run does not draw).
- The questions may be the built-in ground truth, a typed path under an allowed root (single-user mode; one
  outside is refused with the allowed-roots message), an upload, or a configured ground truth; shared mode offers
  only the configured ones and the built-in one.
"""

from __future__ import annotations

import pytest
from conftest import ROOT, shown
from streamlit.testing.v1 import AppTest

from audit.groundtruth import BUILTIN_DATA, load_needles, load_out_of_domain

GOLDEN = ROOT / "tests" / "golden"
BUILTIN, PATH, UPLOAD = "\0built-in", "\0path", "\0upload"


def _script():
    import streamlit as st

    from ui.store_source import draw_store_inputs

    two = st.checkbox("Two tables", key="store_upgrade")
    draw_store_inputs("store", upgrade=two)


@pytest.fixture
def single_user(monkeypatch, tmp_path):
    """No audit.toml (single-user mode), a store from $AUDIT_STORE_URI that is never reached, the fast encoder."""
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("AUDIT_CONFIG", str(tmp_path / "audit.toml"))
    (tmp_path / "audit.toml").write_text("", encoding="utf-8")
    monkeypatch.setenv("AUDIT_STORE_URI", "postgresql://auditor:pw@127.0.0.1:1/rag")
    monkeypatch.setenv("AUDIT_MODEL", "hashing")
    monkeypatch.delenv("AUDIT_ROOTS", raising=False)
    return tmp_path


def _said(at) -> list[str]:
    return [shown(c) for c in at.caption if "needle" in shown(c)]


def _count(path, ood=None) -> str:
    needles = load_needles(path)
    return (f"{len(needles)} needles ({sum(len(n.questions) for n in needles)} questions) · "
            f"{len(load_out_of_domain(ood)) if ood else 0} out-of-domain")


def _app():
    at = AppTest.from_function(_script, default_timeout=60).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_an_upload_survives_two_tables_and_a_cleared_table(single_user):
    at = _app()
    at.text_input(key="store_table").input("chunks").run()
    at.selectbox(key="store_gt").set_value(UPLOAD).run()
    body = (GOLDEN / "gt.jsonl").read_bytes()
    at.file_uploader(key="store_gt_file").set_value(("mine.jsonl", body, "application/json")).run()

    def upload_kept() -> bool:  # drawn in this run, holding the file (a run that does not draw it drops it)
        return [u.value.name for u in at.file_uploader if u.key == "store_gt_file" and u.value] == ["mine.jsonl"]

    loaded = _count(GOLDEN / "gt.jsonl")
    assert upload_kept() and _said(at) == [loaded]
    # Ticked with "Table after the change" still empty: the run stops short of asking, yet draws the questions.
    at.checkbox(key="store_upgrade").check().run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.text_input(key="store_after").value == ""
    assert upload_kept()
    at.checkbox(key="store_upgrade").uncheck().run()
    assert upload_kept()
    # Clearing the table (the spec incomplete) keeps it too; typing it back finds the upload where it was.
    at.text_input(key="store_table").input("").run()
    assert upload_kept()
    at.text_input(key="store_table").input("chunks").run()
    assert upload_kept() and _said(at) == [loaded]  # and read: its needles are the questions
    assert [b.key for b in at.button] == ["store_go"]  # complete again: the store can be asked


def test_the_questions_may_be_the_built_in_ground_truth(single_user):
    at = _app()
    at.selectbox(key="store_gt").set_value(BUILTIN).run()
    assert not at.error
    # the needles and out-of-domain questions the built-in corpus ships with, as the built-in source reads them
    assert _said(at) == [_count(BUILTIN_DATA / "groundtruth.jsonl", BUILTIN_DATA / "out_of_domain.txt")]


def test_a_typed_path_under_an_allowed_root_is_read_and_one_outside_is_refused(single_user):
    at = _app()
    # no ground truth configured: the built-in one, a path, an upload (AppTest shows the options as formatted)
    assert at.selectbox(key="store_gt").options == ["built-in (python-reference's needles)", "a JSONL file on disk",
                                                   "upload a JSONL file"]
    at.selectbox(key="store_gt").set_value(PATH).run()
    at.text_input(key="store_gt_path").input("tests/golden/gt.jsonl")
    at.text_input(key="store_ood_path").input("tests/golden/ood.txt").run()
    assert not at.error and _said(at) == [_count(GOLDEN / "gt.jsonl", GOLDEN / "ood.txt")]
    outside = single_user / "elsewhere.jsonl"  # a temporary folder: not the working directory nor a root
    outside.write_bytes((GOLDEN / "gt.jsonl").read_bytes())
    at.text_input(key="store_gt_path").input(str(outside)).run()
    assert not at.exception
    assert [shown(e) for e in at.error] == [
        f"ground truth {str(outside)!r} is outside the folders this dashboard may read (the working directory, "
        "$AUDIT_HOME and what the operator configured); nothing was read. To allow it, add the line "
        f"`roots = [\"{outside.parent.resolve()}\"]` to audit.toml (the configuration file in use): it is read "
        "at each use, so the next click reads that folder, with no restart and no session lost. Or start the "
        f"dashboard with `AUDIT_ROOTS={outside.parent.resolve()} make run` (several folders: separated by ':')."]
    assert _said(at) == []
    # issue 54 item 2: the line added as said, in the same session (no restart): the next run reads the folder
    (single_user / "audit.toml").write_text(f'roots = ["{outside.parent.resolve()}"]\n', encoding="utf-8")
    at.run()
    assert not at.exception and not at.error and _said(at) == [_count(outside, GOLDEN / "ood.txt")]


def test_shared_mode_offers_only_the_configured_and_the_built_in_questions(single_user):
    (single_user / "audit.toml").write_text(
        f'shared = true\n[ground_truths]\ngolden = "{GOLDEN / "gt.jsonl"}"\n[out_of_domain]\ngolden = '
        f'"{GOLDEN / "ood.txt"}"\n[stores]\nvectors = "env:AUDIT_STORE_URI"\n', encoding="utf-8")
    at = _app()
    assert at.selectbox(key="store_gt").options == ["golden", "built-in (python-reference's needles)"]
    assert _said(at) == [_count(GOLDEN / "gt.jsonl", GOLDEN / "ood.txt")]  # the configured one, first
    assert not at.file_uploader and not [t for t in at.text_input if t.key in ("store_gt_path", "store_ood_path")]
