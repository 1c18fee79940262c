"""One saved threshold, one rule, everywhere (issue 22): a cut saved for the built-in run E/dense is the cut that
``report``, ``compare``, the Threshold page, Citations and the Upgrade diff apply to that run — and none of them
applies it to another strategy. The small corpus of tests/test_app.py; the cut is chosen off every sweep step."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from conftest import builtin_cut_key, shown
from test_app import SLIDER, _app, _default_db, test_env  # noqa: F401  (test_env: the app's corpus)

from audit.cli import main
from audit.evaluation.saved_cut import save_cut

pytestmark = pytest.mark.slow

CUT = 0.6125  # no 0.005 step and no balanced cut: only the saved file can put it there


@pytest.fixture()
def saved(test_env):  # noqa: F811 (the fixture)
    path = Path(test_env["AUDIT_HOME"]) / "threshold.json"
    path.unlink(missing_ok=True)
    save_cut(CUT, builtin_cut_key(test_env["AUDIT_CORPUS"]), "E/dense", path)
    yield test_env
    path.unlink(missing_ok=True)


def _report(env, tmp_path, strategy="E") -> dict:
    out = tmp_path / f"{strategy}.json"
    assert main(["report", "--corpus", env["AUDIT_CORPUS"], "--ground-truth", env["AUDIT_GROUND_TRUTH"],
                 "--out-of-domain", env["AUDIT_OUT_OF_DOMAIN"], "--model", "hashing", "--reranker", "none",
                 "--strategies", strategy, "--retrievers", "dense", "--json", str(out), "--quiet"]) == 0
    return json.loads(out.read_text(encoding="utf-8"))["threshold"][f"{strategy}/dense"]


def test_report_applies_it_to_its_run_only(saved, tmp_path):
    t = _report(saved, tmp_path)
    assert (t["cut"], t["how"]) == (CUT, "saved")
    other = _report(saved, tmp_path, "C")  # chosen on E: offered to C, never applied
    assert other["how"] == "balanced" and other["cut"] != CUT
    assert [o["cut"] for o in other["offered"]] == [CUT]


def test_the_pages_apply_it(saved):
    at = _app("app_pages/5_Threshold.py")
    assert at.slider(key=SLIDER).value == CUT
    assert any(f"At {CUT:.4g} (the saved threshold)" in shown(c) for c in at.caption)
    at.switch_page("app_pages/7_Citations.py").run()
    assert any(f"< {CUT:.4g} (saved threshold {CUT:.4g}" in shown(i) for i in at.info)
    at.selectbox(key="focus_strategy").set_value("C").run()  # another run: its balanced cut, the saved one offered
    assert any("the balanced cut" in shown(i) and f"saved for other configurations: {CUT:.4g}" in shown(i)
               for i in at.info)


def test_compare_and_the_upgrade_diff_apply_the_before_runs_cut(saved, capsys):
    home = Path(saved["AUDIT_HOME"])
    _app()  # the dashboard's own index of the corpus
    for name in ("before.sqlite", "after.sqlite"):
        a, b = sqlite3.connect(str(_default_db(saved))), sqlite3.connect(str(home / name))
        a.backup(b)
        a.close()
        b.close()
    capsys.readouterr()
    assert main(["compare", str(home / "before.sqlite"), str(home / "after.sqlite"), "--strategy", "E",
                 "--ground-truth", saved["AUDIT_GROUND_TRUTH"], "--out-of-domain", saved["AUDIT_OUT_OF_DOMAIN"]]) == 0
    assert f"At threshold {CUT:.3f} (saved" in capsys.readouterr().out
    at = _app("app_pages/9_Upgrade_diff.py")
    at.text_input(key="diff_old").input("before.sqlite").run()
    at.text_input(key="diff_new").input("after.sqlite").run()
    at.selectbox(key="diff_index").set_value("E").run()
    assert not at.exception, [e.value for e in at.exception]
    assert any(f"Outcomes at the cut {CUT:.4g} cosine distance (the threshold saved for before" in shown(c)
               for c in at.caption)
    at.number_input(key="diff_cut").set_value(0.3).run()  # typed: that cut on both sides
    assert any("Outcomes at the cut 0.3 cosine distance (typed here" in shown(c) for c in at.caption)
